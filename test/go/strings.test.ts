/**
 * goTrimSpace is Go's strings.TrimSpace, not JavaScript's trim: the two disagree on U+0085
 * (Go trims it) and U+FEFF (JS trims it). A source range padded with U+0085 once validated
 * and was then dropped, so a LoadBalancer lost its firewall.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareStrings, goTrimSpace, isGoSpace } from '../../src/go/strings.js';

/** unicode.IsSpace as Go defines it (the Go documentation's list). */
const GO_SPACES = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000];

function jsTrims(cp: number): boolean {
  return String.fromCodePoint(cp).trim() === '';
}

describe('goTrimSpace', () => {
  it('trims exactly the characters Go trims, over the whole BMP', () => {
    const got: number[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) if (isGoSpace(cp)) got.push(cp);
    expect(got).toEqual(GO_SPACES);
  });

  it('differs from JavaScript trim exactly on U+0085 (Go only) and U+FEFF (JS only)', () => {
    const goOnly: number[] = [];
    const jsOnly: number[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const s = `x${String.fromCodePoint(cp)}`;
      const go = goTrimSpace(s) === 'x';
      const js = jsTrims(cp);
      if (go && !js) goOnly.push(cp);
      if (js && !go) jsOnly.push(cp);
    }
    expect(goOnly).toEqual([0x85]);
    expect(jsOnly).toEqual([0xfeff]);
  });

  it('trims both ends and keeps inner spaces', () => {
    expect(goTrimSpace('\u0085 203.0.113.0/24\u0085\u3000')).toBe('203.0.113.0/24');
    expect(goTrimSpace('\ufeff10.0.0.0/8')).toBe('\ufeff10.0.0.0/8');
    expect(goTrimSpace('a b')).toBe('a b');
    expect(goTrimSpace('   ')).toBe('');
  });

  // The list above is Go's documentation; when Go is installed, ask Go itself.
  const hasGo = spawnSync('go', ['version']).status === 0;
  it.skipIf(!hasGo)('agrees with Go\'s unicode.IsSpace and strings.TrimSpace on every code point', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpc-gospace-'));
    try {
      writeFileSync(join(dir, 'main.go'), `package main
import ("fmt"; "strings"; "unicode")
func main() {
  for r := rune(0); r <= 0x10ffff; r++ {
    if r >= 0xd800 && r <= 0xdfff { continue }
    if unicode.IsSpace(r) != (strings.TrimSpace("x"+string(r)) == "x") { panic("inconsistent") }
    if unicode.IsSpace(r) { fmt.Println(r) }
  }
}
`);
      const out = execFileSync('go', ['run', 'main.go'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GOFLAGS: '-mod=mod', GO111MODULE: 'off' } });
      expect(out.trim().split('\n').map(Number)).toEqual(GO_SPACES);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('compareStrings (Go\'s string order: UTF-8 bytes)', () => {
  // Samples that meet at every boundary where UTF-16 and UTF-8 orders could part.
  const pieces = ['', 'a', 'b', 'A', '-', '.', '0', '~', '\u007f', '\u0080', '\u00e9', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffee', '\uffff', '\u{10000}', '\u{1f600}', '\u{10ffff}'];
  const samples: string[] = [];
  for (const p of pieces) for (const q of pieces) samples.push(`${p}${q}`, `x${p}y${q}`);

  it('is the order of the UTF-8 bytes (Buffer.compare) on every pair of samples', () => {
    const bytes = samples.map((t) => Buffer.from(t, 'utf8'));
    const wrong: string[] = [];
    let pairs = 0;
    samples.forEach((a, i) => {
      samples.forEach((b, j) => {
        pairs++;
        if (compareStrings(a, b) !== Math.sign(Buffer.compare(bytes[i]!, bytes[j]!))) wrong.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      });
    });
    expect(pairs).toBe(samples.length ** 2);
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it('puts a character above U+FFFF after U+E000-U+FFFF, where JavaScript\'s < puts it before', () => {
    expect('\u{1f600}' < '\uffee').toBe(true);
    expect(compareStrings('\u{1f600}', '\uffee')).toBe(1);
    expect(compareStrings('\uffee', '\u{1f600}')).toBe(-1);
    expect(compareStrings('\u{1f600}', '\ud7ff')).toBe(1);
  });

  it('is locale-free byte order on ASCII: upper case, then lower; a prefix first', () => {
    expect(['b', 'B', 'a-b', 'ab', 'a', 'A', '10', '9'].sort(compareStrings)).toEqual(['10', '9', 'A', 'B', 'a', 'a-b', 'ab', 'b']);
  });

  const hasGo = spawnSync('go', ['version']).status === 0;
  it.skipIf(!hasGo)('sorts as Go\'s sort.Strings does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpc-gosort-'));
    try {
      writeFileSync(join(dir, 'in.json'), JSON.stringify(samples));
      writeFileSync(join(dir, 'main.go'), `package main
import ("encoding/json"; "os"; "sort")
func main() {
  var s []string
  b, _ := os.ReadFile("in.json")
  if err := json.Unmarshal(b, &s); err != nil { panic(err) }
  sort.Strings(s)
  out, _ := json.Marshal(s)
  os.Stdout.Write(out)
}
`);
      const out = execFileSync('go', ['run', 'main.go'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GOFLAGS: '-mod=mod', GO111MODULE: 'off' } });
      expect([...samples].sort(compareStrings)).toEqual(JSON.parse(out));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

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
import { goTrimSpace, isGoSpace } from '../../src/go/strings.js';

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

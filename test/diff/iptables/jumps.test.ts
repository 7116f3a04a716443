/**
 * scanServiceJump (src/diff/iptables/jumps.ts) against the rule parser: whenever the scan is
 * sure, its per-service chain jump is the parser's, over every rule of the iptables golden
 * outputs and over random rules made of the words that could mislead it (quotes next to
 * words, goto, two targets, options after a chain, backslashes, tabs, double blanks).
 */

import { describe, expect, it } from 'vitest';
import { commentedServiceJumps, scanChainText, scanComment, scanServiceJump, serviceJumps, UNSURE } from '../../../src/diff/iptables/jumps.js';
import { isServiceChain, readState, RuleFacts, TextChain } from '../../../src/diff/iptables/state.js';
import { parseRuleArgs, TARGET_EXTENSIONS } from '../../../src/lang/iptables/parse-rule.js';
import { tokenize } from '../../../src/lang/iptables/tokenize.js';
import { loadGoldenCases } from '../../helpers/fixtures.js';

/** The parser's per-service chain jump of a rule, or 'refused' when it does not parse. */
function parsed(spec: string): string | undefined | 'refused' {
  try {
    const r = parseRuleArgs(tokenize(spec), (name) => !TARGET_EXTENSIONS.has(name));
    return r.target?.kind === 'chain' && isServiceChain(r.target.chain) ? r.target.chain : undefined;
  } catch {
    return 'refused';
  }
}

/** The parser's comment of a rule, or 'refused' when it does not parse. */
function parsedComment(spec: string): string | undefined | 'refused' {
  try {
    return parseRuleArgs(tokenize(spec), (name) => !TARGET_EXTENSIONS.has(name)).comment;
  } catch {
    return 'refused';
  }
}

const goldenLines = loadGoldenCases()
  .filter((c) => c.expectedOut !== undefined && /^\*filter\n/.test(c.expectedOut))
  .map((c) => c.expectedOut!.split('\n').filter((l) => l.startsWith('-A ')));
const rules = goldenLines.flat().map((l) => l.slice(l.indexOf(' ', 3) + 1));

/** Each golden output's chains as texts (`-A NAME ...\n` lines), the way a built chain holds them. */
const goldenChains = goldenLines.flatMap((lines) => {
  const texts = new Map<string, string>();
  for (const l of lines) {
    const name = l.slice(3, l.indexOf(' ', 3));
    texts.set(name, (texts.get(name) ?? '') + l + '\n');
  }
  return [...texts];
});

/** The line scan's jumps of a chain text, a line it is unsure of parsed; 'refused' when one does not parse. */
function lineByLine(name: string, text: string): string[] | 'refused' {
  const out: string[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    const spec = line.slice(`-A ${name} `.length);
    let jump = scanServiceJump(spec);
    if (jump === UNSURE) {
      const p = parsed(spec);
      if (p === 'refused') return 'refused';
      jump = p;
    }
    if (jump !== undefined) out.push(jump);
  }
  return out;
}

// Clauses of real rules and targets, and the glue between them, that could mislead a scan:
// quotes next to words, goto, two targets, options after a chain, backslashes, tabs, double blanks.
const CLAUSES = ['-m comment --comment "a b"', '-m comment --comment ns/a:p', '-m comment --comment "-j KUBE-SVC-AAAAAAAAAAAAAAAA"', '-m comment --comment "x"-j',
  '-s 10.0.0.0/8', '! -s 10.0.0.0/8', '-p tcp --dport 80', '-m recent --set --name KUBE-SEP-CCCCCCCCCCCCCCCC', '-m mark --mark 0x1', '-c 1 2', '-m -j', '"KUBE-SVC-"BBBBBBBBBBBBBBBB',
  '-m comment --comment "ns/a:p cluster IP"', '-m comment ! --comment x', '-m COMMENT --comment y', '--comment z', '-m comment --comment', '-m comment --comment "x"y',
  '-m comment --comment a --foo b', '-m comment --comment a b', '-m comment --comment !', '-m comment --comment -x', '-m comment --comment "--comment q"', '-m -m comment --comment w'];
const TARGETS = ['-j KUBE-SVC-AAAAAAAAAAAAAAAA', '-j KUBE-SEP-CCCCCCCCCCCCCCCC', '-j KUBE-EXT-DDDDDDDDDDDDDDDD', '-g KUBE-SVC-AAAAAAAAAAAAAAAA', '--jump KUBE-SEP-CCCCCCCCCCCCCCCC',
  '--goto KUBE-FW-EEEEEEEEEEEEEEEE', '-j DNAT --to-destination 10.0.0.1:80', '-j ACCEPT', '-j KUBE-MARK-MASQ', '', '-j "KUBE-SVC-AAAAAAAAAAAAAAAA"',
  '-j KUBE-SVC-AAAAAAAAAAAAAAAA -j ACCEPT', '-j KUBE-SVC-AAAAAAAAAAAAAAAA --to 1', '-j "x"', '-j', '-j KUBE-SVC-"AAAAAAAAAAAAAAAA"', '-j REJECT --reject-with icmp-port-unreachable', '-jKUBE-SVC-AAAAAAAAAAAAAAAA'];
const GLUE = [' ', ' ', ' ', ' ', ' ', ' ', '  ', '\t', '', ' \\ ', '"'];

/** Random rule arguments (`spec`s) made of CLAUSES, TARGETS and GLUE, from one seed. */
function randomSpecs(seed: number) {
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  return {
    rand,
    next(): string {
      const parts = [...Array.from({ length: Math.floor(rand() * 3) }, () => pick(CLAUSES)), pick(TARGETS)];
      if (rand() < 0.3) parts.splice(Math.floor(rand() * parts.length), 0, pick(TARGETS)); // a target in the middle
      let spec = parts[0]!;
      for (const p of parts.slice(1)) spec += (rand() < 0.8 ? ' ' : pick(GLUE)) + p;
      return spec;
    },
  };
}

describe('scanServiceJump', () => {
  it(`gives the parser's jump for every rule of the golden outputs (${rules.length}), and is sure of nearly all`, () => {
    expect(rules.length).toBeGreaterThan(1000);
    let unsure = 0;
    for (const spec of rules) {
      const scan = scanServiceJump(spec);
      if (scan === UNSURE) {
        unsure++;
        continue;
      }
      expect(scan, spec).toBe(parsed(spec));
    }
    expect(unsure / rules.length).toBeLessThan(0.01);
  });

  it('gives the parser\'s jump, when sure, for 200,000 random rules of misleading words', () => {
    const specs = randomSpecs(7);
    let sure = 0;
    let sureJumps = 0;
    for (let k = 0; k < 200_000; k++) {
      const spec = specs.next();
      const scan = scanServiceJump(spec);
      if (scan === UNSURE) continue;
      const want = parsed(spec);
      if (want === 'refused') continue; // kpc's own rules parse; the scan is used only on them
      sure++;
      if (scan !== undefined) sureJumps++;
      expect(scan, JSON.stringify(spec)).toBe(want);
    }
    expect(sure).toBeGreaterThan(20_000);
    expect(sureJumps).toBeGreaterThan(5_000);
  });
});

describe('serviceJumps', () => {
  it('of a chain read from a file is the parser\'s (its errors stay where they were)', () => {
    const text = '*filter\nCOMMIT\n*nat\n:KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]\n:KUBE-SEP-CCCCCCCCCCCCCCCC - [0:0]\n-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-CCCCCCCCCCCCCCCC --no-such-option\nCOMMIT\n';
    const chain = readState(text, new RuleFacts('IPv4')).get('nat')!.get('KUBE-SVC-AAAAAAAAAAAAAAAA')!;
    expect(() => serviceJumps(chain)).toThrow(expect.objectContaining({ message: expect.stringMatching(/^options after a jump to chain/), at: { file: '', line: 6 } }));
  });

  it('of a chain built by kpc scans its text, and parses only the rules it is unsure of', () => {
    const rules = ['-m comment --comment "ns/a:p -> 10.0.0.1:80" -j KUBE-SEP-CCCCCCCCCCCCCCCC', '-j KUBE-MARK-MASQ', '--jump KUBE-SEP-DDDDDDDDDDDDDDDD', '-m comment --comment ns/a:p -j DNAT --to-destination 10.0.0.1:80'];
    const chain = new TextChain('KUBE-SVC-AAAAAAAAAAAAAAAA', false, rules.map((r) => `-A KUBE-SVC-AAAAAAAAAAAAAAAA ${r}\n`).join(''), new RuleFacts('IPv4'), 0);
    expect(chain.built).toBe(true);
    expect(serviceJumps(chain)).toEqual(['KUBE-SEP-CCCCCCCCCCCCCCCC', 'KUBE-SEP-DDDDDDDDDDDDDDDD']);
  });
});

describe('scanChainText', () => {
  it(`gives the line scan's jumps for every chain of the golden outputs (${goldenChains.length}), and is sure of nearly all`, () => {
    expect(goldenChains.length).toBeGreaterThan(300);
    let unsure = 0;
    for (const [name, text] of goldenChains) {
      const scan = scanChainText(text);
      if (scan === UNSURE) {
        unsure++;
        continue;
      }
      expect(scan, text).toEqual(lineByLine(name, text));
    }
    expect(unsure / goldenChains.length).toBeLessThan(0.01);
  });

  it('gives the line scan\'s jumps, when sure, for 50,000 random chains of misleading rules', () => {
    const specs = randomSpecs(11);
    let sure = 0;
    let sureJumps = 0;
    for (let k = 0; k < 50_000; k++) {
      const name = specs.rand() < 0.02 ? '-j' : 'KUBE-SVC-ZZZZZZZZZZZZZZZZ';
      const lines = Array.from({ length: 1 + Math.floor(specs.rand() * 3) }, () => `-A ${name} ${specs.next()}\n`);
      const text = lines.join('');
      const scan = scanChainText(text);
      if (scan === UNSURE) continue;
      const want = lineByLine(name, text);
      if (want === 'refused') continue; // kpc's own rules parse; the scan is used only on them
      sure++;
      if (scan.length > 0) sureJumps++;
      expect(scan, JSON.stringify(text)).toEqual(want);
    }
    expect(sure).toBeGreaterThan(3_000);
    expect(sureJumps).toBeGreaterThan(1_000);
  });
});

describe('scanComment', () => {
  it(`gives the parser's comment for every rule of the golden outputs (${rules.length}) that has one, and is sure of nearly all`, () => {
    let unsure = 0;
    for (const spec of rules) {
      const scan = scanComment(spec);
      if (scan === UNSURE) {
        unsure++;
        continue;
      }
      expect(scan, spec).toBe(parsedComment(spec));
    }
    expect(unsure / rules.length).toBeLessThan(0.01);
  });

  it('gives the parser\'s comment, when sure, for 200,000 random rules of misleading words', () => {
    const specs = randomSpecs(13);
    let sure = 0;
    let sureComments = 0;
    for (let k = 0; k < 200_000; k++) {
      const spec = specs.next();
      const scan = scanComment(spec);
      if (scan === UNSURE) continue;
      const want = parsedComment(spec);
      if (want === 'refused') continue;
      sure++;
      if (scan !== undefined) sureComments++;
      expect(scan, JSON.stringify(spec)).toBe(want);
    }
    expect(sure).toBeGreaterThan(20_000);
    expect(sureComments).toBeGreaterThan(5_000);
  });
});

describe('commentedServiceJumps', () => {
  it('of a built chain is the parser\'s commented per-service jumps, scanned or parsed', () => {
    const rules = ['-m comment --comment "ns/a:p cluster IP" -m tcp -p tcp -d 10.0.0.1 --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA', '-j KUBE-SVC-BBBBBBBBBBBBBBBB',
      '-m comment --comment ns/b:q -m tcp -p tcp --dport 30000 -j KUBE-EXT-CCCCCCCCCCCCCCCC', '-m comment --comment "ns/c:r" --jump KUBE-SVC-DDDDDDDDDDDDDDDD',
      '-m comment --comment "a" -m comment --comment b -j KUBE-SVC-EEEEEEEEEEEEEEEE', '-m comment --comment "ns/d:s" -j ACCEPT'];
    const text = rules.map((r) => `-A KUBE-SERVICES ${r}\n`).join('');
    const built = new TextChain('KUBE-SERVICES', false, text, new RuleFacts('IPv4'), 0);
    const read = new TextChain('KUBE-SERVICES', false, text, new RuleFacts('IPv4'), 1);
    const want = [['ns/a:p cluster IP', 'KUBE-SVC-AAAAAAAAAAAAAAAA'], ['ns/b:q', 'KUBE-EXT-CCCCCCCCCCCCCCCC'], ['ns/c:r', 'KUBE-SVC-DDDDDDDDDDDDDDDD'], ['a b', 'KUBE-SVC-EEEEEEEEEEEEEEEE']];
    expect(commentedServiceJumps(built)).toEqual(want);
    expect(commentedServiceJumps(read)).toEqual(want);
  });
});

/**
 * scanServiceJump (src/diff/iptables/jumps.ts) against the rule parser: whenever the scan is
 * sure, its per-service chain jump is the parser's, over every rule of the iptables golden
 * outputs and over random rules made of the words that could mislead it (quotes next to
 * words, goto, two targets, options after a chain, backslashes, tabs, double blanks).
 */

import { describe, expect, it } from 'vitest';
import { scanServiceJump, serviceJumps, UNSURE } from '../../../src/diff/iptables/jumps.js';
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

const rules = loadGoldenCases()
  .filter((c) => c.expectedOut !== undefined && /^\*filter\n/.test(c.expectedOut))
  .flatMap((c) => c.expectedOut!.split('\n').filter((l) => l.startsWith('-A ')).map((l) => l.slice(l.indexOf(' ', 3) + 1)));

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
    // Clauses of real rules, then a target, joined by blanks or glued together, with now and
    // then a tab, a double blank or a backslash.
    const clauses = ['-m comment --comment "a b"', '-m comment --comment ns/a:p', '-m comment --comment "-j KUBE-SVC-AAAAAAAAAAAAAAAA"', '-m comment --comment "x"-j',
      '-s 10.0.0.0/8', '! -s 10.0.0.0/8', '-p tcp --dport 80', '-m recent --set --name KUBE-SEP-CCCCCCCCCCCCCCCC', '-m mark --mark 0x1', '-c 1 2', '-m -j', '"KUBE-SVC-"BBBBBBBBBBBBBBBB'];
    const targets = ['-j KUBE-SVC-AAAAAAAAAAAAAAAA', '-j KUBE-SEP-CCCCCCCCCCCCCCCC', '-j KUBE-EXT-DDDDDDDDDDDDDDDD', '-g KUBE-SVC-AAAAAAAAAAAAAAAA', '--jump KUBE-SEP-CCCCCCCCCCCCCCCC',
      '--goto KUBE-FW-EEEEEEEEEEEEEEEE', '-j DNAT --to-destination 10.0.0.1:80', '-j ACCEPT', '-j KUBE-MARK-MASQ', '', '-j "KUBE-SVC-AAAAAAAAAAAAAAAA"',
      '-j KUBE-SVC-AAAAAAAAAAAAAAAA -j ACCEPT', '-j KUBE-SVC-AAAAAAAAAAAAAAAA --to 1', '-j "x"', '-j', '-j KUBE-SVC-"AAAAAAAAAAAAAAAA"', '-j REJECT --reject-with icmp-port-unreachable'];
    const glue = [' ', ' ', ' ', ' ', ' ', ' ', '  ', '\t', '', ' \\ ', '"'];
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    let sure = 0;
    let sureJumps = 0;
    for (let k = 0; k < 200_000; k++) {
      const parts = [...Array.from({ length: Math.floor(rand() * 3) }, () => pick(clauses)), pick(targets)];
      if (rand() < 0.3) parts.splice(Math.floor(rand() * parts.length), 0, pick(targets)); // a target in the middle
      let spec = parts[0]!;
      for (const p of parts.slice(1)) spec += (rand() < 0.8 ? ' ' : pick(glue)) + p;
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

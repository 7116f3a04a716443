/**
 * The destination screen (lang/iptables/destination-screen.ts): a rule it says a packet to an
 * address cannot match must be one whose parsed matches cannot match it — checked against the
 * reader's own parse of every rule of the fixtures — and the lazy chain's ruleFor skips only
 * those.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { excludesDestination } from '../../../src/lang/iptables/destination-screen.js';
import { addressMatches } from '../../../src/lang/iptables/address.js';
import { LazyChain } from '../../../src/lang/iptables/lazy-chain.js';
import type { Rule } from '../../../src/lang/iptables/model.js';
import { readRules } from '../../../src/lang/iptables/read.js';
import { parseIP, type IP } from '../../../src/net/ip.js';
import { KpcError } from '../../../src/errors.js';
import { iptablesTexts } from '../../helpers/fixtures.js';

function ip(text: string): IP {
  return parseIP(text)!.ip;
}

/** What the tracer's evaluation says of the rule's core destination matches for a packet to `to`. */
function destinationCanMatch(rule: Rule, to: IP): boolean {
  return rule.matches.every((m) => m.kind !== 'address' || m.which !== 'destination' || m.negated !== m.addresses.some((a) => addressMatches(a, to)));
}

/** The rule text after `-A CHAIN`, as LazyChain hands it to the screen. */
function argsOf(line: string): string | undefined {
  const m = /^-A \S+( .*)$/.exec(line);
  return m?.[1];
}

describe('excludesDestination', () => {
  const to = ip('10.96.0.10');

  it('a plain -d of another host excludes; of this host, or a network holding it, does not', () => {
    expect(excludesDestination(' -m tcp -p tcp -d 10.96.0.11 --dport 80 -j KUBE-SVC-X', to)).toBe(true);
    expect(excludesDestination(' -d 10.96.0.11/32 -j KUBE-SVC-X', to)).toBe(true);
    expect(excludesDestination(' -d 10.96.0.10 -j KUBE-SVC-X', to)).toBe(false);
    expect(excludesDestination(' -d 10.96.0.10/32 -j KUBE-SVC-X', to)).toBe(false);
    expect(excludesDestination(' -d 10.96.0.0/16 -j KUBE-SVC-X', to)).toBe(false);
    expect(excludesDestination(' -d 10.97.0.0/16 -j KUBE-SVC-X', to)).toBe(true);
    expect(excludesDestination(' -d fd00::1 -j KUBE-SVC-X', to)).toBe(true);
    expect(excludesDestination(' -d fd00::1 -j KUBE-SVC-X', ip('fd00::1'))).toBe(false);
    expect(excludesDestination(' -d fd00::2/128 -j KUBE-SVC-X', ip('fd00::1'))).toBe(true);
  });

  it('anything it does not read plainly is left to the parse', () => {
    const left = [
      ' -j KUBE-SVC-X', // no -d
      ' ! -d 10.96.0.11 -j ACCEPT',
      ' -d ! 10.96.0.11 -j ACCEPT',
      ' -d 10.96.0.11,10.96.0.12 -j ACCEPT',
      ' -d "10.96.0.11" -j ACCEPT',
      ' -m comment --comment "to -d 10.96.0.11 only" -j ACCEPT',
      ' -i eth0 -d 10.96.0.11 -j ACCEPT',
      ' -d 10.96.0.11 -o eth0 -j ACCEPT',
      ' --in-interface eth0 -d 10.96.0.11 -j ACCEPT',
      ' -d\t10.96.0.11 -j ACCEPT',
      ' -m comment --comment "a \\" quote" -d 10.96.0.11 -j ACCEPT',
      ' -d  10.96.0.11 -j ACCEPT',
      ' -d host.example -j ACCEPT',
      ' --destination 10.96.0.11 -j ACCEPT',
    ];
    for (const args of left) expect(excludesDestination(args, to), args).toBe(false);
  });

  it('is never wrong about a rule of the fixtures (kube-proxy\'s and kpc\'s), against the rule as parsed', () => {
    const files = iptablesTexts();
    let excluded = 0;
    let kept = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      let rules: Rule[];
      try {
        rules = [...readRules(text).tables.values()].flatMap((t) => [...t.chains.values()].flatMap((c) => c.rules));
      } catch {
        continue;
      }
      const lines = text.split('\n');
      // Each rule's own destination, its neighbours, and addresses no rule names.
      const destinations = new Set(['10.96.0.10', '10.0.0.1', '192.168.0.2', '127.0.0.1', 'fd00::1', '::1']);
      for (const line of lines) for (const m of line.matchAll(/ -d (\d+)\.(\d+)\.(\d+)\.(\d+)/g)) {
        destinations.add(`${m[1]}.${m[2]}.${m[3]}.${m[4]}`);
        destinations.add(`${m[1]}.${m[2]}.${m[3]}.${(Number(m[4]) + 1) % 256}`);
      }
      const addresses = [...destinations].map(ip);
      for (const rule of rules) {
        const args = argsOf(lines[rule.line - 1]!);
        if (args === undefined) continue;
        for (const to of addresses) {
          if (excludesDestination(args, to)) {
            expect(destinationCanMatch(rule, to), `${f}:${rule.line} to ${to.bytes.join('.')}`).toBe(false);
            excluded++;
          } else kept++;
        }
      }
    }
    expect(excluded).toBeGreaterThan(2_000);
    expect(kept).toBeGreaterThan(1_000);
  });
});

describe('LazyChain.ruleFor', () => {
  const text = '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-A - [0:0]\n-A KUBE-SERVICES -d 10.96.0.1 ! ! -p tcp -j KUBE-SVC-A\n-A KUBE-SERVICES -d 10.96.0.10 -j KUBE-SVC-A\n-A KUBE-SERVICES -j KUBE-NOWHERE\nCOMMIT\n';

  it('parses a rule alone, at its index, and passes by one whose -d excludes the packet, errors and all', () => {
    const rs = readRules(text, { lazy: true });
    const chain = rs.tables.get('nat')!.chains.get('KUBE-SERVICES');
    expect(chain).toBeInstanceOf(LazyChain);
    const lazy = chain as LazyChain;
    expect(lazy.count).toBe(3);
    expect(lazy.ruleFor(0, ip('10.96.0.10'))).toBeUndefined();
    expect(lazy.ruleFor(1, ip('10.96.0.10'))).toMatchObject({ index: 2, line: 5, target: { kind: 'chain', chain: 'KUBE-SVC-A' } });
    expect(rs.warnings).toEqual([]);
    expect(lazy.ruleFor(2, ip('10.96.0.10'))).toMatchObject({ index: 3, line: 6 });
    expect(rs.warnings).toEqual(['line 6: jump to chain KUBE-NOWHERE, which is not declared in table nat']);
    // The bad rule is parsed, and refused, when the packet could match it, or all rules are asked for.
    const refused = (read: () => unknown) => {
      try {
        read();
      } catch (e) {
        expect(e).toBeInstanceOf(KpcError);
        return (e as KpcError).at?.line;
      }
      return undefined;
    };
    expect(refused(() => lazy.ruleFor(0, ip('10.96.0.1')))).toBe(4);
    expect(refused(() => lazy.rules)).toBe(4);
  });

  it('rules read one by one and then all at once are the eager reading\'s', () => {
    const good = text.replace(' ! !', '');
    const rs = readRules(good, { lazy: true });
    const lazy = rs.tables.get('nat')!.chains.get('KUBE-SERVICES') as LazyChain;
    const one = lazy.ruleFor(1);
    expect(lazy.rules[1]).toBe(one);
    expect(lazy.rules.map((r) => ({ ...r }))).toEqual(readRules(good).tables.get('nat')!.chains.get('KUBE-SERVICES')!.rules.map((r) => ({ ...r })));
  });
});

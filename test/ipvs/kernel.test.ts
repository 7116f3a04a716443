/**
 * Every IPVS golden loads on this machine's kernel, inside throwaway network namespaces
 * (test/netns/lab.ts):
 *
 *   1. `ipset restore` < expected/ipset.rules must succeed, twice (the file is idempotent),
 *      and `ipset save` must then hold exactly the file's sets and entries;
 *   2. with those sets in place, expected/iptables.rules must pass `iptables-restore --test`
 *      (ip6tables for IPv6 cases) and really load with `--noflush`, twice.
 *
 * This machine has no IPVS kernel module, so the `ipvs` match of KUBE-IPVS-OUT-FILTER cannot
 * be loaded: when a probe shows the match missing, those rules are checked by `--test` only and
 * left out of the real load (reported). ipvs.rules needs ip_vs and is checked elsewhere (the
 * qemu VM harness).
 */

import { expect, it } from 'vitest';
import { describeLab, describeFailure, iptablesRestoreLoad, iptablesRestoreTest, nsExec, withNetns, type IpFamily } from '../netns/lab.js';
import { loadGoldenCases } from '../helpers/fixtures.js';
import { parseCaseFlags } from './helpers/compile-case.js';

const cases = loadGoldenCases(undefined, { bundles: true }).filter((c) => c.expectedFiles?.['ipset.rules'] !== undefined && c.expectedFiles['iptables.rules'] !== undefined);

/** `ipset save` without the kernel's own additions, one sorted list of lines per set. */
function normaliseSave(text: string): Map<string, string[]> {
  const sets = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/ bucketsize \d+ initval 0x[0-9a-f]+/, '').trim();
    if (line === '') continue;
    const [verb, name] = line.split(' ');
    if (!sets.has(name!)) sets.set(name!, []);
    // ipset prints host-length CIDRs without their prefix.
    sets.get(name!)!.push(verb === 'add' ? line.replace(/\/(32|128)$/, '') : line);
  }
  for (const lines of sets.values()) lines.sort();
  return sets;
}

/** What ipset.rules asks for, in the same shape (flush lines and -exist dropped). */
function expectedSets(rules: string): Map<string, string[]> {
  const kept = rules
    .split('\n')
    .filter((l) => l.startsWith('create ') || l.startsWith('add '))
    .map((l) => l.replace(/ -exist$/, ''));
  return normaliseSave(kept.join('\n'));
}

let ipvsMatch: boolean | undefined;
async function hasIpvsMatch(): Promise<boolean> {
  if (ipvsMatch === undefined) {
    const probe = '*filter\n:KPC-PROBE - [0:0]\n-A KPC-PROBE -m ipvs --vaddr 192.0.2.1 --vproto tcp --vport 80 -j DROP\nCOMMIT\n';
    ipvsMatch = (await withNetns('ipvsprb', (ns) => iptablesRestoreLoad(ns, probe, 'ipv4'))).code === 0;
    if (!ipvsMatch) console.info('ipvs kernel test: no `-m ipvs` match on this kernel; KUBE-IPVS-OUT-FILTER rules are checked with --test only');
  }
  return ipvsMatch;
}

describeLab('IPVS goldens load with ipset restore and iptables-restore', { commands: ['ipset', 'iptables-restore', 'ip6tables-restore'] }, () => {
  it(`finds the bundle goldens (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  for (const c of cases) {
    it(c.name, { timeout: 30_000 }, async () => {
      const family: IpFamily = parseCaseFlags(c.args).ipFamily === 'ipv6' ? 'ipv6' : 'ipv4';
      const ipsetRules = c.expectedFiles!['ipset.rules']!;
      const iptablesRules = c.expectedFiles!['iptables.rules']!;
      const withIpvs = await hasIpvsMatch();
      await withNetns('ipvsgold', async (ns) => {
        for (const round of [1, 2]) {
          const r = await nsExec(ns, ['ipset', 'restore'], { input: ipsetRules });
          expect(r.code, describeFailure(`ipset restore (round ${round})`, r)).toBe(0);
        }
        const saved = await nsExec(ns, ['ipset', 'save']);
        expect(saved.code, describeFailure('ipset save', saved)).toBe(0);
        expect(normaliseSave(saved.stdout)).toEqual(expectedSets(ipsetRules));

        const test = await iptablesRestoreTest(ns, iptablesRules, family);
        expect(test.code, describeFailure('iptables-restore --test', test)).toBe(0);
        const loadable = withIpvs ? iptablesRules : iptablesRules.split('\n').filter((l) => !l.includes(' -m ipvs ')).join('\n');
        for (const round of [1, 2]) {
          const load = await iptablesRestoreLoad(ns, loadable, family);
          expect(load.code, describeFailure(`iptables-restore --noflush (round ${round})`, load)).toBe(0);
        }
      });
    });
  }
});

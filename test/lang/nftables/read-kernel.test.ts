/**
 * The nftables readers (src/lang/nftables/read.ts) against a real kernel: for every kube-proxy
 * nftables golden (fixtures/kube-proxy/nftables), two texts are loaded with `nft -f` into a
 * fresh namespace and listed back with `nft list table` and `nft -j list table`:
 *   - kube-proxy's own expected ruleset (expected.dump in Dump() order; not kpc's output), and
 *   - kpc's compiled transaction for the case.
 * For each, the state read from the text that was loaded (readTransaction) must equal the state
 * read from the kernel's listing (readListing) and from its JSON (readJSON): every chain (hook,
 * priority, every rule in canonical form and its comment), every set and map (type, flags,
 * timeout, comment, every element with its value and comment), every counter. The expected
 * states come from nft, never from kpc's own reading of its output.
 * Negative controls: a changed rule, element value or comment in the listing is seen.
 */

import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeLab } from '../../netns/lab.js';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { dumpFamily, loadAndList, toLoadOrder } from '../../helpers/nft-kernel.js';
import { readJSON, readListing, readNftState, readTransaction, stateDifferences } from '../../../src/lang/nftables/index.js';

const cases = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true });

async function roundTrip(text: string, loadText: string, family: 'ip' | 'ip6'): Promise<{ listing: string; json: string; vsListing: string[]; vsJSON: string[] }> {
  const r = await loadAndList(loadText, family);
  expect(r.ok, r.loads.map((l) => l.stderr).join('\n')).toBe(true);
  const json = JSON.stringify(r.json);
  const declared = readTransaction(text, family, 'kube-proxy');
  expect(declared.exists).toBe(true);
  const listed = readListing(r.listing, family, 'kube-proxy');
  const fromJSON = readJSON(json, family, 'kube-proxy');
  expect(readNftState(r.listing, family, 'kube-proxy').form).toBe('listing');
  expect(readNftState(json, family, 'kube-proxy').form).toBe('json');
  return { listing: r.listing, json, vsListing: stateDifferences(declared, listed), vsJSON: stateDifferences(declared, fromJSON) };
}

describeLab('nftables states read back from the kernel', { commands: ['nft'] }, () => {
  it('finds the cases', () => expect(cases.length).toBeGreaterThanOrEqual(81));

  it('negative controls: a changed rule, verdict, comment or chain is a difference', { timeout: 60_000 }, async () => {
    const c = cases.find((x) => x.name === 'v1.37/TestOverallNFTablesRules')!;
    const run = await runKpc(caseArgv(c));
    const rt = await roundTrip(run.stdout, run.stdout, 'ip');
    expect(rt.vsListing).toEqual([]);
    const declared = readTransaction(run.stdout, 'ip', 'kube-proxy');
    for (const [from, to] of [
      ['dnat to 10.180.0.1:80', 'dnat to 10.180.0.1:81'],
      ['tcp . 3001 comment "ns2/svc2:p80" : drop', 'tcp . 3001 comment "ns2/svc2:p80" : goto reject-chain'],
      ['comment "masquerade local traffic"', 'comment "masquerade"'],
      ['172.30.0.45 . tcp . 80 : goto service-HVFWP5L3', '172.30.0.45 . tcp . 81 : goto service-HVFWP5L3'],
      ['type filter hook input priority filter;', 'type filter hook input priority 10;'],
      ['ip saddr != 203.0.113.0/25 drop', 'ip saddr != 203.0.113.0/26 drop'],
    ] as const) {
      expect(rt.listing.includes(from), from).toBe(true);
      const changed = readListing(rt.listing.replace(from, to), 'ip', 'kube-proxy');
      expect(stateDifferences(declared, changed).length, from).toBeGreaterThan(0);
    }
  });

  for (const c of cases) {
    it(c.name, { timeout: 120_000 }, async () => {
      // kube-proxy's own ruleset for the case (its test's expectation)
      const want = c.freshDump ?? c.expectedDump;
      if (want !== undefined) {
        const family = dumpFamily(want);
        const rt = await roundTrip(want, toLoadOrder(want), family);
        expect(rt.vsListing, 'kube-proxy dump vs nft list').toEqual([]);
        expect(rt.vsJSON, 'kube-proxy dump vs nft -j list').toEqual([]);
      }
      // kpc's output
      const run = await runKpc(caseArgv(c));
      if (run.code !== 0) return; // error cases have no ruleset
      const family = /^add table ip6 /m.test(run.stdout) ? 'ip6' : 'ip';
      const rt = await roundTrip(run.stdout, run.stdout, family);
      expect(rt.vsListing, 'kpc output vs nft list').toEqual([]);
      expect(rt.vsJSON, 'kpc output vs nft -j list').toEqual([]);
    });
  }
});

/**
 * kube-proxy's own nftables unit-test expectations (fixtures/kube-proxy/nftables/<release>/,
 * PROVENANCE.md there: every expectation was recorded by running the upstream tests, never
 * produced by kpc) against `kpc compile --proxy-mode nftables`.
 *
 * For each case, kpc's output (one full-sync transaction) is run through knftables' Fake
 * semantics (test/helpers/nft-fake.ts) and its Dump() compared with the case's in the upstream
 * tests' own normal form (sortNFTablesTransaction, test/helpers/nft-kernel.ts):
 *   - `expected.dump` (or `fresh.dump`, where the test's expectation depends on the history of
 *     earlier syncs: PROVENANCE §4) must equal it;
 *   - `checks:` (piecewise tests) must hold on it: a chain's rules, strings present/absent;
 *   - kube-proxy's recorded transaction (`transaction.nft`) must equal kpc's line for line up
 *     to where the per-service-port blocks start (the fixed part), and as a multiset of lines
 *     after it: kube-proxy writes the blocks in Go map order (random), kpc in the IR's order.
 */

import { describe, expect, it } from 'vitest';
import { caseArgv, loadNftablesGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { dumpAfter } from '../../helpers/nft-fake.js';
import { commandLines, sortNFTablesTransaction } from '../../helpers/nft-kernel.js';

const cases = loadNftablesGoldenCases();
const features = cases.filter((c) => c.name.startsWith('features-nftables/'));

/** The lines before the first per-service-port line (a service/endpoint object, or an element other than nodeport-ips). */
function fixedPart(lines: string[]): number {
  const at = lines.findIndex((l) => {
    const w = l.split(' ');
    return (w[4] ?? '').includes('/') || (w[1] === 'element' && w[4] !== 'nodeport-ips');
  });
  return at < 0 ? lines.length : at;
}

/**
 * The fixed part in the normal form used here: the `nodeport-ips` elements (consecutive lines)
 * sorted. kube-proxy writes them from NodePortAddresses.GetNodeIPs, which collects the matching
 * interface addresses in a Go map and returns them in map order (pkg/proxy/util/
 * nodeport_addresses.go), so their order varies from run to run; kpc sorts them.
 */
function normalFixed(lines: string[]): string {
  const out = [...lines];
  const isNodePortIP = (l: string) => / kube-proxy nodeport-ips \{ /.test(l) && l.startsWith('add element ');
  for (let i = 0; i < out.length; ) {
    if (!isNodePortIP(out[i]!)) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && isNodePortIP(out[j]!)) j++;
    out.splice(i, j - i, ...out.slice(i, j).sort());
    i = j;
  }
  return out.join('\n');
}

/** The rules of one chain in a dump, as nft.ListRules gives them (the rule text, comment kept). */
function chainRules(dump: string, chain: string): string[] {
  const head = `add rule ${dump.includes('add table ip6 ') ? 'ip6' : 'ip'} kube-proxy ${chain} `;
  return commandLines(dump)
    .filter((l) => l.startsWith(head))
    .map((l) => l.slice(head.length));
}

describe('kube-proxy nftables goldens', () => {
  it('finds the cases of every release', () => {
    for (const r of ['v1.34', 'v1.35', 'v1.36', 'v1.37']) expect(cases.filter((c) => c.name.startsWith(`${r}/`)).length).toBeGreaterThanOrEqual(18);
    expect(features.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const run = await runKpc(caseArgv(c));
      expect(run.code, `exit code; stderr:\n${run.stderr}`).toBe(c.exit);
      // --standalone (kpc's own, features-nftables/standalone): two lines before kube-proxy's transaction
      const family = c.expectedDump!.includes('add table ip6 ') ? 'ip6' : 'ip';
      const lead = `add table ${family} kube-proxy\ndelete table ${family} kube-proxy\n`;
      if (c.args.includes('--standalone')) expect(run.stdout.startsWith(lead), 'standalone: add + delete table first').toBe(true);
      const sent = c.args.includes('--standalone') ? run.stdout.slice(lead.length) : run.stdout;
      const dump = dumpAfter(run.stdout);
      const want = c.freshDump ?? c.expectedDump!;
      expect(sortNFTablesTransaction(dump)).toBe(sortNFTablesTransaction(want));
      if (c.checks?.chain !== undefined) expect(chainRules(dump, c.checks.chain)).toEqual(c.checks.rules ?? []);
      for (const s of c.checks?.contains ?? []) expect(dump, `contains ${s}`).toContain(s);
      for (const s of c.checks?.absent ?? []) expect(dump, `lacks ${s}`).not.toContain(s);
      if (c.transaction !== undefined) {
        const got = commandLines(sent);
        const tx = commandLines(c.transaction);
        const n = fixedPart(tx);
        expect(normalFixed(got.slice(0, fixedPart(got))), 'the fixed part, in order').toBe(normalFixed(tx.slice(0, n)));
        expect([...got].sort().join('\n'), 'every line of the transaction').toBe([...tx].sort().join('\n'));
      }
    });
  }
});

describe('the golden comparison can fail', () => {
  const c = cases.find((x) => x.name === 'v1.34/TestOverallNFTablesRules')!;
  const normal = (text: string) => sortNFTablesTransaction(dumpAfter(text));

  it('sees a changed rule, a missing element, swapped rules and a changed comment', async () => {
    const run = await runKpc(caseArgv(c));
    const want = sortNFTablesTransaction(c.expectedDump!);
    expect(normal(run.stdout)).toBe(want);
    const mutations = [
      run.stdout.replace('dnat to 10.180.0.4:80', 'dnat to 10.180.0.4:81'),
      run.stdout.replace('add element ip kube-proxy cluster-ips { 172.30.0.46 }\n', ''),
      run.stdout.replace('comment "ns6/svc6:p80"', 'comment "ns6/svc6:p81"'),
      // the two rules of the masquerading chain that follow each other, swapped
      run.stdout.replace(
        'add rule ip kube-proxy masquerading mark and 0x00004000 == 0 return\nadd rule ip kube-proxy masquerading mark set mark xor 0x00004000\n',
        'add rule ip kube-proxy masquerading mark set mark xor 0x00004000\nadd rule ip kube-proxy masquerading mark and 0x00004000 == 0 return\n',
      ),
      // a flushed chain loses the rules added before the flush
      run.stdout.replace('add rule ip kube-proxy reject-chain reject\n', 'add rule ip kube-proxy reject-chain reject\nflush chain ip kube-proxy reject-chain\n'),
    ];
    for (const m of mutations) {
      expect(m).not.toBe(run.stdout);
      expect(normal(m)).not.toBe(want);
    }
  });
});

/**
 * kpc's nftables output on a real kernel: for every kube-proxy nftables golden
 * (fixtures/kube-proxy/nftables/<release>/<case>, and the feature cases recorded from kube-proxy's
 * proxier, fixtures/features-nftables/<case>), `kpc compile --standalone` of the case is
 * loaded with `nft -f` into a fresh network namespace TWICE (the standalone form starts with
 * `add table` + `delete table`, so the second load replaces the first), and then
 *   - `nft list table` reads back exactly what kube-proxy's expected dump declares (readBack:
 *     table/chain comments, hooks and priorities, rule counts and comments, set/map types, flags,
 *     timeouts, comments and every element), and
 *   - the kernel's canonical listing equals that of kube-proxy's own expected ruleset loaded in
 *     another namespace (compareByKernel: rule bodies included, after nft's normalisation).
 * The expected rulesets are kube-proxy's (expected.dump, or fresh.dump where the test's depends
 * on history), never kpc's. Also: the plain (non-standalone) transaction loads on an empty
 * table, as kube-proxy sends it.
 *
 * Root only (describeLab): skipped loudly without root or nft, failing under CI=true.
 */

import { expect, it } from 'vitest';
import { describeLab } from '../netns/lab.js';
import { caseArgv, loadNftablesGoldenCases } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';
import { canonicalListing, compareByKernel, dumpFamily, loadAndList, readBack, toLoadOrder } from '../helpers/nft-kernel.js';

const cases = loadNftablesGoldenCases();

describeLab('kpc nftables output loads into a real kernel', { commands: ['nft'] }, () => {
  it('finds the cases', () => expect(cases.length).toBeGreaterThanOrEqual(72 + 44));

  it('a broken standalone output is refused, and a changed rule is seen (negative controls)', { timeout: 60_000 }, async () => {
    const c = cases.find((x) => x.name === 'v1.37/TestOverallNFTablesRules')!;
    const run = await runKpc([...caseArgv(c), '--standalone']);
    expect(run.code).toBe(0);
    const want = toLoadOrder(c.expectedDump!);
    // a goto to a chain that does not exist: the kernel refuses the whole transaction
    const broken = run.stdout.replace('goto service-ULMVA6XW-ns1/svc1/tcp/p80 }', 'goto service-NOSUCHCH-ns1/svc1/tcp/p80 }');
    expect(broken).not.toBe(run.stdout);
    expect((await loadAndList(broken, 'ip')).ok).toBe(false);
    const changed = run.stdout.replace('dnat to 10.180.0.1:80', 'dnat to 10.180.0.1:81');
    expect(changed).not.toBe(run.stdout);
    expect((await compareByKernel([changed, changed], want, 'ip')).equal).toBe(false);
  });

  for (const c of cases) {
    it(c.name, { timeout: 120_000 }, async () => {
      const want = c.freshDump ?? c.expectedDump!;
      const family = dumpFamily(want);
      const run = await runKpc([...caseArgv(c), '--standalone']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.startsWith(`add table ${family} kube-proxy\ndelete table ${family} kube-proxy\nadd table ${family} kube-proxy { comment`)).toBe(true);
      const cmp = await compareByKernel([run.stdout, run.stdout], toLoadOrder(want), family);
      expect(cmp.a.ok, `nft -f of kpc's output (twice) failed:\n${cmp.a.loads.map((l) => l.stderr).join('\n')}`).toBe(true);
      expect(cmp.b.ok, 'the expected ruleset loads').toBe(true);
      expect(readBack(want, cmp.a.listing, cmp.a.json!), 'nft list table vs the expected dump').toEqual([]);
      expect(cmp.canonicalA).toBe(cmp.canonicalB);
      // without --standalone: the transaction as kube-proxy sends it, on an empty table
      const plain = await runKpc(caseArgv(c));
      const once = await loadAndList(plain.stdout, family);
      expect(once.ok, once.loads.at(-1)?.stderr).toBe(true);
      expect(canonicalListing(once.listing)).toBe(cmp.canonicalA);
    });
  }
});

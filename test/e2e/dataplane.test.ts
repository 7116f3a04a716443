/**
 * Dataplane tests: kpc's iptables-restore output, loaded into a node made of network namespaces,
 * must move real packets the way kube-proxy's iptables mode does.
 *
 * One lab (topology.ts) serves every scenario (scenarios.ts), which run one after another; each
 * resets the node's rules and conntrack, compiles its own manifests with
 * `kpc compile --standalone`, loads the result and probes. Two broken variants (the DNAT rules, or
 * the hairpin masquerade rules, removed before loading) must make the matching scenario's check
 * FAIL: proof that the checks can fail.
 *
 * Needs root, iproute2, iptables, conntrack (and `npm run build` for kpc). Without them the
 * suite is skipped with a loud warning; with CI=true it fails. Nothing is left behind: the
 * namespaces are deleted in afterAll, and by lab.ts's exit hook / sweep if the worker dies.
 *
 * Run alone: `npm run build && npx vitest run test/e2e` (see test/e2e/README.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeLab, listLabNetns } from '../netns/lab.js';
import { forNftables, kpcUnavailable, resetNode, runProbes, runScenario, SCENARIOS, scenario, withoutLines, type Probe } from './scenarios.js';
import {
  createLab,
  externalHost,
  NODE_IP6,
  NODE_POD_GW4,
  NODE_POD_GW6,
  pod,
  POD_TCP_PORT,
  POD_UDP_PORT,
  type Lab,
} from './topology.js';

describeLab('dataplane: kpc rules on a real kernel', { commands: ['iptables-restore', 'ip6tables-restore', 'conntrack', 'nft'] }, () => {
  let lab: Lab | undefined;
  let workDir = '';
  let anyFailed = false;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'kpc-e2e-'));
    lab = await createLab();
  }, 60_000);

  afterAll(async () => {
    await lab?.destroy();
    // Keep the manifests, rules and reports of a failed run for a look; KPC_E2E_KEEP=1 keeps all.
    if (workDir && !anyFailed && !process.env.KPC_E2E_KEEP) rmSync(workDir, { recursive: true, force: true });
    else if (workDir) console.warn(`dataplane: manifests, rules and reports kept in ${workDir}`);
    const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
    expect(mine).toEqual([]);
  }, 30_000);

  const need = (): Lab => {
    if (!lab) throw new Error('the lab was not built (see the beforeAll error)');
    return lab;
  };

  const requireKpc = async () => {
    const why = await kpcUnavailable();
    if (why) throw new Error(why);
  };

  it('the lab itself: pods, LAN, node and upstream reach each other without any rules', { timeout: 30_000 }, async () => {
    const l = need();
    await resetNode(l);
    const c1 = pod('c1');
    const x1 = externalHost('x1');
    const probes: Probe[] = [
      { from: 'c1', to: pod('a1').ip4, port: POD_TCP_PORT, count: 3, expect: { answeredBy: ['a1'], seen: c1.ip4 } },
      { from: 'c1', proto: 'udp', to: pod('b1').ip4, port: POD_UDP_PORT, count: 3, expect: { answeredBy: ['b1'], seen: c1.ip4 } },
      { from: 'x1', to: pod('b2').ip4, port: POD_TCP_PORT, count: 3, expect: { answeredBy: ['b2'], seen: x1.ip4 } },
      { from: 'node', to: pod('a3').ip4, port: POD_TCP_PORT, count: 3, expect: { answeredBy: ['a3'], seen: NODE_POD_GW4 } },
      { from: 'c1', to: pod('a2').ip6, port: POD_TCP_PORT, count: 3, expect: { answeredBy: ['a2'], seen: c1.ip6 } },
      { from: 'x1', to: pod('b1').ip6, port: POD_TCP_PORT, count: 3, expect: { answeredBy: ['b1'], seen: x1.ip6 } },
      { from: 'node', to: pod('a1').ip6, port: POD_TCP_PORT, count: 3, expect: { answeredBy: ['a1'], seen: NODE_POD_GW6 } },
      // Service, external and LB addresses that nothing DNATs end up at "upstream": leaks are visible.
      { from: 'c1', to: '10.96.0.10', port: 80, count: 3, expect: { answeredBy: ['upstream'], seen: c1.ip4 } },
      { from: 'x2', to: '203.0.113.10', port: 80, count: 3, expect: { answeredBy: ['upstream'] } },
      { from: 'x1', to: 'fd00:96::10', port: 80, count: 3, expect: { answeredBy: ['upstream'], seen: x1.ip6 } },
      // Nothing listens on the node itself: refused.
      { from: 'x1', to: NODE_IP6, port: 30090, count: 2, expect: { refused: true, withinMs: 500 } },
    ];
    const { problems, log } = await runProbes(l, probes);
    expect(problems, log.join('\n')).toEqual([]);
  });

  for (const sc of SCENARIOS) {
    it(`${sc.name}: ${sc.summary}`, { timeout: 60_000 }, async () => {
      await requireKpc();
      const r = await runScenario(need(), sc, workDir);
      if (!r.ok) anyFailed = true;
      expect(r.problems, r.report).toEqual([]);
    });
  }

  // nftables mode (kube-proxy's newest proxier, default release): the same scenarios, the same
  // expectations, except localhost node ports, which nftables mode does not serve (forNftables).
  // Each era of the nftables proxier: E2 (v1.34, = v1.35), E3 (v1.36), E4 (v1.37, the default).
  for (const release of ['1.34', '1.36', '1.37']) {
    for (const sc of SCENARIOS) {
      it(`nftables ${release} ${sc.name}: ${sc.summary}`, { timeout: 60_000 }, async () => {
        await requireKpc();
        const r = await runScenario(need(), forNftables(sc), workDir, { mode: 'nftables', release });
        if (!r.ok) anyFailed = true;
        expect(r.problems, r.report).toEqual([]);
      });
    }
  }

  it('nftables broken rules: without its DNAT rules the clusterip-spread check fails', { timeout: 60_000 }, async () => {
    await requireKpc();
    const r = await runScenario(need(), forNftables(scenario('clusterip-spread')), workDir, { mode: 'nftables', mutate: withoutLines(/^add rule .* dnat /) });
    expect(r.failedAt, r.report).toBe('probe');
    expect(r.problems.join('\n'), r.report).toMatch(/unexpected upstream|not answered/);
  });

  it('nftables broken rules: without the hairpin masquerade the hairpin check fails', { timeout: 60_000 }, async () => {
    await requireKpc();
    const r = await runScenario(need(), forNftables(scenario('hairpin')), workDir, { mode: 'nftables', mutate: withoutLines(/^add rule ip kube-proxy masquerading ct status dnat /) });
    expect(r.failedAt, r.report).toBe('probe');
  });

  it('broken rules: without its DNAT rules the clusterip-spread check fails', { timeout: 60_000 }, async () => {
    await requireKpc();
    const r = await runScenario(need(), scenario('clusterip-spread'), workDir, { mutate: withoutLines(/ -j DNAT /) });
    expect(r.failedAt, r.report).toBe('probe');
    expect(r.ok).toBe(false);
    // The packets went past the node untranslated and "upstream" answered them.
    expect(r.problems.join('\n'), r.report).toMatch(/unexpected upstream/);
  });

  it('broken rules: without the hairpin masquerade the hairpin check fails', { timeout: 60_000 }, async () => {
    await requireKpc();
    // The KUBE-SEP "-s <endpoint> -j KUBE-MARK-MASQ" rules.
    const r = await runScenario(need(), scenario('hairpin'), workDir, { mutate: withoutLines(/^-A KUBE-SEP-\S+ .*-s \S+ -j KUBE-MARK-MASQ$/) });
    expect(r.failedAt, r.report).toBe('probe');
    expect(r.ok).toBe(false);
  });
});

/**
 * nftables deltas move real packets: the e2e dataplane lab (test/e2e/topology.ts: node-a, pods
 * a1 a2 a3 b1 b2 c1, LAN hosts x1 x2, "upstream") runs a sequence of states in nftables mode.
 * The node starts with kpc's nftables transaction plus another component's iptables rules
 * (test/diff/iptables/states.ts DOCKER_LIKE, loaded with iptables-nft: among others a DNAT of
 * node port 30999 to pod a3); each later state is reached ONLY by
 *
 *   nft list table ip kube-proxy (the node's own table) → kpc compile --previous → nft -f
 *
 * as on a real node. After each step: `kpc diff` against the node's new listing reports no
 * difference, the probes reach exactly the new endpoints, and the foreign DNAT still works.
 *
 * Run alone: `npx vitest run test/diff/nftables/traffic.test.ts` (root, iproute2, nft, iptables, conntrack).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { endpointSlice, service, type SvcSpec } from '../../e2e/manifests.js';
import { resetNode, runProbes, type Probe } from '../../e2e/scenarios.js';
import { createLab, flushConntrack, NODE_IP4, NODE_POD_GW4, pod, type Lab } from '../../e2e/topology.js';
import { describeLab, listLabNetns } from '../../netns/lab.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { nftListTable, nftLoad } from '../../helpers/nft-kernel.js';
import { load } from '../iptables/harness.js';
import { DOCKER_LIKE, NODE_ARGS } from '../iptables/states.js';

const ARGS = [...NODE_ARGS, '--proxy-mode', 'nftables'];
const tmp = mkdtempSync(join(tmpdir(), 'kpc-nfttraffic-'));
let n = 0;
function file(text: string, name: string): string {
  const p = join(tmp, `${n++}-${name}`);
  writeFileSync(p, text);
  return p;
}

const http = { name: 'http', port: 80, protocol: 'TCP' as const, targetPort: 8080 };

function svc(name: string, clusterIP: string, pods: string[], extra: Partial<SvcSpec> = {}): Record<string, unknown>[] {
  const ports = extra.ports ?? [http];
  return [
    service({ name, clusterIP, ports, ...extra }),
    endpointSlice({ service: name, ports: ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol ?? 'TCP' })), endpoints: pods.map((p) => ({ pod: p })) }),
  ];
}

const SPREAD = { count: 30, concurrency: 10 };
const c1 = pod('c1');
/** The foreign rule (DOCKER DNAT of node port 30999 to a3) must keep working at every step. */
const FOREIGN_PROBE: Probe = { from: 'x1', to: NODE_IP4, port: 30999, count: 3, expect: { answeredBy: ['a3'], seen: '192.168.50.21' } };

interface Step {
  label: string;
  objects: Record<string, unknown>[];
  probes: Probe[];
}

const STEPS: Step[] = [
  {
    label: 'web → a1,a2',
    objects: svc('web', '10.96.0.10', ['a1', 'a2']),
    probes: [{ from: 'c1', to: '10.96.0.10', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a2'], seen: c1.ip4 } }],
  },
  {
    label: 'web endpoints changed → a3,b1',
    objects: svc('web', '10.96.0.10', ['a3', 'b1']),
    probes: [
      { from: 'c1', to: '10.96.0.10', port: 80, ...SPREAD, expect: { answeredBy: ['a3', 'b1'], seen: c1.ip4 } },
      { from: 'node', to: '10.96.0.10', port: 80, ...SPREAD, expect: { answeredBy: ['a3', 'b1'], seen: NODE_POD_GW4 } },
    ],
  },
  {
    label: 'web becomes NodePort 30080; api added → b2',
    objects: [...svc('web', '10.96.0.10', ['a3', 'b1'], { type: 'NodePort', ports: [{ ...http, nodePort: 30080 }] }), ...svc('api', '10.96.0.11', ['b2'])],
    probes: [
      { from: 'x1', to: NODE_IP4, port: 30080, ...SPREAD, expect: { answeredBy: ['a3', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'c1', to: '10.96.0.11', port: 80, ...SPREAD, expect: { answeredBy: ['b2'], seen: c1.ip4 } },
    ],
  },
  {
    label: 'web scaled to 0 (REJECT); api scaled to a1,a2,b2 with ClientIP affinity',
    objects: [
      ...svc('web', '10.96.0.10', [], { type: 'NodePort', ports: [{ ...http, nodePort: 30080 }] }),
      ...svc('api', '10.96.0.11', ['a1', 'a2', 'b2'], { clientIPAffinitySeconds: 600 }),
    ],
    probes: [
      { from: 'c1', to: '10.96.0.10', port: 80, count: 3, expect: { refused: true, withinMs: 500 } },
      { from: 'x1', to: NODE_IP4, port: 30080, count: 3, expect: { refused: true, withinMs: 500 } },
      { from: 'c1', to: '10.96.0.11', port: 80, count: 20, concurrency: 1, expect: { answeredBy: ['a1', 'a2', 'b2'], sticky: true, seen: c1.ip4 } },
    ],
  },
  {
    label: 'web deleted; api without affinity → a1,a2,b2',
    objects: svc('api', '10.96.0.11', ['a1', 'a2', 'b2']),
    probes: [
      // No rule for the old ClusterIP any more: the packet leaves untranslated and "upstream" answers.
      { from: 'c1', to: '10.96.0.10', port: 80, count: 3, expect: { answeredBy: ['upstream'] } },
      { from: 'c1', to: '10.96.0.11', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a2', 'b2'], seen: c1.ip4 } },
    ],
  },
];

describeLab('nftables deltas: traffic follows them (e2e lab)', { commands: ['nft', 'iptables-restore', 'conntrack'] }, () => {
  let lab: Lab | undefined;

  beforeAll(async () => {
    lab = await createLab();
  }, 60_000);

  afterAll(async () => {
    await lab?.destroy();
    rmSync(tmp, { recursive: true, force: true });
    const mine = (await listLabNetns()).filter((x) => x.includes(`-${process.pid}-`));
    expect(mine, 'network namespaces left behind').toEqual([]);
  }, 30_000);

  it("a sequence of states reached only by deltas from the node's nft list table; foreign rules keep working", { timeout: 120_000 }, async () => {
    if (!lab) throw new Error('the lab was not built (see the beforeAll error)');
    const l = lab;
    const log: string[] = [];
    const problems: string[] = [];
    const input = (st: Step) => file(st.objects.map((o) => `---\n${stringify(o)}`).join(''), 'manifests.yaml');
    const kpc = async (argv: string[]) => {
      const r = await runKpc(argv);
      if (r.code !== 0) throw new Error(`kpc ${argv.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    };

    await resetNode(l);
    const first = await kpc(['compile', ...ARGS, '-f', input(STEPS[0]!)]);
    const r0 = await nftLoad(l.nodeNs, first);
    expect(r0.code, r0.stderr).toBe(0);
    await load(l.nodeNs, DOCKER_LIKE, 'ipv4', true, 'the foreign rules');
    await flushConntrack(l.nodeNs);

    for (let i = 0; i < STEPS.length; i++) {
      const st = STEPS[i]!;
      const manifests = input(st);
      if (i > 0) {
        const previous = file((await nftListTable(l.nodeNs, 'ip')).stdout, 'node.nft');
        const delta = await kpc(['compile', ...ARGS, '-f', manifests, '--previous', previous]);
        log.push(`step ${i} (${st.label}): delta ${delta.split('\n').filter((x) => x !== '').length} lines`);
        const r = await nftLoad(l.nodeNs, delta);
        expect(r.code, `${st.label}: ${r.stderr}\n${delta}`).toBe(0);
        await flushConntrack(l.nodeNs);
      }
      const now = file((await nftListTable(l.nodeNs, 'ip')).stdout, 'after.nft');
      const diff = await runKpc(['diff', ...ARGS, '-f', manifests, '--previous', now]);
      if (diff.code !== 0) problems.push(`step ${i} (${st.label}): kpc diff against the node exited ${diff.code}:\n${diff.stdout}${diff.stderr}`);
      const r = await runProbes(l, [...st.probes, FOREIGN_PROBE]);
      log.push(...r.log.map((x) => `  ${x}`));
      problems.push(...r.problems.map((p) => `step ${i} (${st.label}): ${p}`));
    }
    console.info(`nftables delta traffic:\n${log.join('\n')}`);
    expect(problems, log.join('\n')).toEqual([]);
  });
});

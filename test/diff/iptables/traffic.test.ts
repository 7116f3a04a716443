/**
 * Deltas move real packets: the e2e dataplane lab (test/e2e/topology.ts: node-a, pods a1 a2 a3
 * b1 b2 c1, LAN hosts x1 x2, "upstream") runs a sequence of states. The node starts with kpc's
 * --standalone output plus another component's rules (states.ts DOCKER_LIKE: among others a
 * DNAT of node port 30999 to pod a3); each later state is reached ONLY by
 *
 *   iptables-save (the node's own rules) → kpc compile --previous → iptables-restore --noflush
 *
 * as on a real node. After each step: `kpc diff` against the node's new iptables-save reports no
 * difference, the probes reach exactly the new endpoints, and the foreign DNAT still works.
 *
 * Run alone: `npx vitest run test/diff/iptables/traffic.test.ts` (root, iproute2, iptables, conntrack).
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import { endpointSlice, service, type SvcSpec } from '../../e2e/manifests.js';
import { resetNode, runProbes, type Probe } from '../../e2e/scenarios.js';
import { createLab, flushConntrack, NODE_IP4, NODE_POD_GW4, pod, type Lab } from '../../e2e/topology.js';
import { describeLab, listLabNetns } from '../../netns/lab.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { cleanupTmp, compileFull, kpc, lineCount, load, save, writeManifests, writeText, type StateSpec } from './harness.js';
import { DOCKER_LIKE, NODE_ARGS } from './states.js';

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

describeLab('kpc compile --previous: traffic follows the deltas (e2e lab)', { commands: ['iptables-restore', 'iptables-save', 'conntrack'] }, () => {
  let lab: Lab | undefined;

  beforeAll(async () => {
    lab = await createLab();
  }, 60_000);

  afterAll(async () => {
    await lab?.destroy();
    cleanupTmp();
    const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
    expect(mine, 'network namespaces left behind').toEqual([]);
  }, 30_000);

  it('a sequence of states reached only by deltas from the node\'s iptables-save; foreign rules keep working', { timeout: 90_000 }, async () => {
    if (!lab) throw new Error('the lab was not built (see the beforeAll error)');
    const l = lab;
    const log: string[] = [];
    const problems: string[] = [];
    const specOf = (st: Step): StateSpec => ({ label: st.label, input: writeManifests(st.objects, st.label), args: NODE_ARGS });

    // State 0: a fresh node with kpc's rules and then Docker's.
    await resetNode(l);
    await load(l.nodeNs, await compileFull(specOf(STEPS[0]!)), 'ipv4', true, 'state 0');
    await load(l.nodeNs, DOCKER_LIKE, 'ipv4', true, 'the foreign rules');
    await flushConntrack(l.nodeNs);

    for (let i = 0; i < STEPS.length; i++) {
      const st = STEPS[i]!;
      const spec = specOf(st);
      if (i > 0) {
        const previous = writeText(await save(l.nodeNs, 'ipv4'), `node-${i}`, 'iptables-save.txt');
        const delta = await kpc(['compile', ...spec.args, '-f', spec.input, '-R', '--previous', previous]);
        log.push(`step ${i} (${st.label}): delta ${lineCount(delta)} lines`);
        await load(l.nodeNs, delta, 'ipv4', true, `the delta to "${st.label}"`);
        await flushConntrack(l.nodeNs);
      }
      // The node now holds exactly the state: kpc diff against its iptables-save finds nothing.
      const now = writeText(await save(l.nodeNs, 'ipv4'), `after-${i}`, 'iptables-save.txt');
      const diff = await runKpc(['diff', ...spec.args, '-f', spec.input, '-R', '--previous', now]);
      if (diff.code !== 0) problems.push(`step ${i} (${st.label}): kpc diff against the node exited ${diff.code}:\n${diff.stdout}`);
      const r = await runProbes(l, [...st.probes, FOREIGN_PROBE]);
      log.push(...r.log.map((x) => `  ${x}`));
      problems.push(...r.problems.map((p) => `step ${i} (${st.label}): ${p}`));
    }
    console.info(`delta traffic:\n${log.join('\n')}`);
    expect(problems, log.join('\n')).toEqual([]);
  });
});

/**
 * Deltas move real packets, in every mode that writes to the kernel here: the e2e dataplane lab
 * (test/e2e/topology.ts: node-a, pods a1 a2 a3 b1 b2 c1, LAN hosts x1 x2, "upstream") runs one
 * sequence of states. The node starts with kpc's output for the first state plus another
 * component's iptables rules (iptables/states.ts DOCKER_LIKE: among others a DNAT of node port
 * 30999 to pod a3); each later state is reached ONLY by
 *
 *   the node's own listing → kpc compile --previous → the mode's loader
 *
 * as on a real node. After each step `kpc diff` against the node's new listing reports no
 * difference, the probes reach exactly the new endpoints, and the foreign DNAT still works.
 * The mode's part (how the node lists and loads its rules) is a `NodeRules`.
 */

import { endpointSlice, service, type SvcSpec } from '../e2e/manifests.js';
import { resetNode, runProbes, type Probe } from '../e2e/scenarios.js';
import { flushConntrack, NODE_IP4, NODE_POD_GW4, pod, type Lab } from '../e2e/topology.js';
import { runKpc } from '../helpers/run-kpc.js';
import { kpc, lineCount, load, writeManifests, writeText } from './iptables/harness.js';
import { DOCKER_LIKE } from './iptables/states.js';

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


/** How one proxy mode's rules get onto the node and back off it. */
export interface NodeRules {
  /** kpc's flags for this mode and node (everything but -f and --previous). */
  args: readonly string[];
  /** What the node's own tool lists (iptables-save, nft list table), for --previous. */
  list(ns: string): Promise<string>;
  /** Loads a full output or a delta, failing with the loader's message. */
  load(ns: string, text: string, what: string): Promise<void>;
}

/** Runs the sequence; returns the log and every problem seen (empty when all is well). */
export async function runTrafficSequence(lab: Lab, node: NodeRules): Promise<{ log: string[]; problems: string[] }> {
  const log: string[] = [];
  const problems: string[] = [];
  const inputOf = (st: Step) => writeManifests(st.objects, st.label);

  // State 0: a fresh node with kpc's rules and then the foreign ones.
  await resetNode(lab);
  await node.load(lab.nodeNs, await kpc(['compile', ...node.args, '--standalone', '-f', inputOf(STEPS[0]!)]), 'state 0');
  await load(lab.nodeNs, DOCKER_LIKE, 'ipv4', true, 'the foreign rules');
  await flushConntrack(lab.nodeNs);

  for (let i = 0; i < STEPS.length; i++) {
    const st = STEPS[i]!;
    const input = inputOf(st);
    if (i > 0) {
      const previous = writeText(await node.list(lab.nodeNs), `node-${i}`, 'previous.txt');
      const delta = await kpc(['compile', ...node.args, '-f', input, '--previous', previous]);
      log.push(`step ${i} (${st.label}): delta ${lineCount(delta)} lines`);
      await node.load(lab.nodeNs, delta, `the delta to "${st.label}"`);
      await flushConntrack(lab.nodeNs);
    }
    // The node now holds exactly the state: kpc diff against its listing finds nothing.
    const now = writeText(await node.list(lab.nodeNs), `after-${i}`, 'listing.txt');
    const diff = await runKpc(['diff', ...node.args, '-f', input, '--previous', now]);
    if (diff.code !== 0) problems.push(`step ${i} (${st.label}): kpc diff against the node exited ${diff.code}:\n${diff.stdout}${diff.stderr}`);
    const r = await runProbes(lab, [...st.probes, FOREIGN_PROBE]);
    log.push(...r.log.map((x) => `  ${x}`));
    problems.push(...r.problems.map((p) => `step ${i} (${st.label}): ${p}`));
  }
  return { log, problems };
}

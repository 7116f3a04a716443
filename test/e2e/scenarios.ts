/**
 * scenarios.ts — what the dataplane suite proves, and the check that proves it.
 *
 * A scenario is a set of Kubernetes objects, extra kpc flags, and probes with expectations. Its
 * check (`runScenario`) writes the manifests, runs `kpc compile --standalone` for node-a, loads
 * the output into the node namespace of a fresh-rules lab (both families reset, conntrack
 * flushed), sends the probes from the agents and compares what happened with what kube-proxy's
 * iptables mode does (shared/spec/iptables-mode.md). It never throws for a wrong dataplane: it
 * returns the problems it found, so a test can also assert that a deliberately broken ruleset
 * FAILS the same check.
 *
 * Expectations are about SETS, never exact distributions: which pods answered (every probe must
 * be answered and every expected pod must answer at least once; 30 probes make a miss of one of
 * three equally likely endpoints a 1.5e-5 event) and which source address each pod saw.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exec, iptablesRestoreLoad, nsExec, type ExecResult } from '../netns/lab.js';
import { endpointSlice, service, toYaml, type Family } from './manifests.js';
import {
  CLUSTER_CIDR4,
  CLUSTER_CIDR6,
  externalHost,
  flushConntrack,
  NODE_IP4,
  NODE_IP6,
  NODE_NAME,
  NODE_POD_GW4,
  NODE_POD_GW6,
  pod,
  POD_TCP_PORT,
  POD_UDP_PORT,
  type Lab,
  type ProbeResult,
} from './topology.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const KPC_BIN = join(REPO, 'bin', 'kpc.js');

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

export type Expectation =
  /** Every probe answered, by exactly these pods (each at least once). */
  | {
      answeredBy: string[];
      /** Source every answering pod saw (one address), or per pod. */
      seen?: string | Record<string, string>;
      /** Session affinity: all probes answered by ONE pod, one of answeredBy. */
      sticky?: boolean;
    }
  /** Every probe refused (TCP RST / ICMP port unreachable, i.e. REJECT) within withinMs. */
  | { refused: true; withinMs: number }
  /** Every probe unanswered (DROP): no answer, no refusal, nothing from "upstream". */
  | { dropped: true };

export interface Probe {
  /** Agent that sends: 'c1', 'a1', 'node', 'x1', ... */
  from: string;
  proto?: 'tcp' | 'udp';
  to: string;
  port: number;
  count?: number;
  timeoutMs?: number;
  concurrency?: number;
  expect: Expectation;
}

export interface Scenario {
  name: string;
  summary: string;
  family: Family;
  objects: Record<string, unknown>[];
  /** Extra `kpc compile` flags (e.g. --masquerade-all). */
  kpcArgs?: string[];
  probes: Probe[];
}

export interface ScenarioResult {
  ok: boolean;
  /** Where it went wrong, when !ok. */
  failedAt?: 'compile' | 'load' | 'probe';
  problems: string[];
  /** One line per probe: what was sent and what came back. */
  log: string[];
  /** The ruleset that was loaded (after `mutate`). */
  rules: string;
  /** Where manifests, rules and the report were written. */
  dir: string;
  /** A readable account for assertion messages. */
  report: string;
}

/** The proxy mode a scenario's rules are compiled for and loaded in. */
export type E2EMode = 'iptables' | 'nftables';

export interface RunOptions {
  /** iptables (default: iptables-restore --noflush) or nftables (`nft -f` of the standalone transaction). */
  mode?: E2EMode;
  /** --kube-proxy-version (default: kpc's, the newest). */
  release?: string;
  /** Changes the compiled text before loading it (the broken-rules demonstrations). */
  mutate?: (rules: string) => string;
  /** Called with each probe's raw results, in order (test/e2e/trace-agreement.test.ts). */
  observe?: (probe: Probe, results: ProbeResult[]) => void;
  /** Runs `kpc ARGS` for the compile step instead of `node bin/kpc.js` (e.g. in-process). */
  kpc?: (args: readonly string[]) => Promise<{ code: number | null; stdout: string; stderr: string; timedOut?: boolean }>;
}

// ---------------------------------------------------------------------------------------------
// Addresses used below
// ---------------------------------------------------------------------------------------------

const c1 = pod('c1');
const a1 = pod('a1');
const x1 = externalHost('x1');
const x2 = externalHost('x2');
const LB_IP = '203.0.113.10';
const EXTERNAL_IP = '198.51.100.20';

const http = (targetPort = POD_TCP_PORT) => ({ name: 'http', port: 80, protocol: 'TCP' as const, targetPort });
const httpSlicePort = { name: 'http', port: POD_TCP_PORT, protocol: 'TCP' as const };
const dnsSlicePort = { name: 'dns', port: POD_UDP_PORT, protocol: 'UDP' as const };

const SPREAD = { count: 30, concurrency: 10 };
const DROP_PROBES = { count: 3, concurrency: 3, timeoutMs: 800 };

/** A ClusterIP Service with one slice: the most common shape. */
function simple(name: string, clusterIP: string, pods: string[], extra: Partial<Parameters<typeof service>[0]> = {}) {
  return [
    service({ name, clusterIP, ports: [http()], ...extra }),
    endpointSlice({ service: name, ports: [httpSlicePort], endpoints: pods.map((p) => ({ pod: p })) }),
  ];
}

// ---------------------------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------------------------

export const SCENARIOS: Scenario[] = [
  {
    name: 'clusterip-spread',
    summary: 'a ClusterIP spreads over all endpoints, local and remote, from a pod and from the node',
    family: 'ipv4',
    objects: simple('web', '10.96.0.10', ['a1', 'a2', 'b1']),
    probes: [
      // Pod to ClusterIP: no SNAT (source inside the cluster CIDR).
      { from: 'c1', to: '10.96.0.10', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a2', 'b1'], seen: c1.ip4 } },
      // Node to ClusterIP: its source (192.168.50.10) is not pod traffic, so it is masqueraded.
      { from: 'node', to: '10.96.0.10', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a2', 'b1'], seen: NODE_POD_GW4 } },
    ],
  },
  {
    name: 'tcp-and-udp',
    summary: 'one Service with a TCP and a UDP port reaches the endpoints on both',
    family: 'ipv4',
    objects: [
      service({
        name: 'mixed',
        clusterIP: '10.96.0.11',
        ports: [http(), { name: 'dns', port: 53, protocol: 'UDP', targetPort: POD_UDP_PORT }],
      }),
      endpointSlice({ service: 'mixed', ports: [httpSlicePort, dnsSlicePort], endpoints: [{ pod: 'a2' }, { pod: 'b1' }] }),
    ],
    probes: [
      { from: 'c1', proto: 'tcp', to: '10.96.0.11', port: 80, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: c1.ip4 } },
      { from: 'c1', proto: 'udp', to: '10.96.0.11', port: 53, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: c1.ip4 } },
      { from: 'node', proto: 'udp', to: '10.96.0.11', port: 53, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: NODE_POD_GW4 } },
    ],
  },
  {
    name: 'client-ip-affinity',
    summary: 'sessionAffinity ClientIP pins each client to one endpoint',
    family: 'ipv4',
    objects: simple('sticky', '10.96.0.12', ['a1', 'a2', 'a3'], { clientIPAffinitySeconds: 600 }),
    probes: [
      // One at a time: the first connection records the client, the others must follow it.
      { from: 'c1', to: '10.96.0.12', port: 80, count: 30, concurrency: 1, expect: { answeredBy: ['a1', 'a2', 'a3'], sticky: true, seen: c1.ip4 } },
      { from: 'node', to: '10.96.0.12', port: 80, count: 30, concurrency: 1, expect: { answeredBy: ['a1', 'a2', 'a3'], sticky: true, seen: NODE_POD_GW4 } },
    ],
  },
  {
    name: 'no-endpoints-reject',
    summary: 'a Service without endpoints is refused at once (REJECT), TCP and UDP, from a pod and the node',
    family: 'ipv4',
    objects: [
      service({
        name: 'empty',
        clusterIP: '10.96.0.13',
        ports: [http(), { name: 'dns', port: 53, protocol: 'UDP', targetPort: POD_UDP_PORT }],
      }),
    ],
    probes: [
      { from: 'c1', proto: 'tcp', to: '10.96.0.13', port: 80, count: 3, expect: { refused: true, withinMs: 500 } },
      { from: 'c1', proto: 'udp', to: '10.96.0.13', port: 53, count: 3, expect: { refused: true, withinMs: 500 } },
      { from: 'node', proto: 'tcp', to: '10.96.0.13', port: 80, count: 3, expect: { refused: true, withinMs: 500 } },
    ],
  },
  {
    name: 'nodeport',
    summary: 'NodePort from the LAN and on 127.0.0.1 from the node, masqueraded to the node address',
    family: 'ipv4',
    objects: [
      service({ name: 'np', type: 'NodePort', clusterIP: '10.96.0.14', ports: [{ ...http(), nodePort: 30080 }] }),
      endpointSlice({ service: 'np', ports: [httpSlicePort], endpoints: [{ pod: 'a1' }, { pod: 'b1' }] }),
    ],
    probes: [
      { from: 'x1', to: NODE_IP4, port: 30080, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'node', to: '127.0.0.1', port: 30080, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'node', to: NODE_IP4, port: 30080, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'c1', to: '10.96.0.14', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: c1.ip4 } },
    ],
  },
  {
    name: 'external-traffic-policy-local',
    summary: 'externalTrafficPolicy Local: source preserved, local endpoints only; DROP when none is local',
    family: 'ipv4',
    objects: [
      service({ name: 'etpl', type: 'NodePort', clusterIP: '10.96.0.15', externalTrafficPolicy: 'Local', ports: [{ ...http(), nodePort: 30081 }] }),
      endpointSlice({ service: 'etpl', ports: [httpSlicePort], endpoints: [{ pod: 'a1' }, { pod: 'a2' }, { pod: 'b1' }] }),
      service({ name: 'etpl-remote', type: 'NodePort', clusterIP: '10.96.0.16', externalTrafficPolicy: 'Local', ports: [{ ...http(), nodePort: 30082 }] }),
      endpointSlice({ service: 'etpl-remote', ports: [httpSlicePort], endpoints: [{ pod: 'b1' }, { pod: 'b2' }] }),
    ],
    probes: [
      // From outside: local endpoints only, the client's own address preserved.
      { from: 'x1', to: NODE_IP4, port: 30081, ...SPREAD, expect: { answeredBy: ['a1', 'a2'], seen: x1.ip4 } },
      // Pod traffic to the node port short-circuits to the cluster-wide chain (no SNAT).
      { from: 'c1', to: NODE_IP4, port: 30081, ...SPREAD, expect: { answeredBy: ['a1', 'a2', 'b1'], seen: c1.ip4 } },
      // The node itself: masqueraded, cluster-wide.
      { from: 'node', to: NODE_IP4, port: 30081, ...SPREAD, expect: { answeredBy: ['a1', 'a2', 'b1'], seen: NODE_POD_GW4 } },
      // The ClusterIP is unaffected by the external policy.
      { from: 'c1', to: '10.96.0.15', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a2', 'b1'], seen: c1.ip4 } },
      // No local endpoint: dropped (not refused, not forwarded).
      { from: 'x1', to: NODE_IP4, port: 30082, ...DROP_PROBES, expect: { dropped: true } },
    ],
  },
  {
    name: 'loadbalancer-source-ranges',
    summary: 'LoadBalancer IP with loadBalancerSourceRanges: allowed source reaches it, others are dropped',
    family: 'ipv4',
    objects: [
      service({
        name: 'lb',
        type: 'LoadBalancer',
        clusterIP: '10.96.0.17',
        ports: [{ ...http(), nodePort: 30083 }],
        loadBalancerIPs: [LB_IP],
        loadBalancerSourceRanges: [`${x1.ip4}/32`],
      }),
      endpointSlice({ service: 'lb', ports: [httpSlicePort], endpoints: [{ pod: 'a3' }, { pod: 'b2' }] }),
    ],
    probes: [
      { from: 'x1', to: LB_IP, port: 80, ...SPREAD, expect: { answeredBy: ['a3', 'b2'], seen: NODE_POD_GW4 } },
      { from: 'x2', to: LB_IP, port: 80, ...DROP_PROBES, expect: { dropped: true } },
      // The node port is not subject to the source ranges.
      { from: 'x2', to: NODE_IP4, port: 30083, ...SPREAD, expect: { answeredBy: ['a3', 'b2'], seen: NODE_POD_GW4 } },
    ],
  },
  {
    name: 'external-ips',
    summary: 'externalIPs reach the endpoints from the LAN, a pod and the node (masqueraded)',
    family: 'ipv4',
    objects: simple('extip', '10.96.0.18', ['a2', 'b1'], { externalIPs: [EXTERNAL_IP] }),
    probes: [
      { from: 'x1', to: EXTERNAL_IP, port: 80, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'c1', to: EXTERNAL_IP, port: 80, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'node', to: EXTERNAL_IP, port: 80, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: NODE_POD_GW4 } },
    ],
  },
  {
    name: 'internal-traffic-policy-local',
    summary: 'internalTrafficPolicy Local: only this node\'s endpoints; DROP when none is local',
    family: 'ipv4',
    objects: [
      ...simple('itpl', '10.96.0.19', ['a1', 'a3', 'b1'], { internalTrafficPolicy: 'Local' }),
      ...simple('itpl-remote', '10.96.0.20', ['b1', 'b2'], { internalTrafficPolicy: 'Local' }),
    ],
    probes: [
      { from: 'c1', to: '10.96.0.19', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a3'], seen: c1.ip4 } },
      { from: 'node', to: '10.96.0.19', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'a3'], seen: NODE_POD_GW4 } },
      { from: 'c1', to: '10.96.0.20', port: 80, ...DROP_PROBES, expect: { dropped: true } },
    ],
  },
  {
    name: 'terminating-endpoints',
    summary: 'terminating endpoints are skipped while a ready one exists, and used when none is',
    family: 'ipv4',
    objects: [
      service({ name: 'term-mixed', clusterIP: '10.96.0.21', ports: [http()] }),
      endpointSlice({
        service: 'term-mixed',
        ports: [httpSlicePort],
        endpoints: [
          { pod: 'a1' },
          { pod: 'a2', ready: false, serving: true, terminating: true },
          { pod: 'b1', ready: false, serving: true, terminating: true },
        ],
      }),
      service({ name: 'term-only', clusterIP: '10.96.0.22', ports: [http()] }),
      endpointSlice({
        service: 'term-only',
        ports: [httpSlicePort],
        endpoints: [
          { pod: 'a2', ready: false, serving: true, terminating: true },
          { pod: 'b1', ready: false, serving: true, terminating: true },
          // Not serving: never used, even as a fallback.
          { pod: 'a3', ready: false, serving: false, terminating: true },
        ],
      }),
    ],
    probes: [
      { from: 'c1', to: '10.96.0.21', port: 80, ...SPREAD, expect: { answeredBy: ['a1'], seen: c1.ip4 } },
      { from: 'c1', to: '10.96.0.22', port: 80, ...SPREAD, expect: { answeredBy: ['a2', 'b1'], seen: c1.ip4 } },
    ],
  },
  {
    name: 'hairpin',
    summary: 'a pod reaching itself through its Service sees the node address (KUBE-MARK-MASQ), others see the pod',
    family: 'ipv4',
    objects: simple('hairpin', '10.96.0.23', ['a1', 'a2']),
    probes: [
      {
        from: 'a1',
        to: '10.96.0.23',
        port: 80,
        ...SPREAD,
        timeoutMs: 1000, // answers take milliseconds; keeps the broken variant (half time out) short
        expect: { answeredBy: ['a1', 'a2'], seen: { a1: NODE_POD_GW4, a2: a1.ip4 } },
      },
    ],
  },
  {
    name: 'masquerade-all',
    summary: '--masquerade-all: even pod traffic to a ClusterIP is masqueraded',
    family: 'ipv4',
    kpcArgs: ['--masquerade-all'],
    objects: simple('masq', '10.96.0.24', ['a1', 'b1']),
    probes: [
      { from: 'c1', to: '10.96.0.24', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW4 } },
      { from: 'node', to: '10.96.0.24', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW4 } },
    ],
  },
  {
    name: 'ipv6-clusterip-nodeport',
    summary: 'IPv6: ClusterIP from a pod and the node, NodePort from the LAN',
    family: 'ipv6',
    objects: [
      service({ name: 'web6', type: 'NodePort', family: 'ipv6', clusterIP: 'fd00:96::10', ports: [{ ...http(), nodePort: 30090 }] }),
      endpointSlice({ service: 'web6', family: 'ipv6', ports: [httpSlicePort], endpoints: [{ pod: 'a1' }, { pod: 'b1' }] }),
    ],
    probes: [
      { from: 'c1', to: 'fd00:96::10', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: c1.ip6 } },
      { from: 'node', to: 'fd00:96::10', port: 80, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW6 } },
      { from: 'x1', to: NODE_IP6, port: 30090, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW6 } },
      { from: 'x2', to: NODE_IP6, port: 30090, ...SPREAD, expect: { answeredBy: ['a1', 'b1'], seen: NODE_POD_GW6 } },
    ],
  },
];

export function scenario(name: string): Scenario {
  const s = SCENARIOS.find((q) => q.name === name);
  if (!s) throw new Error(`no scenario ${name}`);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Running and checking
// ---------------------------------------------------------------------------------------------

/** The lab's Service ranges (what upstream owns): nftables mode drops unallocated addresses in them. */
export const SERVICE_CIDRS = '10.96.0.0/16,fd00:96::/64';

/**
 * A scenario as nftables mode must behave (shared/spec/nftables-mode.md): the same, except that
 * kube-proxy's nftables mode does not serve node ports on localhost (127.0.0.1 is not in
 * nodeport-ips, so nothing is DNATed and the node's own stack refuses the connection).
 */
export function forNftables(sc: Scenario): Scenario {
  return {
    ...sc,
    probes: sc.probes.map((p) => (p.from === 'node' && (p.to === '127.0.0.1' || p.to === '::1') && sc.objects.some((o) => JSON.stringify(o).includes('"nodePort"')) ? { ...p, count: 3, concurrency: 3, expect: { refused: true, withinMs: 500 } } : p)),
  };
}

/** The kpc command line for a scenario (without `node bin/kpc.js`). */
export function kpcArgs(sc: Scenario, manifestDir: string, mode: E2EMode = 'iptables', release?: string): string[] {
  return [
    'compile',
    '--standalone',
    ...(release !== undefined ? ['--kube-proxy-version', release] : []),
    ...(mode === 'nftables' ? ['--proxy-mode', 'nftables', '--service-cluster-ip-range', SERVICE_CIDRS] : []),
    '--hostname-override',
    NODE_NAME,
    '--node-ip',
    NODE_IP4,
    '--node-ip',
    NODE_IP6,
    '--cluster-cidr',
    `${CLUSTER_CIDR4},${CLUSTER_CIDR6}`,
    ...(sc.family === 'ipv6' ? ['--ip-family', 'ipv6'] : []),
    ...(sc.kpcArgs ?? []),
    '-f',
    manifestDir,
  ];
}

/** Empty filter and nat tables: loaded (without --noflush) to reset a family. */
const EMPTY_TABLES = [
  '*filter',
  ':INPUT ACCEPT [0:0]',
  ':FORWARD ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  'COMMIT',
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':INPUT ACCEPT [0:0]',
  ':OUTPUT ACCEPT [0:0]',
  ':POSTROUTING ACCEPT [0:0]',
  'COMMIT',
  '',
].join('\n');

/** Removes every rule of both families (iptables and kube-proxy's nftables tables) from the node and forgets all connections. */
export async function resetNode(lab: Lab): Promise<void> {
  for (const family of ['ipv4', 'ipv6'] as const) {
    const r = await iptablesRestoreLoad(lab.nodeNs, EMPTY_TABLES, family, { noflush: false, nfacct: false });
    if (r.code !== 0) throw new Error(`resetting ${family} rules failed: ${r.stderr.trim()}`);
  }
  // `destroy` would be simpler but needs nft 1.0.8; add + delete works with any version.
  const nft = await nsExec(lab.nodeNs, ['nft', '-f', '-'], { input: 'add table ip kube-proxy\ndelete table ip kube-proxy\nadd table ip6 kube-proxy\ndelete table ip6 kube-proxy\n' });
  if (nft.code !== 0) throw new Error(`resetting the nftables tables failed: ${nft.stderr.trim()}`);
  await flushConntrack(lab.nodeNs);
}

function defaultsOf(p: Probe) {
  const dropped = 'dropped' in p.expect;
  return {
    proto: p.proto ?? 'tcp',
    count: p.count ?? 30,
    timeoutMs: p.timeoutMs ?? (dropped ? 800 : 1500),
    concurrency: p.concurrency ?? (dropped ? (p.count ?? 30) : 10),
  };
}

function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([v, n]) => `${v}×${n}`)
    .join(' ');
}

function describeResults(results: ProbeResult[]): string {
  const parts: string[] = [];
  const ok = results.filter((r) => r.outcome === 'ok');
  if (ok.length) {
    const byPod = new Map<string, Set<string>>();
    for (const r of ok) {
      const set = byPod.get(r.pod!) ?? new Set<string>();
      set.add(r.seen ?? '?');
      byPod.set(r.pod!, set);
    }
    parts.push(`answered by ${tally(ok.map((r) => r.pod!))}`);
    parts.push(`saw ${[...byPod.entries()].sort().map(([p, s]) => `${p}<-${[...s].join('|')}`).join(' ')}`);
  }
  const failed = results.filter((r) => r.outcome !== 'ok');
  if (failed.length) parts.push(`failed ${tally(failed.map((r) => (r.detail ? `${r.outcome}(${r.detail})` : r.outcome)))}`);
  parts.push(`max ${Math.max(...results.map((r) => r.ms))} ms`);
  return parts.join('; ');
}

/** Compares probe results with an expectation; returns the problems (empty = as expected). */
export function evaluate(results: ProbeResult[], expect: Expectation): string[] {
  const problems: string[] = [];
  if ('answeredBy' in expect) {
    const failed = results.filter((r) => r.outcome !== 'ok');
    if (failed.length) problems.push(`${failed.length} of ${results.length} probes were not answered`);
    const ok = results.filter((r) => r.outcome === 'ok');
    const answered = new Set(ok.map((r) => r.pod!));
    const allowed = new Set(expect.answeredBy);
    const unexpected = [...answered].filter((p) => !allowed.has(p)).sort();
    if (unexpected.length) problems.push(`answered by unexpected ${unexpected.join(', ')} (expected only ${expect.answeredBy.join(', ')})`);
    if (expect.sticky) {
      if (answered.size > 1) problems.push(`affinity broken: answered by ${[...answered].sort().join(', ')} (expected one pod)`);
    } else {
      const missing = expect.answeredBy.filter((p) => !answered.has(p));
      if (missing.length && ok.length) problems.push(`never answered by ${missing.join(', ')}`);
    }
    if (expect.seen !== undefined) {
      for (const r of ok) {
        const want = typeof expect.seen === 'string' ? expect.seen : expect.seen[r.pod!];
        if (want !== undefined && r.seen !== want) {
          problems.push(`${r.pod} saw source ${r.seen} (expected ${want})`);
          break; // one example is enough
        }
      }
    }
  } else if ('refused' in expect) {
    const notRefused = results.filter((r) => r.outcome !== 'refused');
    if (notRefused.length) problems.push(`${notRefused.length} of ${results.length} probes were not refused`);
    const slow = results.filter((r) => r.outcome === 'refused' && r.ms > expect.withinMs);
    if (slow.length) problems.push(`refusal took up to ${Math.max(...slow.map((r) => r.ms))} ms (expected at once, < ${expect.withinMs} ms)`);
  } else {
    const notDropped = results.filter((r) => !(r.outcome === 'timeout' && r.detail !== 'connected, no answer'));
    if (notDropped.length) problems.push(`${notDropped.length} of ${results.length} probes were not dropped`);
  }
  return problems;
}

function probeLabel(p: Probe, proto: string, count: number): string {
  const host = p.to.includes(':') ? `[${p.to}]` : p.to;
  return `${p.from} -> ${host}:${p.port}/${proto} ×${count}`;
}

/** Sends the probes and checks them (the lab's rules are whatever is loaded). */
export async function runProbes(
  lab: Lab,
  probes: readonly Probe[],
  observe?: RunOptions['observe'],
): Promise<{ problems: string[]; log: string[] }> {
  const problems: string[] = [];
  const log: string[] = [];
  for (const p of probes) {
    const agent = lab.agents[p.from];
    if (!agent) throw new Error(`no agent ${p.from}`);
    const d = defaultsOf(p);
    const label = probeLabel(p, d.proto, d.count);
    const results = await agent.probe({ proto: d.proto, host: p.to, port: p.port, count: d.count, timeoutMs: d.timeoutMs, concurrency: d.concurrency });
    observe?.(p, results);
    const found = evaluate(results, p.expect);
    log.push(`${found.length ? 'FAIL' : 'ok  '} ${label}: ${describeResults(results)}`);
    for (const f of found) problems.push(`${label}: ${f}`);
  }
  return { problems, log };
}

/** `node bin/kpc.js ARGS` (offline: runs in the root namespace, touches no network). */
export function runKpc(args: readonly string[]): Promise<ExecResult> {
  return exec([process.execPath, KPC_BIN, ...args], { timeoutMs: 30_000 });
}

let kpcProblem: Promise<string | undefined> | undefined;

/**
 * Why `node bin/kpc.js` cannot run (usually: dist/ not built), or undefined when `kpc --version`
 * works. Checked once.
 */
export function kpcUnavailable(): Promise<string | undefined> {
  kpcProblem ??= runKpc(['--version']).then((r) =>
    r.code === 0
      ? undefined
      : `\`node bin/kpc.js --version\` exited ${r.code}: ${r.stderr.trim().split('\n').slice(0, 5).join(' | ')}. Run \`npm run build\` first.`,
  );
  return kpcProblem;
}

/**
 * The scenario's check: compile, load, probe. Returns the problems instead of throwing, so that
 * the same function can be shown to FAIL on broken rules. `workDir` receives
 * `<name>/manifests.yaml`, `rules.txt` and `report.txt`.
 */
export async function runScenario(lab: Lab, sc: Scenario, workDir: string, opts: RunOptions = {}): Promise<ScenarioResult> {
  const mode = opts.mode ?? 'iptables';
  const dir = join(workDir, (mode === 'nftables' ? 'nftables-' : '') + (opts.release ? `${opts.release}-` : '') + sc.name + (opts.mutate ? '-broken' : ''));
  const manifestDir = join(dir, 'manifests');
  mkdirSync(manifestDir, { recursive: true });
  writeFileSync(join(manifestDir, 'manifests.yaml'), toYaml(sc.objects));
  const args = kpcArgs(sc, manifestDir, mode, opts.release);
  const header = [`scenario ${sc.name}: ${sc.summary}`, `kpc ${args.join(' ')}`];
  const finish = (r: Omit<ScenarioResult, 'ok' | 'report' | 'dir'>): ScenarioResult => {
    const report = [
      ...header,
      ...r.log,
      ...(r.problems.length ? ['problems:', ...r.problems.map((p) => `  - ${p}`), `rules: ${join(dir, 'rules.txt')}`] : []),
    ].join('\n');
    writeFileSync(join(dir, 'report.txt'), `${report}\n`);
    return { ...r, ok: r.problems.length === 0, dir, report };
  };

  const compiled = await (opts.kpc ?? runKpc)(args);
  if (compiled.code !== 0 || compiled.stdout.trim() === '') {
    return finish({
      failedAt: 'compile',
      problems: [`kpc compile exited ${compiled.code}${compiled.timedOut ? ' (timed out)' : ''}: ${compiled.stderr.trim() || '(no output)'}`],
      log: [],
      rules: compiled.stdout,
    });
  }
  const rules = opts.mutate ? opts.mutate(compiled.stdout) : compiled.stdout;
  writeFileSync(join(dir, 'rules.txt'), rules);

  await resetNode(lab);
  // As kube-proxy runs it (--noflush, or the nftables transaction with `nft -f`), on a node with no
  // rules yet; the nfacct objects the text names, if any, are created first.
  const load =
    mode === 'nftables'
      ? await nsExec(lab.nodeNs, ['nft', '-f', '-'], { input: rules, timeoutMs: 30_000 })
      : await iptablesRestoreLoad(lab.nodeNs, rules, sc.family, { noflush: true });
  if (load.code !== 0) {
    return finish({
      failedAt: 'load',
      problems: [`${mode === 'nftables' ? 'nft -f' : sc.family === 'ipv6' ? 'ip6tables-restore --noflush' : 'iptables-restore --noflush'} exited ${load.code}: ${load.stderr.trim()}`],
      log: [],
      rules,
    });
  }
  await flushConntrack(lab.nodeNs);

  const { problems, log } = await runProbes(lab, sc.probes, opts.observe);
  return finish({ ...(problems.length ? { failedAt: 'probe' as const } : {}), problems, log, rules });
}

/** Removes the lines matching `re` (a broken-rules variant); throws if none matched. */
export function withoutLines(re: RegExp): (rules: string) => string {
  return (rules) => {
    const lines = rules.split('\n');
    const kept = lines.filter((l) => !re.test(l));
    if (kept.length === lines.length) throw new Error(`broken variant: no line matches ${re}`);
    return kept.join('\n');
  };
}

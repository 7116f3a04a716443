/**
 * topology.ts — the dataplane lab: one Kubernetes node (`node-a`) made of network namespaces.
 *
 *                       LAN bridge lan0 (inside the node namespace)
 *                192.168.50.0/24, fd00:50::/64
 *     x1 .21 ──┐     x2 .22 ──┐     upstream .1 ──┐
 *   (outside    │   (outside   │   (the node's     │   default gateway; owns 10.96/16, 198.51.100/24,
 *    client)    │    client)   │    gateway)       │   203.0.113/24 and fd00:96::/64 with local
 *               └──────────────┴───────────────────┤   routes: a packet kube-proxy should have
 *                                                  │   DNATed or dropped but let through is
 *                                         lan0 192.168.50.10, fd00:50::10   answered by "upstream")
 *                               ┌─────────────────────────────────┐
 *                               │ node namespace "node-a"         │  ip_forward, ipv6 forwarding,
 *                               │ kpc's rules are loaded here     │  route_localnet=1,
 *                               │ vp-<pod>: 10.244.1.1/32,        │  send_redirects=0
 *                               │   fd00:10:244::1/128 (gateway)  │
 *                               └──┬─────┬─────┬─────┬─────┬─────┬┘
 *                       /32 + /128 routes, one routed veth per pod (pod side eth0)
 *                          a1     a2    a3    c1    b1    b2
 *                        .1.11  .1.12 .1.13 .1.50 .2.11 .2.12     (10.244.x.y; fd00:10:244::x:y)
 *                        └─ local pods (node-a) ──┘  └ remote (node-b) ┘
 *
 * Pods a1 a2 a3 b1 b2 c1 run an agent that answers TCP 8080 and UDP 9053 with its name and the
 * source it saw; c1 is the usual client. b1/b2 are "remote" pods: EndpointSlices put them on
 * node-b, but their namespaces hang off node-a too (reachable from the node like any routed pod
 * network). Every pod's default route is the node (10.244.1.1 / fd00:10:244::1), and that is also
 * the address a pod sees when kube-proxy's rules masquerade traffic to it. x1/x2 route everything
 * via the node (so LoadBalancer and external IPs reach it). The node's own default route goes to
 * "upstream".
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createNetns,
  deleteNetns,
  exec,
  ipBatch,
  nsSpawn,
  nsSysctl,
  type BackgroundProcess,
} from '../netns/lab.js';

export const NODE_NAME = 'node-a';
export const REMOTE_NODE_NAME = 'node-b';

/** The node's LAN addresses (its InternalIPs, `--node-ip`). */
export const NODE_IP4 = '192.168.50.10';
export const NODE_IP6 = 'fd00:50::10';
/** The node's address on every pod link: what a pod sees when traffic to it is masqueraded. */
export const NODE_POD_GW4 = '10.244.1.1';
export const NODE_POD_GW6 = 'fd00:10:244::1';
export const CLUSTER_CIDR4 = '10.244.0.0/16';
export const CLUSTER_CIDR6 = 'fd00:10:244::/64';
export const UPSTREAM_IP4 = '192.168.50.1';
export const UPSTREAM_IP6 = 'fd00:50::1';
/** Ranges "upstream" answers for (service IPs, external IPs, LB IPs): leaks show up as "upstream". */
export const UPSTREAM_ANYIP = ['10.96.0.0/16', '198.51.100.0/24', '203.0.113.0/24', 'fd00:96::/64'];

/** What every pod agent listens on (the EndpointSlice ports). */
export const POD_TCP_PORT = 8080;
export const POD_UDP_PORT = 9053;
/** Ports "upstream" listens on: the pod ports and the Service ports the scenarios use. */
const UPSTREAM_TCP_PORTS = [80, 443, 8080];
const UPSTREAM_UDP_PORTS = [53, 9053];

export interface PodDef {
  name: string;
  node: string;
  ip4: string;
  ip6: string;
}

export const PODS: readonly PodDef[] = [
  { name: 'a1', node: NODE_NAME, ip4: '10.244.1.11', ip6: 'fd00:10:244::1:11' },
  { name: 'a2', node: NODE_NAME, ip4: '10.244.1.12', ip6: 'fd00:10:244::1:12' },
  { name: 'a3', node: NODE_NAME, ip4: '10.244.1.13', ip6: 'fd00:10:244::1:13' },
  { name: 'c1', node: NODE_NAME, ip4: '10.244.1.50', ip6: 'fd00:10:244::1:50' },
  { name: 'b1', node: REMOTE_NODE_NAME, ip4: '10.244.2.11', ip6: 'fd00:10:244::2:11' },
  { name: 'b2', node: REMOTE_NODE_NAME, ip4: '10.244.2.12', ip6: 'fd00:10:244::2:12' },
];

export interface HostDef {
  name: string;
  ip4: string;
  ip6: string;
}

/** Hosts outside the cluster, on the node's LAN. */
export const EXTERNAL_HOSTS: readonly HostDef[] = [
  { name: 'x1', ip4: '192.168.50.21', ip6: 'fd00:50::21' },
  { name: 'x2', ip4: '192.168.50.22', ip6: 'fd00:50::22' },
];

export function pod(name: string): PodDef {
  const p = PODS.find((q) => q.name === name);
  if (!p) throw new Error(`no pod ${name}`);
  return p;
}

export function externalHost(name: string): HostDef {
  const h = EXTERNAL_HOSTS.find((q) => q.name === name);
  if (!h) throw new Error(`no external host ${name}`);
  return h;
}

const AGENT = join(dirname(fileURLToPath(import.meta.url)), 'agent.mjs');

// ---------------------------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------------------------

export type ProbeOutcome = 'ok' | 'refused' | 'timeout' | 'unreachable' | 'reset' | 'error';

export interface ProbeResult {
  outcome: ProbeOutcome;
  /** The agent that answered (ok only). */
  pod?: string;
  /** The source address that agent saw (ok only). */
  seen?: string;
  /** The address:port the answering socket had (TCP; '*' for UDP). */
  dst?: string;
  detail?: string;
  ms: number;
}

export interface ProbeRequest {
  proto: 'tcp' | 'udp';
  host: string;
  port: number;
  count: number;
  timeoutMs: number;
  concurrency: number;
}

/** The agent process of one namespace: a server (pods) and a prober (everyone). */
export class Agent {
  private nextId = 1;
  private buffer = '';
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(
    readonly name: string,
    readonly ns: string,
    readonly proc: BackgroundProcess,
  ) {
    proc.child.stdout!.on('data', (d: string) => this.onData(d));
    proc.child.on('exit', (code, signal) => {
      const err = new Error(`agent ${name} exited (${code ?? signal}): ${proc.stderr().trim()}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
  }

  private onData(d: string): void {
    this.buffer += d;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let msg: { id?: number; error?: string };
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof msg.id !== 'number') continue;
      const p = this.pending.get(msg.id);
      if (!p) continue;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`agent ${this.name}: ${msg.error}`));
      else p.resolve(msg);
    }
  }

  private request<T>(cmd: Record<string, unknown>, timeoutMs: number): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`agent ${this.name}: no answer to ${JSON.stringify(cmd)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.proc.child.stdin!.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  async probe(req: ProbeRequest): Promise<ProbeResult[]> {
    // Worst case: every probe times out, in count/concurrency rounds; plus slack.
    const rounds = Math.ceil(req.count / Math.max(1, req.concurrency));
    const budget = rounds * req.timeoutMs + 5_000;
    const r = await this.request<{ results: ProbeResult[] }>({ op: 'probe', ...req }, budget);
    return r.results;
  }

  async ping(): Promise<void> {
    await this.request({ op: 'ping' }, 5_000);
  }

  stop(): void {
    this.proc.child.stdin?.end();
  }
}

async function startAgent(ns: string, name: string, tcp: number[], udp: number[]): Promise<Agent> {
  const argv = [process.execPath, AGENT, '--name', name];
  if (tcp.length) argv.push('--tcp', tcp.join(','));
  if (udp.length) argv.push('--udp', udp.join(','));
  const proc = nsSpawn(ns, argv, { stdin: 'pipe' });
  await proc.waitForOutput(/"ready":true/, 10_000);
  return new Agent(name, ns, proc);
}

// ---------------------------------------------------------------------------------------------
// The lab
// ---------------------------------------------------------------------------------------------

export interface Lab {
  /** The node namespace (kube-proxy's rules go here). */
  nodeNs: string;
  /** Namespace of every participant by name: 'node', 'upstream', pods, external hosts. */
  ns: Record<string, string>;
  /** Agent of every participant by name ('node', 'upstream', 'a1', ..., 'x1', ...). */
  agents: Record<string, Agent>;
  /** Deletes every namespace (killing the agents). Never throws; safe to call twice. */
  destroy(): Promise<void>;
}

/**
 * Builds the whole topology. On failure everything made so far is deleted before the error is
 * rethrown; on success the caller must call `lab.destroy()` (afterAll).
 */
export async function createLab(): Promise<Lab> {
  const made: string[] = [];
  const agents: Record<string, Agent> = {};
  const destroy = async () => {
    for (const a of Object.values(agents)) a.stop();
    const all = made.splice(0);
    await Promise.all(all.map((n) => deleteNetns(n)));
  };
  try {
    const names = ['node', 'upstream', ...PODS.map((p) => p.name), ...EXTERNAL_HOSTS.map((h) => h.name)];
    const ns: Record<string, string> = {};
    for (const n of names) {
      const created = await createNetns('e2e');
      made.push(created);
      ns[n] = created;
    }
    const node = ns.node!;

    // Sysctls first, so that interfaces created afterwards inherit the `default` values.
    // No IPv6 duplicate address detection anywhere: a still-tentative link-local address makes
    // neighbour solicitations go out from '::' (e.g. upstream answering from an AnyIP address),
    // which nobody answers, and the first probes time out.
    const noDad = { 'net.ipv6.conf.default.accept_dad': 0, 'net.ipv6.conf.all.accept_dad': 0 };
    await Promise.all(names.filter((n) => n !== 'node').map((n) => nsSysctl(ns[n]!, noDad)));
    await nsSysctl(node, {
      ...noDad,
      'net.ipv4.ip_forward': 1,
      'net.ipv6.conf.all.forwarding': 1,
      'net.ipv4.conf.all.route_localnet': 1, // kube-proxy sets it for node ports on 127.0.0.1
      'net.ipv4.conf.all.send_redirects': 0, // hairpin and LAN-to-LAN forwarding: no ICMP redirects
      'net.ipv4.conf.default.send_redirects': 0,
      'net.ipv4.conf.all.rp_filter': 0,
      'net.ipv4.conf.default.rp_filter': 0,
      // REJECT answers with ICMP port-unreachable, which the kernel rate-limits per peer (a burst
      // of 6, then one a second). Every scenario of the file rejects probes from the same pod, so
      // without this a late scenario's third UDP probe gets no answer and looks "not refused".
      'net.ipv4.icmp_ratelimit': 0,
      'net.ipv6.icmp.ratelimit': 0,
      'net.bridge.bridge-nf-call-iptables?': 0,
      'net.bridge.bridge-nf-call-ip6tables?': 0,
    });

    // Phase 1 (node): the LAN bridge, every veth (the far end is created in its namespace).
    const nodeLines = [
      'link add lan0 type bridge',
      'link set lan0 up',
      `addr add ${NODE_IP4}/24 dev lan0`,
      `addr add ${NODE_IP6}/64 dev lan0 nodad`,
    ];
    for (const p of PODS) {
      const dev = `vp-${p.name}`;
      nodeLines.push(
        `link add ${dev} type veth peer name eth0 netns ${ns[p.name]}`,
        `addr add ${NODE_POD_GW4}/32 dev ${dev}`,
        `addr add ${NODE_POD_GW6}/128 dev ${dev} nodad`,
        `link set ${dev} up`,
      );
    }
    for (const h of [...EXTERNAL_HOSTS, { name: 'upstream' }]) {
      const dev = `vx-${h.name.slice(0, 8)}`;
      nodeLines.push(`link add ${dev} type veth peer name eth0 netns ${ns[h.name]}`, `link set ${dev} master lan0`, `link set ${dev} up`);
    }
    await ipBatch(node, nodeLines);

    // Phase 2 (everyone else, in parallel): addresses and routes.
    const jobs: Promise<void>[] = [];
    for (const p of PODS) {
      jobs.push(
        ipBatch(ns[p.name]!, [
          `addr add ${p.ip4}/32 dev eth0`,
          `addr add ${p.ip6}/128 dev eth0 nodad`,
          'link set eth0 up',
          `route add ${NODE_POD_GW4}/32 dev eth0 scope link`,
          `route add default via ${NODE_POD_GW4} dev eth0`,
          `route add ${NODE_POD_GW6}/128 dev eth0`,
          `route add ::/0 via ${NODE_POD_GW6} dev eth0`,
        ]),
      );
    }
    for (const h of EXTERNAL_HOSTS) {
      jobs.push(
        ipBatch(ns[h.name]!, [
          `addr add ${h.ip4}/24 dev eth0`,
          `addr add ${h.ip6}/64 dev eth0 nodad`,
          'link set eth0 up',
          `route add default via ${NODE_IP4} dev eth0`,
          `route add ::/0 via ${NODE_IP6} dev eth0`,
        ]),
      );
    }
    jobs.push(
      ipBatch(ns.upstream!, [
        `addr add ${UPSTREAM_IP4}/24 dev eth0`,
        `addr add ${UPSTREAM_IP6}/64 dev eth0 nodad`,
        'link set eth0 up',
        `route add ${CLUSTER_CIDR4} via ${NODE_IP4} dev eth0`,
        `route add ${CLUSTER_CIDR6} via ${NODE_IP6} dev eth0`,
        ...UPSTREAM_ANYIP.map((c) => `route add local ${c} dev lo`),
      ]),
    );
    await Promise.all(jobs);

    // Phase 3 (node): a /32 and a /128 route per pod, and the default route to upstream.
    const routes: string[] = [];
    for (const p of PODS) {
      routes.push(`route add ${p.ip4}/32 dev vp-${p.name}`, `route add ${p.ip6}/128 dev vp-${p.name}`);
    }
    routes.push(`route add default via ${UPSTREAM_IP4} dev lan0`, `route add ::/0 via ${UPSTREAM_IP6} dev lan0`);
    await ipBatch(node, routes);

    // Agents: servers in pods and upstream, probers everywhere.
    const starts: Promise<Agent>[] = [];
    for (const p of PODS) starts.push(startAgent(ns[p.name]!, p.name, [POD_TCP_PORT], [POD_UDP_PORT]));
    starts.push(startAgent(ns.upstream!, 'upstream', UPSTREAM_TCP_PORTS, UPSTREAM_UDP_PORTS));
    starts.push(startAgent(node, 'node', [], []));
    for (const h of EXTERNAL_HOSTS) starts.push(startAgent(ns[h.name]!, h.name, [], []));
    for (const a of await Promise.all(starts)) agents[a.name] = a;

    return { nodeNs: node, ns, agents, destroy };
  } catch (e) {
    await destroy();
    throw e;
  }
}

/** Flushes the node's connection-tracking table (both families) between scenarios. */
export async function flushConntrack(nodeNs: string): Promise<void> {
  for (const family of ['ipv4', 'ipv6']) {
    const r = await exec(['ip', 'netns', 'exec', nodeNs, 'conntrack', '-F', '-f', family]);
    // conntrack exits 1 with "table is empty"-like messages on some versions; only real errors count.
    if (r.code !== 0 && !/emptied|0 flow entries/i.test(r.stderr)) {
      throw new Error(`conntrack -F -f ${family} in ${nodeNs} failed: ${r.stderr.trim()}`);
    }
  }
}

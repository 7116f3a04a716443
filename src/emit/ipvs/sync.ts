/**
 * The body of the IPVS proxier's syncProxyRules (pkg/proxy/ipvs/proxier.go), for a full sync
 * on a node without previous state: per service port, in kpc's service-port order (kube-proxy
 * iterates its service map in Go map order),
 *
 *   1. KUBE-LOOP-BACK gets `epIP,proto:epPort,epIP` for every local endpoint (any condition);
 *   2. cluster IP: KUBE-CLUSTER-IP entry, a virtual server bound on kube-ipvs0, real servers
 *      with onlyLocal = internalTrafficPolicy Local;
 *   3. each external IP: KUBE-EXTERNAL-IP or (ETP Local) KUBE-EXTERNAL-IP-LOCAL, a virtual
 *      server, bound unless the address is one of the node's, onlyLocal = ETP Local;
 *   4. each LB VIP: KUBE-LOAD-BALANCER (+ -LOCAL for ETP Local; + -FW, -SOURCE-CIDR per range
 *      and -SOURCE-IP when a range holds the node IP, else a no-node-access DROP), a virtual
 *      server, bound unless a node address, onlyLocal = ETP Local;
 *   5. node port: skipped entirely (health-check entry included) when there are no node-port
 *      addresses; TCP/UDP port in the bitmap set, SCTP `nodeIP,sctp:port` per node address;
 *      the -LOCAL twin for ETP Local; one virtual server per node address, never bound;
 *   6. health-check node port in KUBE-HEALTH-CHECK-NODE-PORT.
 * Then KUBE-IPVS-IPS := the bound addresses.
 *
 * Entry validation failures that kube-proxy logs and skips cannot happen here: the IR holds
 * canonical addresses and valid ports only. What the kernel then refuses, kpc leaves out and
 * reports (IpvsState.refused): an entry whose address is unspecified (0.0.0.0 or ::, which
 * the API server accepts as a LoadBalancer ingress IP) makes `ipset add` fail with "Kernel
 * error received: Invalid argument"; kube-proxy logs that error and goes on without the entry.
 */

import type { Endpoint, ProxyIR, ServicePort } from '../../ir/model.js';
import type { EndpointCategories } from '../../ir/topology.js';
import { planContext, planServicePort, type PlanContext } from '../../ir/plan.js';
import { nodeAddressSet, nodePortIPs } from './node-addresses.js';
import { sortIPs } from './order.js';
import { realServerEndpoints } from './real-servers.js';
import { safeCIDR } from './safe-text.js';
import { effectiveScheduler, schedulerFlags } from './scheduler.js';
import { emptySetEntries, type SetEntries, type SetKey } from './sets.js';
import { virtualServerKey, type IpvsState, type NoNodeAccessEntry, type RefusedEntry, type RealServer, type VirtualServer, type VirtualServerKind } from './state.js';

const NODE_PORT_SETS: Record<'tcp' | 'udp' | 'sctp', { all: SetKey; local: SetKey }> = {
  tcp: { all: 'KUBE-NODE-PORT-TCP', local: 'KUBE-NODE-PORT-LOCAL-TCP' },
  udp: { all: 'KUBE-NODE-PORT-UDP', local: 'KUBE-NODE-PORT-LOCAL-UDP' },
  sctp: { all: 'KUBE-NODE-PORT-SCTP-HASH', local: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH' },
};

/**
 * The sync's accumulating state. A full sync writes every service port into one; the watch's
 * IPVS fast path (src/watch/ipvs.ts) writes each port into its own and merges them (merge).
 */
export class SyncState {
  readonly sets: SetEntries = emptySetEntries();
  readonly virtualServers = new Map<string, VirtualServer>();
  readonly bind = new Set<string>();
  readonly noNodeAccess: NoNodeAccessEntry[] = [];
  readonly refused: RefusedEntry[] = [];
  /** The service port being synced, named in refusals. */
  spn = '';

  add(set: SetKey, entry: string): void {
    if (hasUnspecifiedAddress(entry)) this.refused.push({ set, entry, spn: this.spn });
    else this.sets.get(set)!.add(entry);
  }

  /** `ip addr add 0.0.0.0/32 dev kube-ipvs0` succeeds and adds nothing; so nothing is bound. */
  bindAddress(ip: string): void {
    if (!isUnspecified(ip)) this.bind.add(ip);
  }

  /** Another state's writes, as if its service ports had been synced here after the ones so far. */
  merge(other: SyncState): void {
    for (const [key, entries] of other.sets) {
      if (entries.size === 0) continue;
      const into = this.sets.get(key)!;
      for (const e of entries) into.add(e);
    }
    for (const [key, vs] of other.virtualServers) {
      this.virtualServers.delete(key);
      this.virtualServers.set(key, vs);
    }
    for (const ip of other.bind) this.bind.add(ip);
    for (const e of other.noNodeAccess) this.noNodeAccess.push(e);
    for (const e of other.refused) this.refused.push(e);
  }
}

const isUnspecified = (ip: string) => ip === '0.0.0.0' || ip === '::';

/** The entry's first field is its address (set entries are `ip`, `ip,proto:port[,...]` or a port). */
function hasUnspecifiedAddress(entry: string): boolean {
  const comma = entry.indexOf(',');
  return isUnspecified(comma < 0 ? entry : entry.slice(0, comma));
}

interface PortContext {
  ir: ProxyIR;
  sp: ServicePort;
  proto: 'tcp' | 'udp' | 'sctp';
  cat: EndpointCategories;
  state: SyncState;
}

/** What every service port's sync reads from the IR as a whole (the node's addresses, the plan's context). */
export interface SyncContext {
  ir: ProxyIR;
  nodeAddresses: ReadonlySet<string>;
  npIPs: readonly string[];
  planning: PlanContext;
}

export function syncContext(ir: ProxyIR): SyncContext {
  return { ir, nodeAddresses: new Set(nodeAddressSet(ir)), npIPs: nodePortIPs(ir), planning: planContext(ir) };
}

export function syncIpvs(ir: ProxyIR): IpvsState {
  const ctx = syncContext(ir);
  const state = new SyncState();
  for (const sp of ir.servicePorts) syncServicePort(ctx, sp, state);
  return finishSync(ctx, state);
}

/** One service port's part of the sync (steps 1-6 of the file comment), written into `state`. */
export function syncServicePort(ctx: SyncContext, sp: ServicePort, state: SyncState): void {
  const { ir, nodeAddresses, npIPs } = ctx;
  const proto = sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
  const plan = planServicePort(sp, ctx.planning);
  const pc: PortContext = { ir, sp, proto, cat: plan.categories, state };
  state.spn = sp.spn;

  // Traffic that loops back to its originator gets SNAT: every local endpoint, whatever its state.
  for (const ep of sp.endpoints) {
    if (ep.isLocal) state.add('KUBE-LOOP-BACK', `${ep.ip},${proto}:${ep.port},${ep.ip}`);
  }

  state.add('KUBE-CLUSTER-IP', `${sp.clusterIP},${proto}:${sp.port}`);
  addVirtualServer(pc, sp.clusterIP, sp.port, 'cluster-ip', sp.internalPolicyLocal);
  state.bindAddress(sp.clusterIP);

  for (const ip of sp.externalIPs) {
    state.add(sp.externalPolicyLocal ? 'KUBE-EXTERNAL-IP-LOCAL' : 'KUBE-EXTERNAL-IP', `${ip},${proto}:${sp.port}`);
    addVirtualServer(pc, ip, sp.port, 'external-ip', sp.externalPolicyLocal);
    // Never bind an address another interface of the node already has.
    if (!nodeAddresses.has(ip)) state.bindAddress(ip);
  }

  for (const ip of sp.loadBalancerVIPs) {
    const entry = `${ip},${proto}:${sp.port}`;
    state.add('KUBE-LOAD-BALANCER', entry);
    if (sp.externalPolicyLocal) state.add('KUBE-LOAD-BALANCER-LOCAL', entry);
    if (sp.loadBalancerSourceRanges.length > 0) {
      state.add('KUBE-LOAD-BALANCER-FW', entry);
      for (const cidr of sp.loadBalancerSourceRanges) state.add('KUBE-LOAD-BALANCER-SOURCE-CIDR', `${entry},${safeCIDR(cidr, ir.family)}`);
      // The VIP is local (kube-ipvs0), so the node's own requests carry it as source.
      if (plan.nodeAllowedBySourceRanges) state.add('KUBE-LOAD-BALANCER-SOURCE-IP', `${entry},${ip}`);
      else state.noNodeAccess.push({ ip, protocol: proto, port: sp.port });
    }
    addVirtualServer(pc, ip, sp.port, 'load-balancer', sp.externalPolicyLocal);
    if (!nodeAddresses.has(ip)) state.bindAddress(ip);
  }

  if (sp.nodePort !== 0) {
    // kube-proxy `continue`s here: no node-port addresses means no health-check entry either.
    if (npIPs.length === 0) return;
    const sets = NODE_PORT_SETS[proto];
    const entries = proto === 'sctp' ? npIPs.map((ip) => `${ip},sctp:${sp.nodePort}`) : [String(sp.nodePort)];
    for (const e of entries) state.add(sets.all, e);
    if (sp.externalPolicyLocal) for (const e of entries) state.add(sets.local, e);
    for (const ip of npIPs) addVirtualServer(pc, ip, sp.nodePort, 'node-port', sp.externalPolicyLocal);
  }

  if (sp.healthCheckNodePort !== 0) state.add('KUBE-HEALTH-CHECK-NODE-PORT', String(sp.healthCheckNodePort));
}

/** After the last service port: KUBE-IPVS-IPS := the bound addresses, and the state as data. */
export function finishSync(ctx: SyncContext, state: SyncState): IpvsState {
  const bindAddresses = sortIPs(state.bind);
  const ipvsIPs = state.sets.get('KUBE-IPVS-IPS')!;
  for (const ip of bindAddresses) ipvsIPs.add(ip);

  return {
    family: ctx.ir.family,
    virtualServers: [...state.virtualServers.values()],
    sets: state.sets,
    bindAddresses,
    noNodeAccess: state.noNodeAccess,
    nodePortIPs: [...ctx.npIPs],
    refused: state.refused,
  };
}

/** syncService + syncEndpoint for one virtual server. */
function addVirtualServer(pc: PortContext, ip: string, port: number, kind: VirtualServerKind, onlyLocal: boolean): void {
  const { sp, ir, cat, state } = pc;
  const scheduler = effectiveScheduler(ir.knobs.ipvs.scheduler);
  const vs: VirtualServer = {
    protocol: sp.protocol,
    ip,
    port,
    scheduler,
    realServers: realServerEndpoints(cat, onlyLocal).map(toRealServer),
    spn: sp.spn,
    kind,
  };
  if (sp.stickySeconds !== undefined) vs.persistenceTimeout = sp.stickySeconds;
  const flags = schedulerFlags(scheduler);
  if (flags !== undefined) vs.schedFlags = flags;
  // The same ip:port/PROTOCOL from two service ports: the later sync wins (kube-proxy: Go map order).
  const key = virtualServerKey(vs);
  state.virtualServers.delete(key);
  state.virtualServers.set(key, vs);
}

function toRealServer(ep: Endpoint): RealServer {
  return { ip: ep.ip, port: ep.port, address: ep.address };
}

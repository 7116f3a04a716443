/**
 * `kpc explain NAMESPACE/NAME`: every rule that belongs to one Service, grouped by entry point
 * (cluster IP, external IPs, load-balancer IPs, node port, health-check node port), the
 * endpoints each entry reaches, and why the others are left out.
 *
 * Two sources, each for what it knows best:
 *   - the service port's plan (src/ir/plan.ts, what kube-proxy decided): which endpoints each
 *     traffic policy uses, and so why an endpoint is not used (not ready, not serving,
 *     terminating while ready ones exist, not on this node, topology hints);
 *   - the emitted rules: which rules carry it out. A rule belongs to the port when it is in one
 *     of the port's own chains (named by hash of the port, as the emitter names them) or sends
 *     the port's destination (address, port, protocol) somewhere; comments are not read.
 *
 * Pure: no I/O.
 */

import type { Endpoint, ProxyIR, ServicePort } from '../ir/model.js';
import { KpcError } from '../errors.js';
import { externallyAccessible } from '../ir/service-port.js';
import type { EndpointCategories } from '../ir/topology.js';
import { planContext, planServicePort, type ServicePortPlan } from '../ir/plan.js';
import { endpointChainName, servicePortChains } from '../emit/iptables/chain-names.js';
import { formatHostPort, parseIP } from '../net/ip.js';
import { addressMatches, parseAddressSpec } from '../lang/iptables/address.js';
import type { Match, Rule, RuleSet } from '../lang/iptables/model.js';
import { readRules } from '../lang/iptables/read.js';

export type EntryKind = 'cluster-ip' | 'external-ip' | 'load-balancer-ip' | 'node-port' | 'health-check-node-port';
export type Policy = 'Cluster' | 'Local';

export interface ExplainedRule {
  table: string;
  chain: string;
  /** 1-based position in its chain. */
  index: number;
  /** `-A CHAIN ...` as it reads in the rules. */
  text: string;
}

export interface ReachedEndpoint {
  address: string;
  /** kube-proxy spreads new connections evenly: 1/n. */
  probability: number;
}

export interface ExcludedEndpoint {
  address: string;
  reason: string;
}

/** What one kind of client reaches through an entry point. */
export interface Reach {
  /** Who this is for: "all clients", "external clients", "pods and the node itself". */
  clients: string;
  policy: Policy;
  /** `endpoints`: DNAT to one of `endpoints`; REJECT/DROP: refused by a filter rule. */
  outcome: 'endpoints' | 'REJECT' | 'DROP' | 'ACCEPT';
  endpoints: ReachedEndpoint[];
  excluded: ExcludedEndpoint[];
  /** The traffic is SNATed to the node (KUBE-MARK-MASQ) on its way to the endpoint. */
  masquerade: 'always' | 'never' | string;
}

export interface EntryPoint {
  kind: EntryKind;
  /** "cluster IP 172.30.0.41:80/tcp" and the like. */
  title: string;
  reaches: Reach[];
  rules: ExplainedRule[];
  /** Chains this entry also leads to whose rules are listed under an earlier entry. */
  sharedChains: Array<{ table: string; chain: string; listedUnder: string }>;
  notes: string[];
}

export interface ExplainedEndpoint {
  address: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  isLocal: boolean;
  nodeName?: string;
  zone?: string;
  hints?: string;
}

export interface ExplainedPort {
  spn: string;
  portName: string;
  protocol: string;
  port: number;
  clusterIP: string;
  internalPolicy: Policy;
  externalPolicy?: Policy;
  sessionAffinitySeconds?: number;
  /** The topology mode kube-proxy chose for the Cluster endpoints ('' = none). */
  topologyMode: string;
  endpoints: ExplainedEndpoint[];
  entries: EntryPoint[];
  /** Rules of this port that no entry point reached (there should be none). */
  otherRules: ExplainedRule[];
}

export interface Explanation {
  namespace: string;
  name: string;
  family: string;
  node: { name: string; zone: string; ips: string[] };
  ports: ExplainedPort[];
  notes: string[];
}

function explainError(message: string): KpcError {
  return new KpcError('usage', 'query.unanswerable', message);
}

/** The port's own chains: SVC, SVL, EXT, FW and the SEP chain of every reachable endpoint. */
function ownChains(plan: ServicePortPlan): Set<string> {
  const { sp } = plan;
  const c = servicePortChains(sp.spn, sp.protocol);
  const own = new Set([c.svc, c.svl, c.ext, c.fw]);
  for (const ep of plan.categories.allReachableEndpoints) own.add(endpointChainName(sp.spn, sp.protocol, ep.address));
  return own;
}

function hasProtocol(r: Rule, proto: string): boolean {
  return r.matches.some((m) => m.kind === 'protocol' && !m.negated && m.protocol === proto);
}

/**
 * Does rule `r` belong to the port? In one of its own chains, jumping into one, or (in the
 * shared entry chains) matching one of its destinations with the port's protocol.
 */
function belongsTo(r: Rule, plan: ServicePortPlan, own: ReadonlySet<string>): boolean {
  if (own.has(r.chain)) return true;
  if (r.target?.kind === 'chain' && own.has(r.target.chain)) return true;
  const { sp } = plan;
  if (!hasProtocol(r, sp.protocol.toLowerCase())) return false;
  if (sp.healthCheckNodePort !== 0 && hasDport(r, sp.healthCheckNodePort) && destinationOf(r) === undefined) return true;
  if (sp.nodePort !== 0 && hasDport(r, sp.nodePort) && (destinationOf(r) === undefined || isLoopbackNet(r))) return true;
  if (!hasDport(r, sp.port)) return false;
  return [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerVIPs].some((ip) => hasDestination(r, ip));
}

function ruleText(r: Rule): string {
  return `-A ${r.chain} ${r.spec}`;
}

function explained(r: Rule): ExplainedRule {
  return { table: r.table, chain: r.chain, index: r.index, text: ruleText(r) };
}

function destinationOf(r: Rule): Extract<Match, { kind: 'address' }> | undefined {
  return r.matches.find((m): m is Extract<Match, { kind: 'address' }> => m.kind === 'address' && m.which === 'destination' && !m.negated);
}

function hasDestination(r: Rule, ip: string): boolean {
  const d = destinationOf(r);
  const parsed = parseIP(ip);
  return d !== undefined && parsed !== undefined && d.addresses.some((a) => addressMatches(a, parsed.ip) && a.mask.every((b) => b === 255));
}

function hasDport(r: Rule, port: number): boolean {
  return r.matches.some((m) => m.kind === 'port' && m.which === 'destination' && !m.negated && m.ranges.some(([lo, hi]) => port >= lo && port <= hi));
}

function isLoopbackNet(r: Rule): boolean {
  const d = destinationOf(r);
  const lo = parseAddressSpec('127.0.0.1');
  return d !== undefined && lo !== undefined && d.addresses.some((a) => a.family === 'IPv4' && addressMatches(a, { family: 'IPv4', bytes: lo.bytes }));
}

/**
 * The entry rules plus every rule of the chains they lead to (not the shared KUBE-MARK-MASQ).
 * A chain already listed under an earlier entry (`listed`: chain → entry title) is named, not
 * listed again.
 */
function withChains(
  rs: RuleSet,
  entry: Rule[],
  title: string,
  listed: Map<string, string>,
): { rules: ExplainedRule[]; shared: EntryPoint['sharedChains'] } {
  const rules: ExplainedRule[] = entry.map(explained);
  const shared: EntryPoint['sharedChains'] = [];
  const queue: Array<[string, string]> = [];
  const visited = new Set<string>();
  const follow = (r: Rule) => {
    if (r.target?.kind !== 'chain') return;
    const target = r.target.chain;
    if (target === 'KUBE-MARK-MASQ' || target === 'KUBE-NODEPORTS' || target === 'KUBE-SERVICES') return;
    const key = `${r.table}/${target}`;
    if (visited.has(key)) return;
    visited.add(key);
    const under = listed.get(key);
    if (under !== undefined && under !== title) {
      shared.push({ table: r.table, chain: target, listedUnder: under });
      return;
    }
    listed.set(key, title);
    queue.push([r.table, target]);
  };
  for (const r of entry) follow(r);
  while (queue.length > 0) {
    const [table, chain] = queue.shift()!;
    for (const r of rs.tables.get(table)?.chains.get(chain)?.rules ?? []) {
      rules.push(explained(r));
      follow(r);
    }
  }
  return { rules, shared };
}

function uniformly(eps: readonly Endpoint[]): ReachedEndpoint[] {
  return eps.map((e) => ({ address: e.address, probability: Math.round((1 / eps.length) * 1e10) / 1e10 }));
}

function hintsText(ep: Endpoint): string | undefined {
  const parts: string[] = [];
  if (ep.zoneHints) parts.push(`zones ${[...ep.zoneHints].sort().join(', ')}`);
  if (ep.nodeHints) parts.push(`nodes ${[...ep.nodeHints].sort().join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** Why `ep` is not among the endpoints `policy` uses on this node. */
function whyExcluded(ep: Endpoint, policy: Policy, cat: EndpointCategories, ir: ProxyIR): string {
  const reasons: string[] = [];
  if (!ep.ready && !ep.serving) reasons.push(ep.terminating ? 'terminating and not serving' : 'not ready (and not serving)');
  else if (!ep.ready && ep.serving && ep.terminating) {
    reasons.push(
      policy === 'Cluster'
        ? 'terminating: serving-but-terminating endpoints are used only when no endpoint is ready'
        : 'terminating: serving-but-terminating endpoints are used only when no local endpoint is ready',
    );
  } else if (!ep.ready) reasons.push('not ready');
  if (policy === 'Local' && !ep.isLocal) reasons.push(ep.nodeName ? `on node ${ep.nodeName}, not this node (${ir.node.name})` : `no nodeName, so not on this node (${ir.node.name})`);
  if (policy === 'Cluster' && ep.ready && cat.topologyMode !== '') {
    if (cat.topologyMode === 'PreferSameZone') {
      reasons.push(`topology: hinted for zone${(ep.zoneHints?.size ?? 0) > 1 ? 's' : ''} ${[...(ep.zoneHints ?? [])].sort().join(', ')}; this node is in zone ${ir.node.zone || '(none)'}`);
    } else {
      reasons.push(`topology: hinted for node${(ep.nodeHints?.size ?? 0) > 1 ? 's' : ''} ${[...(ep.nodeHints ?? [])].sort().join(', ')}, not ${ir.node.name}`);
    }
  }
  return reasons.length > 0 ? reasons.join('; ') : 'not used';
}

function reach(clients: string, policy: Policy, sp: ServicePort, cat: EndpointCategories, ir: ProxyIR, masquerade: Reach['masquerade']): Reach {
  const used = policy === 'Local' ? cat.localEndpoints : cat.clusterEndpoints;
  // A set, not a search of `used` per endpoint: a Service can have 100,000 endpoints.
  const usedAddresses = new Set(used.map((u) => u.address));
  const excluded = sp.endpoints.filter((e) => !usedAddresses.has(e.address)).map((e) => ({ address: e.address, reason: whyExcluded(e, policy, cat, ir) }));
  let outcome: Reach['outcome'] = 'endpoints';
  if (!cat.hasAnyEndpoints) outcome = 'REJECT';
  else if (used.length === 0) outcome = 'DROP';
  return { clients, policy, outcome, endpoints: outcome === 'endpoints' ? uniformly(used) : [], excluded, masquerade: outcome === 'endpoints' ? masquerade : 'never' };
}

function protoOf(sp: ServicePort): string {
  return sp.protocol.toLowerCase();
}

function explainPort(ir: ProxyIR, rs: RuleSet, plan: ServicePortPlan): ExplainedPort {
  const { sp, categories: cat } = plan;
  const own = ownChains(plan);
  const proto = protoOf(sp);
  const spn = sp.spn;
  const detector = ir.knobs.localDetector;
  const internalPolicy: Policy = sp.internalPolicyLocal ? 'Local' : 'Cluster';
  const externalPolicy: Policy = sp.externalPolicyLocal ? 'Local' : 'Cluster';
  const listed = new Map<string, string>();
  const entries: EntryPoint[] = [];
  const chainRules = (table: string, chain: string) => rs.tables.get(table)?.chains.get(chain)?.rules ?? [];
  // The port's rules of a shared chain, found once: the entries below ask for KUBE-SERVICES
  // once for the cluster IP and again for each external and load-balancer IP.
  const minePerChain = new Map<string, Rule[]>();
  const mine = (table: string, chain: string) => {
    const key = `${table}/${chain}`;
    let rules = minePerChain.get(key);
    if (rules === undefined) minePerChain.set(key, (rules = chainRules(table, chain).filter((r) => belongsTo(r, plan, own))));
    return rules;
  };
  const used = new Set<string>();
  const take = (rules: Rule[]) => {
    for (const r of rules) used.add(`${r.table}/${r.chain}#${r.index}`);
    return rules;
  };

  // Cluster IP.
  {
    const entry = take([
      ...mine('nat', 'KUBE-SERVICES').filter((r) => hasDestination(r, sp.clusterIP)),
      ...mine('filter', 'KUBE-SERVICES').filter((r) => hasDestination(r, sp.clusterIP)),
    ]);
    const internalMasq = ir.knobs.masqueradeAll
      ? 'always (--masquerade-all)'
      : detector
        ? 'when the source is not a local pod (the local-traffic detector)'
        : 'never (no local-traffic detector)';
    const notes: string[] = [];
    if (sp.stickySeconds !== undefined) notes.push(`session affinity ClientIP: a client returns to its endpoint for ${sp.stickySeconds}s (recent lists)`);
    const title = `cluster IP ${formatHostPort(sp.clusterIP, sp.port)}/${proto}`;
    const { rules, shared } = withChains(rs, entry, title, listed);
    entries.push({
      kind: 'cluster-ip',
      title,
      reaches: [reach('all clients', internalPolicy, sp, cat, ir, `${internalMasq}; and when an endpoint connects to itself (hairpin)`)],
      rules,
      sharedChains: shared,
      notes,
    });
  }

  const external = (kind: EntryKind, title: string, entryRules: Rule[], notes: string[]) => {
    const reaches: Reach[] = [];
    if (sp.externalPolicyLocal) {
      reaches.push(reach('clients outside the node', 'Local', sp, cat, ir, 'never (the client address is kept)'));
      const shortCircuit = detector ? 'pods on this node and the node itself' : 'the node itself';
      reaches.push(reach(shortCircuit, 'Cluster', sp, cat, ir, detector ? 'only for the node itself' : 'always'));
      notes.push(`externalTrafficPolicy Local: ${shortCircuit} are sent to every endpoint (as if the traffic had left the cluster and come back), not only the local ones`);
    } else {
      reaches.push(reach('all clients', 'Cluster', sp, cat, ir, 'always (externalTrafficPolicy Cluster)'));
    }
    const { rules, shared } = withChains(rs, take(entryRules), title, listed);
    entries.push({ kind, title, reaches, rules, sharedChains: shared, notes });
  };

  for (const ip of sp.externalIPs) {
    external(
      'external-ip',
      `external IP ${formatHostPort(ip, sp.port)}/${proto}`,
      [...mine('nat', 'KUBE-SERVICES'), ...mine('filter', 'KUBE-EXTERNAL-SERVICES')].filter((r) => hasDestination(r, ip)),
      [],
    );
  }
  for (const ip of sp.loadBalancerVIPs) {
    const notes: string[] = [];
    if (sp.loadBalancerSourceRanges.length > 0) {
      notes.push(`loadBalancerSourceRanges ${sp.loadBalancerSourceRanges.join(', ')}: other sources are dropped by filter KUBE-PROXY-FIREWALL`);
    }
    external(
      'load-balancer-ip',
      `load-balancer IP ${formatHostPort(ip, sp.port)}/${proto}`,
      [...mine('nat', 'KUBE-SERVICES'), ...mine('filter', 'KUBE-EXTERNAL-SERVICES'), ...mine('filter', 'KUBE-PROXY-FIREWALL')].filter((r) => hasDestination(r, ip)),
      notes,
    );
  }
  if (sp.nodePort !== 0) {
    const where =
      ir.knobs.nodePortAddresses.length === 0
        ? 'every node address'
        : `the node addresses in ${ir.knobs.nodePortAddresses.join(', ')}`;
    const notes = [`served on ${where}${ir.knobs.iptables.localhostNodePorts ? ' and on 127.0.0.0/8' : ''}; not subject to loadBalancerSourceRanges`];
    const entry = [
      ...mine('nat', 'KUBE-NODEPORTS').filter((r) => hasDport(r, sp.nodePort)),
      ...mine('filter', 'KUBE-EXTERNAL-SERVICES').filter((r) => hasDport(r, sp.nodePort) && destinationOf(r) === undefined),
    ];
    if (entry.some(isLoopbackNet)) notes.push('localhost node port: connections to 127.0.0.1 are counted by nfacct localhost_nps_accepted_pkts');
    external('node-port', `node port ${sp.nodePort}/${proto}`, entry, notes);
  }
  if (sp.healthCheckNodePort !== 0) {
    const localReady = sp.endpoints.filter((e) => e.isLocal && e.ready).length;
    const entry = take(mine('filter', 'KUBE-NODEPORTS').filter((r) => hasDport(r, sp.healthCheckNodePort)));
    entries.push({
      kind: 'health-check-node-port',
      title: `health-check node port ${sp.healthCheckNodePort}/tcp`,
      reaches: [{ clients: 'load-balancer health checks', policy: 'Local', outcome: 'ACCEPT', endpoints: [], excluded: [], masquerade: 'never' }],
      rules: entry.map(explained),
      sharedChains: [],
      // The health server counts local endpoints that are ready (EndpointsMap.LocalReadyEndpoints):
      // serving-but-terminating ones keep traffic flowing but make the node report unhealthy.
      notes: [`kube-proxy's health server answers it: ${localReady > 0 ? `${localReady} ready local endpoint(s), so this node reports healthy` : 'no ready local endpoint, so this node reports unhealthy (503) and load balancers steer away'}`],
    });
  }

  // Anything of this port's left over (should be nothing; reported rather than hidden).
  const otherRules: ExplainedRule[] = [];
  const inEntries = new Set<string>();
  for (const e of entries) for (const x of e.rules) inEntries.add(`${x.table}/${x.chain}#${x.index}`);
  for (const table of rs.tables.values()) {
    for (const chain of table.chains.values()) {
      for (const r of chain.rules) {
        if (!belongsTo(r, plan, own)) continue;
        const key = `${r.table}/${r.chain}#${r.index}`;
        if (!used.has(key) && !inEntries.has(key)) otherRules.push(explained(r));
      }
    }
  }

  return {
    spn,
    portName: sp.portName,
    protocol: sp.protocol,
    port: sp.port,
    clusterIP: sp.clusterIP,
    internalPolicy,
    ...(externallyAccessible(sp) ? { externalPolicy } : {}),
    ...(sp.stickySeconds !== undefined ? { sessionAffinitySeconds: sp.stickySeconds } : {}),
    topologyMode: cat.topologyMode,
    endpoints: sp.endpoints.map((e) => {
      const hints = hintsText(e);
      return {
        address: e.address,
        ready: e.ready,
        serving: e.serving,
        terminating: e.terminating,
        isLocal: e.isLocal,
        ...(e.nodeName !== undefined ? { nodeName: e.nodeName } : {}),
        ...(e.zone !== undefined ? { zone: e.zone } : {}),
        ...(hints ? { hints } : {}),
      };
    }),
    entries,
    otherRules,
  };
}

/**
 * Explain one Service on this node: `ir` is what the rules were compiled from, `rulesText`
 * the iptables-restore input (kpc's output for that IR).
 */
export function explainService(ir: ProxyIR, rulesText: string, namespace: string, name: string): Explanation {
  const ports = ir.servicePorts.filter((sp) => sp.namespace === namespace && sp.name === name);
  if (ports.length === 0) {
    throw explainError(
      `no Service ${namespace}/${name} in kube-proxy's view for ${ir.family}: not in the input, or headless, ExternalName, without a ${ir.family} cluster IP, or opted out with service.kubernetes.io/service-proxy-name`,
    );
  }
  const rs = readRules(rulesText);
  const planning = planContext(ir);
  const notes: string[] = [];
  const d = ir.knobs.localDetector;
  if (!d) notes.push('no local-traffic detector (no cluster CIDR for this family): kube-proxy cannot tell pod traffic from other traffic');
  return {
    namespace,
    name,
    family: ir.family,
    node: { name: ir.node.name, zone: ir.node.zone, ips: ir.node.ips },
    ports: ports.map((sp) => explainPort(ir, rs, planServicePort(sp, planning))),
    notes,
  };
}

/**
 * The rules of one service port: kube-proxy's per-service loop body in syncProxyRules
 * (pkg/proxy/iptables/proxier.go), cut into the steps it takes.
 *
 *   KUBE-SERVICES ─ cluster IP ─▶ KUBE-SVC-X / KUBE-SVL-X ─▶ KUBE-SEP-Y (DNAT)
 *                 ─ external IP ─▶ KUBE-EXT-X ─▶ SVC or SVL
 *                 ─ LB IP ──────▶ KUBE-FW-X (source ranges) ─▶ KUBE-EXT-X
 *   KUBE-NODEPORTS ─ node port ─▶ KUBE-EXT-X
 *   filter: REJECT/DROP for ports with no (local) endpoints, FW drops, health-check ACCEPT.
 */

import type { Endpoint, Protocol, ProxyIR, ServicePort } from '../../ir/model.js';
import type { ServicePortPlan } from '../../ir/plan.js';
import { endpointChainName, servicePortChains, type ServicePortChains } from './chain-names.js';
import { probability } from './probability.js';
import { bareComment, quotedComment } from '../../lang/iptables/safe-text.js';
import type { ChainRules, Ruleset } from '../../lang/iptables/ruleset.js';
import { KUBE_EXTERNAL_SERVICES, KUBE_MARK_MASQ, KUBE_NODEPORTS, KUBE_PROXY_FIREWALL, KUBE_SERVICES } from '../../lang/iptables/chains.js';
import { detectorIfLocal } from '../common/local-detector.js';


/** Per-sync facts every service port's rules depend on. */
export interface SyncContext {
  ir: ProxyIR;
  /** More than 1000 endpoints in all: SEP and dispatch rules lose their comments. */
  largeClusterMode: boolean;
  /** `! -s CIDR -j KUBE-MARK-MASQ` (or `! -i ...`): masquerade what is not from a local pod; undefined without a detector. */
  masqueradeIfNotLocal: string | undefined;
}

/**
 * The port's plan (src/ir/plan.ts: what kube-proxy decided) with what iptables mode makes of
 * it: chain names, and texts made once per port.
 */
interface PortPlan {
  sp: ServicePort;
  chains: ServicePortChains;
  proto: string;
  clusterEndpoints: Endpoint[];
  localEndpoints: Endpoint[];
  allReachable: Endpoint[];
  hasEndpoints: boolean;
  internalChain: string;
  hasInternalEndpoints: boolean;
  externalPolicyChain: string;
  hasExternalEndpoints: boolean;
  usesExternalChain: boolean;
  usesFWChain: boolean;
  usesClusterChain: boolean;
  usesLocalChain: boolean;
  nodeAllowedBySourceRanges: boolean;
  /** KUBE-SEP-… of each reachable endpoint, in allReachable's order (each hashed once, used by dispatch and SEP rules). */
  sepChains: string[];
  /** The port's own nat chains declared so far (SVC, SVL, EXT, FW; see ownChain). */
  ownChains: ChainRules[];
  /** `-m comment --comment ns/svc:port ` opening each KUBE-SEP rule ('' in large cluster mode); made once per port. */
  sepComment: string;
  /**
   * `-m comment --comment "ns/svc:port cluster IP" -m tcp -p tcp -d IP --dport N`, made once:
   * the cluster IP capture's match and the masquerade rule's ('' without internal endpoints).
   */
  clusterIPMatch: string;
}

export function iptablesPortPlan(base: ServicePortPlan, ctx: SyncContext): PortPlan {
  const { sp, categories: cat } = base;
  const chains = servicePortChains(sp.spn, sp.protocol);
  const hasInternalEndpoints = base.hasInternalEndpoints;
  const proto = sp.protocol.toLowerCase();
  return {
    sp,
    chains,
    proto,
    clusterEndpoints: cat.clusterEndpoints,
    localEndpoints: cat.localEndpoints,
    allReachable: cat.allReachableEndpoints,
    hasEndpoints: base.hasEndpoints,
    internalChain: sp.internalPolicyLocal ? chains.svl : chains.svc,
    hasInternalEndpoints,
    externalPolicyChain: sp.externalPolicyLocal ? chains.svl : chains.svc,
    hasExternalEndpoints: base.hasExternalEndpoints,
    usesExternalChain: base.usesExternalPath,
    usesFWChain: base.usesFirewall,
    usesClusterChain: base.usesClusterEndpoints,
    usesLocalChain: base.usesLocalEndpoints,
    nodeAllowedBySourceRanges: base.nodeAllowedBySourceRanges,
    sepChains: cat.allReachableEndpoints.map((ep) => endpointChainName(sp.spn, sp.protocol, ep.address)),
    ownChains: [],
    sepComment: ctx.largeClusterMode ? '' : `-m comment --comment ${bareComment(sp.spn)} `,
    clusterIPMatch: hasInternalEndpoints ? `-m comment --comment ${quotedComment(`${sp.spn} cluster IP`)} ${destination(proto, sp.clusterIP, sp.port)}` : '',
  };
}

/**
 * The filter rule for traffic that has nowhere to go: REJECT when the port has no endpoints
 * at all, DROP when it has none on this node (the same for internal and external traffic).
 * Made only where needed: most ports have endpoints and never use it.
 */
function noEndpointsFilter(p: PortPlan): { target: string; comment: string } {
  return p.hasEndpoints
    ? { target: 'DROP', comment: quotedComment(`${p.sp.spn} has no local endpoints`) }
    : { target: 'REJECT', comment: quotedComment(`${p.sp.spn} has no endpoints`) };
}

/** Write every rule of one service port, in kube-proxy's order. */
export function writeServicePort(rs: Ruleset, plan: PortPlan, ctx: SyncContext): void {
  writeClusterIPCapture(rs, plan);
  writeExternalIPCaptures(rs, plan);
  writeLoadBalancerCaptures(rs, plan);
  writeNodePortCapture(rs, plan, ctx);
  writeHealthCheckNodePort(rs, plan);
  // kube-proxy's partial-sync cut point: what follows lives in the service's own chains.
  writeInternalMasquerade(rs, plan, ctx);
  writeExternalChain(rs, plan, ctx);
  writeFirewallChain(rs, plan, ctx);
  if (plan.usesClusterChain) writeDispatchChain(rs, plan, plan.chains.svc, plan.clusterEndpoints, ctx);
  if (plan.usesLocalChain) writeDispatchChain(rs, plan, plan.chains.svl, plan.localEndpoints, ctx);
  plan.allReachable.forEach((ep, i) => writeEndpointChain(rs, plan, ep, plan.sepChains[i]!));
}

/**
 * The port's own nat chain `name` (KUBE-SVC/SVL/EXT/FW-hash), declared on first use. Its name
 * is a hash of the service port, so it is new to the table: declared without a lookup.
 */
function ownChain(rs: Ruleset, p: PortPlan, name: string): ChainRules {
  let chain = p.ownChains.find((c) => c.name === name);
  if (chain === undefined) p.ownChains.push((chain = rs.nat.declareNew(name, p.sp.spn)));
  return chain;
}

/** The KUBE-SEP chains of `endpoints` (some of the reachable ones), in order. */
function sepChainsOf(p: PortPlan, endpoints: readonly Endpoint[]): readonly string[] {
  if (endpoints === p.allReachable) return p.sepChains; // the common case: the Cluster endpoints
  const byAddress = new Map(p.allReachable.map((ep, i) => [ep.address, p.sepChains[i]!]));
  return endpoints.map((ep) => byAddress.get(ep.address) ?? endpointChainName(p.sp.spn, p.sp.protocol, ep.address));
}

/** `-m tcp -p tcp -d IP --dport N` */
function destination(proto: string, ip: string, port: number): string {
  return `-m ${proto} -p ${proto} -d ${ip} --dport ${port}`;
}

function writeClusterIPCapture(rs: Ruleset, p: PortPlan): void {
  const { sp } = p;
  if (p.hasInternalEndpoints) {
    rs.nat.append(KUBE_SERVICES, `${p.clusterIPMatch} -j ${p.internalChain}`);
  } else {
    const filter = noEndpointsFilter(p);
    rs.filter.append(KUBE_SERVICES, `-m comment --comment ${filter.comment} ${destination(p.proto, sp.clusterIP, sp.port)} -j ${filter.target}`);
  }
}

function writeExternalIPCaptures(rs: Ruleset, p: PortPlan): void {
  const { sp } = p;
  for (const ip of sp.externalIPs) {
    if (p.hasEndpoints) {
      rs.nat.append(KUBE_SERVICES, `-m comment --comment ${quotedComment(`${sp.spn} external IP`)} ${destination(p.proto, ip, sp.port)} -j ${p.chains.ext}`);
    }
    if (!p.hasExternalEndpoints) {
      const filter = noEndpointsFilter(p);
      rs.filter.append(KUBE_EXTERNAL_SERVICES, `-m comment --comment ${filter.comment} ${destination(p.proto, ip, sp.port)} -j ${filter.target}`);
    }
  }
}

function writeLoadBalancerCaptures(rs: Ruleset, p: PortPlan): void {
  const { sp } = p;
  const lbTarget = p.usesFWChain ? p.chains.fw : p.chains.ext;
  for (const ip of sp.loadBalancerVIPs) {
    if (p.hasEndpoints) {
      rs.nat.append(KUBE_SERVICES, `-m comment --comment ${quotedComment(`${sp.spn} loadbalancer IP`)} ${destination(p.proto, ip, sp.port)} -j ${lbTarget}`);
    }
    if (p.usesFWChain) {
      rs.filter.append(KUBE_PROXY_FIREWALL, `-m comment --comment ${quotedComment(`${sp.spn} traffic not accepted by ${p.chains.fw}`)} ${destination(p.proto, ip, sp.port)} -j DROP`);
    }
  }
  if (!p.hasExternalEndpoints) {
    const filter = noEndpointsFilter(p);
    for (const ip of sp.loadBalancerVIPs) {
      rs.filter.append(KUBE_EXTERNAL_SERVICES, `-m comment --comment ${filter.comment} ${destination(p.proto, ip, sp.port)} -j ${filter.target}`);
    }
  }
}

function writeNodePortCapture(rs: Ruleset, p: PortPlan, ctx: SyncContext): void {
  const { sp } = p;
  if (sp.nodePort === 0) return;
  const comment = `-m comment --comment ${bareComment(sp.spn)}`;
  const proto = `-m ${p.proto} -p ${p.proto}`;
  if (p.hasEndpoints) {
    // Node ports are not subject to loadBalancerSourceRanges: always the EXT chain.
    const knobs = ctx.ir.knobs;
    if (knobs.iptables.localhostNodePorts && ctx.ir.family === 'IPv4' && knobs.iptables.nfacct) {
      rs.nat.append(KUBE_NODEPORTS, `${comment} ${proto} -d 127.0.0.0/8 --dport ${sp.nodePort} -m nfacct --nfacct-name localhost_nps_accepted_pkts -j ${p.chains.ext}`);
    }
    rs.nat.append(KUBE_NODEPORTS, `${comment} ${proto} --dport ${sp.nodePort} -j ${p.chains.ext}`);
  }
  if (!p.hasExternalEndpoints) {
    const filter = noEndpointsFilter(p);
    rs.filter.append(KUBE_EXTERNAL_SERVICES, `-m comment --comment ${filter.comment} -m addrtype --dst-type LOCAL ${proto} --dport ${sp.nodePort} -j ${filter.target}`);
  }
}

function writeHealthCheckNodePort(rs: Ruleset, p: PortPlan): void {
  const { sp } = p;
  if (sp.healthCheckNodePort === 0) return;
  // Accepted whether or not this node has local endpoints: the health check answers either way.
  rs.filter.append(KUBE_NODEPORTS, `-m comment --comment ${quotedComment(`${sp.spn} health check node port`)} -m tcp -p tcp --dport ${sp.healthCheckNodePort} -j ACCEPT`);
}

function writeInternalMasquerade(rs: Ruleset, p: PortPlan, ctx: SyncContext): void {
  if (!p.hasInternalEndpoints) return;
  const match = p.clusterIPMatch;
  // The rule lands in the internal policy chain; that chain is declared below only if it has
  // endpoints, and hasInternalEndpoints guarantees that it does.
  if (ctx.ir.knobs.masqueradeAll) {
    rs.nat.append(ownChain(rs, p, p.internalChain), `${match} -j ${KUBE_MARK_MASQ}`);
  } else if (ctx.masqueradeIfNotLocal !== undefined) {
    rs.nat.append(ownChain(rs, p, p.internalChain), `${match} ${ctx.masqueradeIfNotLocal}`);
  }
}

function writeExternalChain(rs: Ruleset, p: PortPlan, ctx: SyncContext): void {
  if (!p.usesExternalChain) return;
  const { sp } = p;
  const ext = ownChain(rs, p, p.chains.ext);
  if (!sp.externalPolicyLocal) {
    // Endpoints may be on other nodes: masquerade so replies come back through this node.
    rs.nat.append(ext, `-m comment --comment ${quotedComment(`masquerade traffic for ${sp.spn} external destinations`)} -j ${KUBE_MARK_MASQ}`);
  } else {
    const detector = ctx.ir.knobs.localDetector;
    if (detector) {
      // Pod traffic to an external address acts as if it went out to the LB and came back.
      rs.nat.append(ext, `-m comment --comment ${quotedComment(`pod traffic for ${sp.spn} external destinations`)} ${detectorIfLocal(detector)} -j ${p.chains.svc}`);
    }
    rs.nat.append(ext, `-m comment --comment ${quotedComment(`masquerade LOCAL traffic for ${sp.spn} external destinations`)} -m addrtype --src-type LOCAL -j ${KUBE_MARK_MASQ}`);
    rs.nat.append(ext, `-m comment --comment ${quotedComment(`route LOCAL traffic for ${sp.spn} external destinations`)} -m addrtype --src-type LOCAL -j ${p.chains.svc}`);
  }
  if (p.hasExternalEndpoints) rs.nat.append(ext, `-j ${p.externalPolicyChain}`);
}

function writeFirewallChain(rs: Ruleset, p: PortPlan, ctx: SyncContext): void {
  if (!p.usesFWChain) return;
  const { sp } = p;
  const fw = ownChain(rs, p, p.chains.fw);
  const head = `-m comment --comment ${quotedComment(`${sp.spn} loadbalancer IP`)}`;
  for (const cidr of sp.loadBalancerSourceRanges) rs.nat.append(fw, `${head} -s ${cidr} -j ${p.chains.ext}`);
  // A VIP bound locally makes the node's own requests arrive with the VIP as source.
  if (p.nodeAllowedBySourceRanges) {
    for (const ip of sp.loadBalancerVIPs) rs.nat.append(fw, `${head} -s ${ip} -j ${p.chains.ext}`);
  }
  // No target: whatever reaches the end is dropped by KUBE-PROXY-FIREWALL in filter.
  rs.nat.append(fw, `-m comment --comment ${quotedComment(`other traffic to ${sp.spn} will be dropped by KUBE-PROXY-FIREWALL`)}`);
}

/** KUBE-SVC-X or KUBE-SVL-X: affinity checks, then a random pick over the endpoints. */
function writeDispatchChain(rs: Ruleset, p: PortPlan, chainName: string, endpoints: readonly Endpoint[], ctx: SyncContext): void {
  const { sp } = p;
  const chain = ownChain(rs, p, chainName);
  if (chain.countOnly) {
    // Only counted (trace and explain, for a port they do not follow): the rules below, unmade.
    chain.count += (sp.stickySeconds !== undefined ? 2 : 1) * endpoints.length;
    return;
  }
  const withComment = (ep: Endpoint) => (ctx.largeClusterMode ? '' : `-m comment --comment ${quotedComment(`${sp.spn} -> ${ep.address}`)} `);
  const seps = sepChainsOf(p, endpoints);
  if (sp.stickySeconds !== undefined) {
    endpoints.forEach((ep, i) => {
      const sep = seps[i]!;
      rs.nat.append(chain, `${withComment(ep)}-m recent --name ${sep} --rcheck --seconds ${sp.stickySeconds} --reap -j ${sep}`);
    });
  }
  const n = endpoints.length;
  endpoints.forEach((ep, i) => {
    const sep = seps[i]!;
    if (i < n - 1) rs.nat.append(chain, `${withComment(ep)}${randomPick(n - i)}${sep}`);
    else rs.nat.append(chain, `${withComment(ep)}-j ${sep}`);
  });
}

/** `-m statistic --mode random --probability 1/n -j `, made once per n (every dispatch chain of n endpoints starts with it). */
const randomPicks = new Map<number, string>();

function randomPick(n: number): string {
  let text = randomPicks.get(n);
  if (text === undefined) randomPicks.set(n, (text = `-m statistic --mode random --probability ${probability(n)} -j `));
  return text;
}

/** KUBE-SEP-Y: mark hairpin traffic for masquerade, then DNAT to the endpoint. */
function writeEndpointChain(rs: Ruleset, p: PortPlan, ep: Endpoint, sep: string): void {
  const { sp } = p;
  // Endpoint addresses of a port are distinct, so its KUBE-SEP chains are new to the table.
  const chain = rs.nat.declareNew(sep, sp.spn);
  if (chain.countOnly) {
    // Only counted (trace and explain, for a port they do not follow): the two rules below, unmade.
    chain.count += 2;
    return;
  }
  rs.nat.append(chain, `${p.sepComment}-s ${ep.ip} -j ${KUBE_MARK_MASQ}`);
  const affinity = sp.stickySeconds !== undefined ? `-m recent --name ${sep} --set ` : '';
  rs.nat.append(chain, `${p.sepComment}${affinity}${DNAT_TO[sp.protocol]}${ep.address}`);
}

/** `-m tcp -p tcp -j DNAT --to-destination ` by protocol: the same text for every endpoint. */
const DNAT_TO: Record<Protocol, string> = {
  TCP: '-m tcp -p tcp -j DNAT --to-destination ',
  UDP: '-m udp -p udp -j DNAT --to-destination ',
  SCTP: '-m sctp -p sctp -j DNAT --to-destination ',
};

/**
 * From kube-proxy's configuration (flags and KubeProxyConfiguration, family-independent)
 * to what one family's proxier knows: its local-traffic detector, node-port addresses,
 * localhost node ports and the node's addresses. Mirrors cmd/kube-proxy/app/server_linux.go
 * (getLocalDetectors) and pkg/proxy/util/nodeport_addresses.go.
 */

import { cidrContains, formatCIDR, formatIP, isLoopback, parseCIDR, parseIP, type IPFamily } from '../net/ip.js';
import type { LocalDetector, NodeFacts, ProxyKnobs } from './model.js';
import type { IRContext } from './build.js';
import { goTrimSpace } from '../go/strings.js';
import { behaviourOf, type KubeProxyRelease } from '../releases/index.js';

export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';

/** Everything that shapes the output besides the objects, as the user gave it. */
export interface ProxySettings {
  /** The kube-proxy release reproduced. */
  release: KubeProxyRelease;
  nodeName: string;
  /** The node's addresses, any family, primary of each family first. */
  nodeIPs: string[];
  nodeZone: string;
  /** The Node's spec.podCIDRs (for NodeCIDR detection). */
  podCIDRs: string[];
  clusterCIDRs: string[];
  detectLocalMode: DetectLocalMode;
  bridgeInterface: string;
  interfaceNamePrefix: string;
  masqueradeAll: boolean;
  masqueradeBit: number;
  localhostNodePorts: boolean;
  /** CIDRs and the release's keywords (`primary`; v1.37 also `localhost`, `all`). */
  nodePortAddresses: string[];
  randomFully: boolean;
  nfacct: boolean;
  tcpBeLiberal: boolean;
  /** The PreferSameTrafficDistribution feature gate. */
  preferSameTrafficDistribution: boolean;
  /** The AllowServiceExternalIPs feature gate (v1.36+; before it, always on). */
  serviceExternalIPs: boolean;
  ipvsScheduler: string;
  /** IPVS knobs (optional here; contextFor fills kube-proxy's defaults). */
  ipvsStrictARP?: boolean;
  /** Seconds; 0 or undefined = keep the kernel's timeout. */
  ipvsTCPTimeout?: number;
  ipvsTCPFinTimeout?: number;
  ipvsUDPTimeout?: number;
  /** CIDRs of any family (kube-proxy's filterCIDRs keeps each proxier's own). */
  ipvsExcludeCIDRs?: string[];
  /** The cluster's ServiceCIDRs, any family (ServiceCIDR objects and --service-cluster-ip-range). */
  serviceCIDRs?: string[];
  /** The KubeProxyNFTablesLocalhostNodePorts feature gate (v1.37+). */
  nftablesLocalhostNodePorts?: boolean;
}

/** The CIDRs of one family, canonical, in the given order (kube-proxy filterCIDRs). */
export function cidrsOfFamily(cidrs: readonly string[], family: IPFamily): string[] {
  const out: string[] = [];
  for (const text of cidrs) {
    const p = parseCIDR(goTrimSpace(text));
    if (p && p.cidr.ip.family === family) out.push(formatCIDR(p.cidr));
  }
  return out;
}

function firstCIDROfFamily(cidrs: readonly string[], family: IPFamily): string | undefined {
  for (const text of cidrs) {
    const p = parseCIDR(goTrimSpace(text));
    if (p && p.cidr.ip.family === family) return formatCIDR(p.cidr);
  }
  return undefined;
}

export function localDetectorFor(s: ProxySettings, family: IPFamily): LocalDetector | undefined {
  switch (s.detectLocalMode) {
    case 'ClusterCIDR': {
      const cidr = firstCIDROfFamily(s.clusterCIDRs, family);
      return cidr ? { mode: 'ClusterCIDR', cidr } : undefined;
    }
    case 'NodeCIDR': {
      const cidr = firstCIDROfFamily(s.podCIDRs, family);
      return cidr ? { mode: 'NodeCIDR', cidr } : undefined;
    }
    case 'BridgeInterface':
      return s.bridgeInterface ? { mode: 'BridgeInterface', interfaceName: s.bridgeInterface } : undefined;
    case 'InterfaceNamePrefix':
      return s.interfaceNamePrefix ? { mode: 'InterfaceNamePrefix', interfacePrefix: s.interfaceNamePrefix } : undefined;
  }
}

export function nodeIPsOfFamily(s: ProxySettings, family: IPFamily): string[] {
  const out: string[] = [];
  for (const text of s.nodeIPs) {
    const p = parseIP(text);
    if (p && p.ip.family === family) out.push(formatIP(p.ip));
  }
  return out;
}

/**
 * The node-port addresses with their keywords replaced (cmd/kube-proxy/app/server.go): up to
 * v1.36 only a lone `primary`; v1.37 expandNodePortAddressKeywords also turns `localhost` into
 * the loopback CIDRs and `all` into the zero CIDRs, wherever they stand. `primary` is the node's
 * primary IP of each family as a host route (none for a loopback or missing address).
 */
function expandNodePortAddresses(s: ProxySettings): string[] {
  const primaryRoutes = () =>
    (['IPv4', 'IPv6'] as const).flatMap((family) => {
      const primary = nodeIPsOfFamily(s, family)[0];
      return primary && !isLoopback(parseIP(primary)!.ip) ? [family === 'IPv4' ? `${primary}/32` : `${primary}/128`] : [];
    });
  const texts = s.nodePortAddresses;
  if (!behaviourOf(s.release).nodePortAddressKeywords.includes('localhost')) {
    return texts.length === 1 && texts[0] === 'primary' ? primaryRoutes() : texts;
  }
  return texts.flatMap((t) => (t === 'primary' ? primaryRoutes() : t === 'localhost' ? ['127.0.0.0/8', '::1/128'] : t === 'all' ? ['0.0.0.0/0', '::/0'] : [t]));
}

/**
 * The node-port CIDRs of this family; no CIDR of this family means "all addresses" (returned
 * as []), and so does a /0.
 */
export function nodePortCIDRsFor(s: ProxySettings, family: IPFamily): string[] {
  const cidrs: string[] = [];
  for (const text of expandNodePortAddresses(s)) {
    const p = parseCIDR(goTrimSpace(text));
    if (!p || p.cidr.ip.family !== family) continue;
    if (p.cidr.prefix === 0) return [];
    cidrs.push(formatCIDR(p.cidr));
  }
  return cidrs;
}

/** localhostNodePorts is IPv4-only and off unless the node-port CIDRs reach 127.0.0.0/8. */
function effectiveLocalhostNodePorts(s: ProxySettings, family: IPFamily, nodePortCIDRs: string[]): boolean {
  if (family !== 'IPv4' || !s.localhostNodePorts) return false;
  if (nodePortCIDRs.length === 0) return true;
  const loopbackStart = parseIP('127.0.0.0')!.ip; // ipv4LoopbackStart in nodeport_addresses.go
  return nodePortCIDRs.some((text) => {
    const c = parseCIDR(text)!.cidr;
    return isLoopback(c.ip) || cidrContains(c, loopbackStart);
  });
}

/**
 * nodePortAddresses holds a CIDR of this family whose address is a loopback one
 * (NodePortAddresses.ContainsExplicitLoopback, pkg/proxy/util/nodeport_addresses.go).
 */
function containsExplicitLoopback(s: ProxySettings, family: IPFamily): boolean {
  return expandNodePortAddresses(s).some((text) => {
    const p = parseCIDR(goTrimSpace(text));
    return p !== undefined && p.cidr.ip.family === family && isLoopback(p.cidr.ip);
  });
}

/** The ServiceCIDRs of this family, canonical, deduplicated, sorted by text. */
function serviceCIDRsOf(s: ProxySettings, family: IPFamily): string[] {
  return [...new Set(cidrsOfFamily(s.serviceCIDRs ?? [], family))].sort();
}

export function contextFor(s: ProxySettings, family: IPFamily): IRContext {
  const nodePortAddresses = nodePortCIDRsFor(s, family);
  const behaviour = behaviourOf(s.release);
  const knobs: ProxyKnobs = {
    release: s.release,
    masqueradeAll: s.masqueradeAll,
    masqueradeBit: s.masqueradeBit,
    nodePortAddresses,
    nodeHints: s.preferSameTrafficDistribution,
    iptables: {
      localhostNodePorts: effectiveLocalhostNodePorts(s, family, nodePortAddresses),
      randomFully: s.randomFully || behaviour.randomFullyAlways,
      nfacct: s.nfacct,
      tcpBeLiberal: s.tcpBeLiberal,
    },
    ipvs: {
      scheduler: s.ipvsScheduler,
      strictARP: s.ipvsStrictARP ?? false,
      tcpTimeout: s.ipvsTCPTimeout ?? 0,
      tcpFinTimeout: s.ipvsTCPFinTimeout ?? 0,
      udpTimeout: s.ipvsUDPTimeout ?? 0,
      excludeCIDRs: cidrsOfFamily(s.ipvsExcludeCIDRs ?? [], family),
    },
    nftables: {
      serviceCIDRs: serviceCIDRsOf(s, family),
      localhostNodePorts: s.nftablesLocalhostNodePorts ?? false,
      localhostNodePortProxy: (s.nftablesLocalhostNodePorts ?? false) && containsExplicitLoopback(s, family),
    },
  };
  const detector = localDetectorFor(s, family);
  if (detector) knobs.localDetector = detector;
  const node: NodeFacts = { name: s.nodeName, zone: s.nodeZone, ips: nodeIPsOfFamily(s, family) };
  return { family, node, knobs, behaviour, serviceExternalIPs: s.serviceExternalIPs };
}

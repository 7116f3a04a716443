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

export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';

/** Everything that shapes the output besides the objects, as the user gave it. */
export interface ProxySettings {
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
  /** CIDRs, or the single word `primary`. */
  nodePortAddresses: string[];
  randomFully: boolean;
  nfacct: boolean;
  tcpBeLiberal: boolean;
  /** The PreferSameTrafficDistribution feature gate. */
  preferSameTrafficDistribution: boolean;
  ipvsScheduler: string;
  /** IPVS knobs (optional here; contextFor fills kube-proxy's defaults). */
  ipvsStrictARP?: boolean;
  /** Seconds; 0 or undefined = keep the kernel's timeout. */
  ipvsTCPTimeout?: number;
  ipvsTCPFinTimeout?: number;
  ipvsUDPTimeout?: number;
  /** CIDRs of any family (kube-proxy's filterCIDRs keeps each proxier's own). */
  ipvsExcludeCIDRs?: string[];
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
 * The node-port CIDRs of this family. `primary` becomes the node's primary IP as a host
 * route; no CIDR of this family means "all addresses" (returned as []), and so does a /0.
 */
export function nodePortCIDRsFor(s: ProxySettings, family: IPFamily): string[] {
  let texts = s.nodePortAddresses;
  if (texts.length === 1 && texts[0] === 'primary') {
    const primary = nodeIPsOfFamily(s, family)[0];
    texts = primary && !isLoopback(parseIP(primary)!.ip) ? [family === 'IPv4' ? `${primary}/32` : `${primary}/128`] : [];
  }
  const cidrs: string[] = [];
  for (const text of texts) {
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

export function contextFor(s: ProxySettings, family: IPFamily): IRContext {
  const nodePortAddresses = nodePortCIDRsFor(s, family);
  const knobs: ProxyKnobs = {
    masqueradeAll: s.masqueradeAll,
    masqueradeBit: s.masqueradeBit,
    nodePortAddresses,
    nodeHints: s.preferSameTrafficDistribution,
    iptables: {
      localhostNodePorts: effectiveLocalhostNodePorts(s, family, nodePortAddresses),
      randomFully: s.randomFully,
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
  };
  const detector = localDetectorFor(s, family);
  if (detector) knobs.localDetector = detector;
  const node: NodeFacts = { name: s.nodeName, zone: s.nodeZone, ips: nodeIPsOfFamily(s, family) };
  return { family, node, knobs };
}

/**
 * The node's own addresses as the IPVS proxier sees them (netlink_linux.go, proxier.go).
 *
 * Offline, the node's interface addresses are the IR's node IPs (--node-ip or the Node
 * object). kube-ipvs0's own addresses are never among them.
 */

import type { ProxyIR } from '../../ir/model.js';
import { cidrContains, isLinkLocalUnicast, isLoopback, parseCIDR, parseIP } from '../../net/ip.js';
import { sortIPs } from './order.js';

/**
 * GetAllLocalAddressesExcept(kube-ipvs0) filtered by isValidForSet: this family, not loopback,
 * and for IPv6 not link-local (IPv4 link-local is kept). Sorted (kube-proxy: set order).
 */
export function nodeAddressSet(ir: ProxyIR): string[] {
  const out = new Set<string>();
  for (const text of ir.node.ips) {
    const ip = parseIP(text)?.ip;
    if (!ip || ip.family !== ir.family || isLoopback(ip)) continue;
    if (ip.family === 'IPv6' && isLinkLocalUnicast(ip)) continue;
    out.add(text);
  }
  return sortIPs(out);
}

/**
 * The addresses that get a virtual server per node port. With --nodeport-addresses unset (or a
 * /0 of this family) every node address; otherwise the node addresses inside one of the CIDRs,
 * minus loopback (nodePortAddresses.GetNodeIPs; that path keeps IPv6 link-local addresses).
 */
export function nodePortIPs(ir: ProxyIR): string[] {
  if (ir.knobs.nodePortAddresses.length === 0) return nodeAddressSet(ir);
  const cidrs = ir.knobs.nodePortAddresses.map((c) => parseCIDR(c)!.cidr);
  const out = new Set<string>();
  for (const text of ir.node.ips) {
    const ip = parseIP(text)?.ip;
    if (!ip || ip.family !== ir.family || isLoopback(ip)) continue;
    if (cidrs.some((c) => cidrContains(c, ip))) out.add(text);
  }
  return sortIPs(out);
}

/**
 * What kube-proxy decides at the top of its per-service-port loop, computed once per port and
 * shared by every proxy mode and by `explain` (pkg/proxy/iptables/proxier.go syncProxyRules,
 * pkg/proxy/nftables/proxier.go, pkg/proxy/ipvs/proxier.go; pkg/proxy/topology.go).
 *
 * The modes differ in how they render these facts (chains, virtual servers, verdict maps), not
 * in the facts: which endpoints serve cluster traffic and which external traffic, whether there
 * are endpoints at all, whether the firewall applies, whether the node may reach its own
 * load-balancer IPs through the source ranges.
 */

import { cidrContains, parseCIDR, parseIP, type IP } from '../net/ip.js';
import type { Endpoint, ProxyIR, ServicePort } from './model.js';
import { externallyAccessible, usesClusterEndpoints, usesLocalEndpoints } from './service-port.js';
import { categorizeEndpoints, type EndpointCategories } from './topology.js';

export interface ServicePortPlan {
  sp: ServicePort;
  /** kube-proxy's CategorizeEndpoints: Cluster, Local and all reachable endpoints, topology mode. */
  categories: EndpointCategories;
  /** Some usable endpoint exists somewhere (else traffic is rejected). */
  hasEndpoints: boolean;
  /** Internal traffic (to the cluster IP) has an endpoint to go to (else DROP/REJECT). */
  hasInternalEndpoints: boolean;
  /** External traffic has an endpoint to go to. */
  hasExternalEndpoints: boolean;
  /** The endpoints internal traffic goes to: Local ones with ITP Local, else Cluster ones. */
  internalEndpoints: Endpoint[];
  /** The endpoints external traffic goes to: Local ones with ETP Local, else Cluster ones. */
  externalEndpoints: Endpoint[];
  /** The Cluster endpoint list is used by some traffic (and is non-empty). */
  usesClusterEndpoints: boolean;
  /** The Local endpoint list is used by some traffic (and is non-empty). */
  usesLocalEndpoints: boolean;
  /** Reachable from outside: a node port, a load-balancer IP or an external IP. */
  externallyAccessible: boolean;
  /** External traffic has its own policy step (it is externally accessible and has endpoints). */
  usesExternalPath: boolean;
  /** loadBalancerSourceRanges apply to the load-balancer IPs (and there are endpoints). */
  usesFirewall: boolean;
  /** Some source range holds the node's own IP: the node may reach its load-balancer IPs. */
  nodeAllowedBySourceRanges: boolean;
  /**
   * The port has load-balancer IPs and source ranges, endpoints or not: nftables mode's
   * firewall (pkg/proxy/nftables/proxier.go usesFWChain does not look at the endpoints,
   * unlike iptables mode's, which usesFirewall above follows).
   */
  hasSourceRangeFirewall: boolean;
}

/** Per-sync facts the per-port decisions read. */
export interface PlanContext {
  ir: ProxyIR;
  /**
   * The node's primary IP of this family, parsed. Loopback (127.0.0.1 or ::1) when the node has
   * none of this family: kube-proxy's detectNodeIPs (cmd/kube-proxy/app/server.go) starts from
   * those and only replaces them with the addresses it finds.
   */
  nodeIP: IP;
}

export function planContext(ir: ProxyIR): PlanContext {
  const first = ir.node.ips[0] ?? (ir.family === 'IPv4' ? '127.0.0.1' : '::1');
  return { ir, nodeIP: parseIP(first)!.ip };
}

export function planServicePort(sp: ServicePort, ctx: PlanContext): ServicePortPlan {
  const cat = categorizeEndpoints(sp, ctx.ir.node, ctx.ir.knobs.nodeHints);
  const hasEndpoints = cat.hasAnyEndpoints;
  const noLocal = cat.localEndpoints.length === 0;
  const accessible = externallyAccessible(sp);
  const usesFirewall = hasEndpoints && sp.loadBalancerVIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
  return {
    sp,
    categories: cat,
    hasEndpoints,
    hasInternalEndpoints: hasEndpoints && !(sp.internalPolicyLocal && noLocal),
    hasExternalEndpoints: hasEndpoints && !(sp.externalPolicyLocal && noLocal),
    internalEndpoints: sp.internalPolicyLocal ? cat.localEndpoints : cat.clusterEndpoints,
    externalEndpoints: sp.externalPolicyLocal ? cat.localEndpoints : cat.clusterEndpoints,
    usesClusterEndpoints: cat.clusterEndpoints.length > 0 && usesClusterEndpoints(sp),
    usesLocalEndpoints: cat.localEndpoints.length > 0 && usesLocalEndpoints(sp),
    externallyAccessible: accessible,
    usesExternalPath: hasEndpoints && accessible,
    usesFirewall,
    nodeAllowedBySourceRanges: sp.loadBalancerSourceRanges.some((c) => cidrContains(parseCIDR(c)!.cidr, ctx.nodeIP)),
    hasSourceRangeFirewall: sp.loadBalancerVIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0,
  };
}

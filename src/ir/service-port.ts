/**
 * Predicates kube-proxy asks of a service port (pkg/proxy/serviceport.go). They look at
 * the derived data (node port, VIPs, external IPs), not at spec.type.
 */

import type { ServicePort } from './model.js';

/** Reachable from outside the cluster network: a node port, an LB VIP or an external IP. */
export function externallyAccessible(sp: ServicePort): boolean {
  return sp.nodePort !== 0 || sp.loadBalancerVIPs.length > 0 || sp.externalIPs.length > 0;
}

export function usesClusterEndpoints(sp: ServicePort): boolean {
  // Cluster traffic policy is used for internal traffic unless ITP is Local, and for
  // external traffic always (ETP Local still short-circuits pod and host traffic to it).
  return !sp.internalPolicyLocal || externallyAccessible(sp);
}

export function usesLocalEndpoints(sp: ServicePort): boolean {
  return sp.internalPolicyLocal || (sp.externalPolicyLocal && externallyAccessible(sp));
}

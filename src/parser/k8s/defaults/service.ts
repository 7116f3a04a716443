/**
 * What the API server fills in on a Service before validating it: SetDefaults_Service
 * (pkg/apis/core/v1/defaults.go) and the registry's normalizeClusterIPs (storage.go). Mutates.
 */

import { isExternallyAccessible, type CoreService } from '../model/service.js';

/** v1.DefaultClientIPServiceAffinitySeconds: three hours. */
export const DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800;

export function setServiceDefaults(svc: CoreService): void {
  const spec = svc.spec;
  if (spec.sessionAffinity === '') spec.sessionAffinity = 'None';
  // Dropping the config for None makes "must not be set when session affinity is None"
  // unreachable through v1; it stays in the validator for fidelity.
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    if (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds === undefined) {
      // The whole struct is replaced, not just the missing leaf.
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_AFFINITY_SECONDS } };
    }
  }
  if (spec.type === '') spec.type = 'ClusterIP';
  for (const sp of spec.ports) {
    if (sp.protocol === '') sp.protocol = 'TCP';
    if (sp.targetPort === 0 || sp.targetPort === '') sp.targetPort = sp.port;
  }
  if (isExternallyAccessible(svc) && spec.externalTrafficPolicy === '') spec.externalTrafficPolicy = 'Cluster';
  if (spec.internalTrafficPolicy === undefined && ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(spec.type)) {
    spec.internalTrafficPolicy = 'Cluster';
  }
  if (spec.type === 'LoadBalancer') {
    if (spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;
    // LoadBalancerIPMode is GA, so the gate check upstream is always true.
    for (const ing of svc.status.loadBalancer.ingress) if (ing.ip !== '' && ing.ipMode === undefined) ing.ipMode = 'VIP';
  }
}

/**
 * normalizeClusterIPs on create: a client that set only the singular field gets the plural one.
 * The reverse never happens (clusterIPs without clusterIP fails validation).
 */
export function normalizeClusterIPs(svc: CoreService): void {
  if (svc.spec.clusterIP !== '' && svc.spec.clusterIPs.length === 0) svc.spec.clusterIPs = [svc.spec.clusterIP];
}

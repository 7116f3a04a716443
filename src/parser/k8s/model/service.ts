/**
 * core.Service as the API server's defaulting and validation code sees it: Go zero values for
 * value fields, `undefined` for nil pointers (which several rules tell apart from a zero value).
 */

import type { CoreObjectMeta, TypeMeta } from './meta.js';

/** v1.IsHeadlessService: the label the EndpointSlice controller puts on a headless Service's slices. */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** v1.AnnotationTopologyMode. */
export const TOPOLOGY_MODE_ANNOTATION = 'service.kubernetes.io/topology-mode';
/** v1.DeprecatedAnnotationTopologyAwareHints: read before topology-mode when both are set. */
export const TOPOLOGY_HINTS_ANNOTATION = 'service.kubernetes.io/topology-aware-hints';

export interface CoreServicePort {
  name: string;
  protocol: string;
  appProtocol?: string;
  port: number;
  /** intstr.IntOrString: a number (Type Int) or a string (Type String); absent reads as 0. */
  targetPort: number | string;
  nodePort: number;
}

export interface CoreSessionAffinityConfig {
  clientIP?: { timeoutSeconds?: number };
}

export interface CoreServiceSpec {
  type: string;
  ports: CoreServicePort[];
  /** nil when absent; `{}` stays an empty map, as Go decodes it. */
  selector?: Record<string, string>;
  clusterIP: string;
  clusterIPs: string[];
  externalIPs: string[];
  sessionAffinity: string;
  sessionAffinityConfig?: CoreSessionAffinityConfig;
  loadBalancerIP: string;
  loadBalancerSourceRanges: string[];
  externalName: string;
  externalTrafficPolicy: string;
  healthCheckNodePort: number;
  publishNotReadyAddresses: boolean;
  ipFamilies: string[];
  ipFamilyPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  loadBalancerClass?: string;
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
}

export interface CoreLoadBalancerIngress {
  ip: string;
  hostname: string;
  ipMode?: string;
}

export interface CoreService extends TypeMeta {
  metadata: CoreObjectMeta;
  spec: CoreServiceSpec;
  status: { loadBalancer: { ingress: CoreLoadBalancerIngress[] } };
}

export const CLUSTER_IP_NONE = 'None';

/** isHeadlessService in validation.go: clusterIPs is exactly ["None"]. */
export function isHeadless(svc: CoreService): boolean {
  return svc.spec.clusterIPs.length === 1 && svc.spec.clusterIPs[0] === CLUSTER_IP_NONE;
}

/** apiservice.ExternallyAccessible. */
export function isExternallyAccessible(svc: CoreService): boolean {
  const t = svc.spec.type;
  return t === 'LoadBalancer' || t === 'NodePort' || (t === 'ClusterIP' && svc.spec.externalIPs.length > 0);
}

/** apiservice.NeedsHealthCheck. */
export function needsHealthCheck(svc: CoreService): boolean {
  return svc.spec.type === 'LoadBalancer' && svc.spec.externalTrafficPolicy === 'Local';
}

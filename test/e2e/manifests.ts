/**
 * manifests.ts — small builders for the Service and EndpointSlice objects the scenarios feed to
 * kpc, shaped as the API server stores them (defaults filled in: clusterIPs, ipFamilies,
 * ipFamilyPolicy, protocol, traffic policies, conditions).
 */
import { stringify } from 'yaml';
import { pod } from './topology.js';

export const NAMESPACE = 'e2e';

export type Family = 'ipv4' | 'ipv6';

export interface SvcPort {
  name: string;
  port: number;
  protocol?: 'TCP' | 'UDP';
  targetPort: number;
  nodePort?: number;
}

export interface SvcSpec {
  name: string;
  type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  clusterIP: string;
  family?: Family;
  ports: SvcPort[];
  externalTrafficPolicy?: 'Cluster' | 'Local';
  internalTrafficPolicy?: 'Cluster' | 'Local';
  /** ClientIP affinity with this timeout. */
  clientIPAffinitySeconds?: number;
  externalIPs?: string[];
  loadBalancerIPs?: string[];
  loadBalancerSourceRanges?: string[];
  healthCheckNodePort?: number;
}

export function service(s: SvcSpec): Record<string, unknown> {
  const type = s.type ?? 'ClusterIP';
  const family = s.family ?? 'ipv4';
  const externallyAccessible = type !== 'ClusterIP' || (s.externalIPs?.length ?? 0) > 0;
  const spec: Record<string, unknown> = {
    type,
    clusterIP: s.clusterIP,
    clusterIPs: [s.clusterIP],
    ipFamilies: [family === 'ipv6' ? 'IPv6' : 'IPv4'],
    ipFamilyPolicy: 'SingleStack',
    selector: { app: s.name },
    ports: s.ports.map((p) => ({
      name: p.name,
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      targetPort: p.targetPort,
      ...(p.nodePort !== undefined ? { nodePort: p.nodePort } : {}),
    })),
    sessionAffinity: s.clientIPAffinitySeconds ? 'ClientIP' : 'None',
    internalTrafficPolicy: s.internalTrafficPolicy ?? 'Cluster',
  };
  if (s.clientIPAffinitySeconds) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: s.clientIPAffinitySeconds } };
  if (externallyAccessible) spec.externalTrafficPolicy = s.externalTrafficPolicy ?? 'Cluster';
  if (s.externalIPs) spec.externalIPs = s.externalIPs;
  if (type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts = true;
  if (s.loadBalancerSourceRanges) spec.loadBalancerSourceRanges = s.loadBalancerSourceRanges;
  if (s.healthCheckNodePort) spec.healthCheckNodePort = s.healthCheckNodePort;
  const obj: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: NAMESPACE },
    spec,
  };
  if (type === 'LoadBalancer') {
    obj.status = { loadBalancer: { ingress: (s.loadBalancerIPs ?? []).map((ip) => ({ ip, ipMode: 'VIP' })) } };
  }
  return obj;
}

export interface EndpointSpec {
  /** A lab pod (its address and node come from the topology). */
  pod: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface SliceSpec {
  service: string;
  family?: Family;
  /** Ports by name and protocol (they must match the Service's port names and protocols). */
  ports: { name: string; port: number; protocol?: 'TCP' | 'UDP' }[];
  endpoints: EndpointSpec[];
  /** Slice name suffix (default "1"). */
  suffix?: string;
}

export function endpointSlice(s: SliceSpec): Record<string, unknown> {
  const family = s.family ?? 'ipv4';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${s.service}-${s.suffix ?? '1'}`,
      namespace: NAMESPACE,
      labels: { 'kubernetes.io/service-name': s.service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
    },
    addressType: family === 'ipv6' ? 'IPv6' : 'IPv4',
    ports: s.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })),
    endpoints: s.endpoints.map((e) => {
      const p = pod(e.pod);
      const ready = e.ready ?? true;
      return {
        addresses: [family === 'ipv6' ? p.ip6 : p.ip4],
        conditions: { ready, serving: e.serving ?? ready, terminating: e.terminating ?? false },
        nodeName: p.node,
        targetRef: { kind: 'Pod', namespace: NAMESPACE, name: e.pod },
      };
    }),
  };
}

/** A multi-document YAML stream, as `kubectl get -o yaml` users keep manifests. */
export function toYaml(objects: readonly Record<string, unknown>[]): string {
  return objects.map((o) => `---\n${stringify(o)}`).join('');
}

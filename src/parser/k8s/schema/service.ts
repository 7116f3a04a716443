/**
 * v1 Service on the wire (k8s.io/api/core/v1 ServiceSpec, ServiceStatus) and its conversion to
 * the internal form validators read.
 */

import { z } from 'zod';
import type { CoreLoadBalancerIngress, CoreService, CoreServicePort, CoreServiceSpec, CoreSessionAffinityConfig } from '../model/service.js';
import { objectMetaSchema, toCoreObjectMeta } from './meta.js';
import { bool, int32, int32Value, intOrString, list, str, stringList, stringMap, struct } from './primitives.js';

const servicePort = z.strictObject({
  name: str(),
  protocol: str(),
  appProtocol: str(),
  port: int32(),
  targetPort: intOrString(),
  nodePort: int32(),
});

const condition = z.strictObject({
  type: str(),
  status: str(),
  observedGeneration: z.number().int().nullish(),
  lastTransitionTime: str(),
  reason: str(),
  message: str(),
});

const portStatus = z.strictObject({ port: int32Value().nullish(), protocol: str(), error: str() });

export const serviceSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  spec: struct({
    ports: list(servicePort),
    selector: stringMap(),
    clusterIP: str(),
    clusterIPs: stringList(),
    type: str(),
    externalIPs: stringList(),
    sessionAffinity: str(),
    loadBalancerIP: str(),
    loadBalancerSourceRanges: stringList(),
    externalName: str(),
    externalTrafficPolicy: str(),
    healthCheckNodePort: int32(),
    publishNotReadyAddresses: bool(),
    sessionAffinityConfig: struct({ clientIP: struct({ timeoutSeconds: int32() }) }),
    ipFamilies: stringList(),
    ipFamilyPolicy: str(),
    allocateLoadBalancerNodePorts: bool(),
    loadBalancerClass: str(),
    internalTrafficPolicy: str(),
    trafficDistribution: str(),
  }),
  status: struct({
    loadBalancer: struct({
      ingress: list(z.strictObject({ ip: str(), hostname: str(), ipMode: str(), ports: list(portStatus) })),
    }),
    conditions: list(condition),
  }),
});

export type WireService = z.infer<typeof serviceSchema>;

type WireServiceSpec = NonNullable<WireService['spec']>;
type WireServicePort = NonNullable<WireServiceSpec['ports']>[number];
type WireIngress = NonNullable<NonNullable<NonNullable<WireService['status']>['loadBalancer']>['ingress']>[number];

// The conversions below set optional fields one by one after the required ones, instead of
// spreading `{ key: v }` pieces into the literal: each spread made a throwaway object, and
// the spec came out as a slow (dictionary) object. They run once per Service and port.

function toCoreServicePort(p: WireServicePort): CoreServicePort {
  const out: CoreServicePort = { name: p.name ?? '', protocol: p.protocol ?? '', port: p.port ?? 0, targetPort: p.targetPort ?? 0, nodePort: p.nodePort ?? 0 };
  if (p.appProtocol != null) out.appProtocol = p.appProtocol;
  return out;
}

function toCoreSessionAffinityConfig(affinity: NonNullable<WireServiceSpec['sessionAffinityConfig']>): CoreSessionAffinityConfig {
  if (affinity.clientIP == null) return {};
  return { clientIP: affinity.clientIP.timeoutSeconds != null ? { timeoutSeconds: affinity.clientIP.timeoutSeconds } : {} };
}

function toCoreIngress(i: WireIngress): CoreLoadBalancerIngress {
  const out: CoreLoadBalancerIngress = { ip: i.ip ?? '', hostname: i.hostname ?? '' };
  if (i.ipMode != null) out.ipMode = i.ipMode;
  return out;
}

function toCoreServiceSpec(s: WireServiceSpec): CoreServiceSpec {
  const spec: CoreServiceSpec = {
    type: s.type ?? '',
    ports: (s.ports ?? []).map(toCoreServicePort),
    clusterIP: s.clusterIP ?? '',
    clusterIPs: [...(s.clusterIPs ?? [])],
    externalIPs: [...(s.externalIPs ?? [])],
    sessionAffinity: s.sessionAffinity ?? '',
    loadBalancerIP: s.loadBalancerIP ?? '',
    loadBalancerSourceRanges: [...(s.loadBalancerSourceRanges ?? [])],
    externalName: s.externalName ?? '',
    externalTrafficPolicy: s.externalTrafficPolicy ?? '',
    healthCheckNodePort: s.healthCheckNodePort ?? 0,
    publishNotReadyAddresses: s.publishNotReadyAddresses ?? false,
    ipFamilies: [...(s.ipFamilies ?? [])],
  };
  if (s.selector != null) spec.selector = { ...s.selector };
  if (s.sessionAffinityConfig != null) spec.sessionAffinityConfig = toCoreSessionAffinityConfig(s.sessionAffinityConfig);
  if (s.ipFamilyPolicy != null) spec.ipFamilyPolicy = s.ipFamilyPolicy;
  if (s.allocateLoadBalancerNodePorts != null) spec.allocateLoadBalancerNodePorts = s.allocateLoadBalancerNodePorts;
  if (s.loadBalancerClass != null) spec.loadBalancerClass = s.loadBalancerClass;
  if (s.internalTrafficPolicy != null) spec.internalTrafficPolicy = s.internalTrafficPolicy;
  if (s.trafficDistribution != null) spec.trafficDistribution = s.trafficDistribution;
  return spec;
}

/** Go's decoded Service: null and absent are zero values, nil pointers stay undefined. */
export function toCoreService(w: WireService): CoreService {
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    spec: toCoreServiceSpec(w.spec ?? {}),
    status: { loadBalancer: { ingress: (w.status?.loadBalancer?.ingress ?? []).map(toCoreIngress) } },
  };
}

/**
 * v1 Service on the wire (k8s.io/api/core/v1 ServiceSpec, ServiceStatus) and its conversion to
 * the internal form validators read.
 */

import { z } from 'zod';
import type { CoreService } from '../model/service.js';
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

/** Go's decoded Service: null and absent are zero values, nil pointers stay undefined. */
export function toCoreService(w: WireService): CoreService {
  const s = w.spec ?? {};
  const affinity = s.sessionAffinityConfig;
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    spec: {
      type: s.type ?? '',
      ports: (s.ports ?? []).map((p) => ({
        name: p.name ?? '',
        protocol: p.protocol ?? '',
        ...(p.appProtocol != null ? { appProtocol: p.appProtocol } : {}),
        port: p.port ?? 0,
        targetPort: p.targetPort ?? 0,
        nodePort: p.nodePort ?? 0,
      })),
      ...(s.selector != null ? { selector: { ...s.selector } } : {}),
      clusterIP: s.clusterIP ?? '',
      clusterIPs: [...(s.clusterIPs ?? [])],
      externalIPs: [...(s.externalIPs ?? [])],
      sessionAffinity: s.sessionAffinity ?? '',
      ...(affinity != null
        ? {
            sessionAffinityConfig:
              affinity.clientIP != null
                ? { clientIP: affinity.clientIP.timeoutSeconds != null ? { timeoutSeconds: affinity.clientIP.timeoutSeconds } : {} }
                : {},
          }
        : {}),
      loadBalancerIP: s.loadBalancerIP ?? '',
      loadBalancerSourceRanges: [...(s.loadBalancerSourceRanges ?? [])],
      externalName: s.externalName ?? '',
      externalTrafficPolicy: s.externalTrafficPolicy ?? '',
      healthCheckNodePort: s.healthCheckNodePort ?? 0,
      publishNotReadyAddresses: s.publishNotReadyAddresses ?? false,
      ipFamilies: [...(s.ipFamilies ?? [])],
      ...(s.ipFamilyPolicy != null ? { ipFamilyPolicy: s.ipFamilyPolicy } : {}),
      ...(s.allocateLoadBalancerNodePorts != null ? { allocateLoadBalancerNodePorts: s.allocateLoadBalancerNodePorts } : {}),
      ...(s.loadBalancerClass != null ? { loadBalancerClass: s.loadBalancerClass } : {}),
      ...(s.internalTrafficPolicy != null ? { internalTrafficPolicy: s.internalTrafficPolicy } : {}),
      ...(s.trafficDistribution != null ? { trafficDistribution: s.trafficDistribution } : {}),
    },
    status: {
      loadBalancer: {
        ingress: (w.status?.loadBalancer?.ingress ?? []).map((i) => ({
          ip: i.ip ?? '',
          hostname: i.hostname ?? '',
          ...(i.ipMode != null ? { ipMode: i.ipMode } : {}),
        })),
      },
    },
  };
}

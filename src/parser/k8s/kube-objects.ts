/**
 * The last step of decoding: a defaulted, validated internal object becomes the KubeObject the
 * rest of kpc reads (types.ts), keeping only what kube-proxy uses. Runs only on objects that
 * passed validation, so enum fields can be narrowed without checks.
 */

import type { CoreEndpoint, CoreEndpointPort, CoreEndpointSlice } from './model/endpoint-slice.js';
import type { CoreEndpoints } from './model/endpoints.js';
import type { CoreObjectMeta } from './model/meta.js';
import type { CoreNode } from './model/node.js';
import type { CoreService } from './model/service.js';
import type {
  EndpointSlice,
  Endpoints,
  IPFamilyName,
  LoadBalancerIngress,
  Node,
  NodeAddress,
  ObjectMeta,
  Protocol,
  Service,
  ServiceType,
  TrafficPolicy,
} from './types.js';

function meta(m: CoreObjectMeta): ObjectMeta {
  return { name: m.name, namespace: m.namespace, labels: { ...m.labels }, annotations: { ...m.annotations } };
}

export function toKubeService(svc: CoreService): Service {
  const s = svc.spec;
  return {
    kind: 'Service',
    metadata: meta(svc.metadata),
    spec: {
      type: s.type as ServiceType,
      clusterIP: s.clusterIP,
      clusterIPs: [...s.clusterIPs],
      ipFamilies: s.ipFamilies as IPFamilyName[],
      ...(s.ipFamilyPolicy !== undefined ? { ipFamilyPolicy: s.ipFamilyPolicy as 'SingleStack' | 'PreferDualStack' | 'RequireDualStack' } : {}),
      ports: s.ports.map((p) => ({ name: p.name, protocol: p.protocol as Protocol, port: p.port, targetPort: p.targetPort, nodePort: p.nodePort })),
      ...(s.selector !== undefined ? { selector: { ...s.selector } } : {}),
      externalIPs: [...s.externalIPs],
      loadBalancerSourceRanges: [...s.loadBalancerSourceRanges],
      ...(s.externalName !== '' ? { externalName: s.externalName } : {}),
      sessionAffinity: s.sessionAffinity as 'None' | 'ClientIP',
      ...(s.sessionAffinity === 'ClientIP' ? { sessionAffinityTimeoutSeconds: s.sessionAffinityConfig!.clientIP!.timeoutSeconds! } : {}),
      ...(s.externalTrafficPolicy !== '' ? { externalTrafficPolicy: s.externalTrafficPolicy as TrafficPolicy } : {}),
      ...(s.internalTrafficPolicy !== undefined ? { internalTrafficPolicy: s.internalTrafficPolicy as TrafficPolicy } : {}),
      healthCheckNodePort: s.healthCheckNodePort,
      ...(s.allocateLoadBalancerNodePorts !== undefined ? { allocateLoadBalancerNodePorts: s.allocateLoadBalancerNodePorts } : {}),
      ...(s.trafficDistribution !== undefined ? { trafficDistribution: s.trafficDistribution } : {}),
    },
    status: {
      loadBalancerIngress: svc.status.loadBalancer.ingress.map(
        (i): LoadBalancerIngress => ({
          ...(i.ip !== '' ? { ip: i.ip } : {}),
          ...(i.hostname !== '' ? { hostname: i.hostname } : {}),
          ...(i.ipMode !== undefined ? { ipMode: i.ipMode as 'VIP' | 'Proxy' } : {}),
        }),
      ),
    },
  };
}

/** One endpoint; optional fields are set one by one (not spread) because this runs per Pod. */
function toKubeEndpoint(e: CoreEndpoint): EndpointSlice['endpoints'][number] {
  const out: EndpointSlice['endpoints'][number] = { addresses: [...e.addresses], conditions: { ...e.conditions } };
  if (e.hostname !== undefined) out.hostname = e.hostname;
  if (e.nodeName !== undefined) out.nodeName = e.nodeName;
  if (e.zone !== undefined) out.zone = e.zone;
  if (e.hints !== undefined) out.hints = { forZones: e.hints.forZones.map((z) => z.name), forNodes: e.hints.forNodes.map((n) => n.name) };
  return out;
}

function toKubeEndpointPort(p: CoreEndpointPort): EndpointSlice['ports'][number] {
  const out: EndpointSlice['ports'][number] = { name: p.name ?? '', protocol: (p.protocol ?? 'TCP') as Protocol };
  if (p.port !== undefined) out.port = p.port;
  if (p.appProtocol !== undefined) out.appProtocol = p.appProtocol;
  return out;
}

export function toKubeEndpointSlice(slice: CoreEndpointSlice): EndpointSlice {
  return {
    kind: 'EndpointSlice',
    metadata: meta(slice.metadata),
    addressType: slice.addressType as 'IPv4' | 'IPv6' | 'FQDN',
    endpoints: slice.endpoints.map(toKubeEndpoint),
    ports: slice.ports.map(toKubeEndpointPort),
  };
}

export function toKubeEndpoints(ep: CoreEndpoints): Endpoints {
  const address = (a: CoreEndpoints['subsets'][number]['addresses'][number]) => ({
    ip: a.ip,
    ...(a.hostname !== '' ? { hostname: a.hostname } : {}),
    ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}),
  });
  return {
    kind: 'Endpoints',
    metadata: meta(ep.metadata),
    subsets: ep.subsets.map((ss) => ({
      addresses: ss.addresses.map(address),
      notReadyAddresses: ss.notReadyAddresses.map(address),
      ports: ss.ports.map((p) => ({
        name: p.name,
        port: p.port,
        protocol: p.protocol as Protocol,
        ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}),
      })),
    })),
  };
}

export function toKubeNode(node: CoreNode): Node {
  return {
    kind: 'Node',
    metadata: meta(node.metadata),
    spec: {
      ...(node.spec.podCIDRs.length > 0 ? { podCIDR: node.spec.podCIDRs[0]! } : {}),
      podCIDRs: [...node.spec.podCIDRs],
    },
    status: { addresses: node.status.addresses.map((a) => ({ type: a.type as NodeAddress['type'], address: a.address })) },
  };
}

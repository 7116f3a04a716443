/**
 * The last step of decoding: a defaulted, validated internal object becomes the KubeObject the
 * rest of kpc reads (types.ts), keeping only what kube-proxy uses. Runs only on objects that
 * passed validation, so enum fields can be narrowed without checks.
 *
 * The internal object is built afresh from the wire value for each decode (schema/*.ts) and
 * dropped once converted, so the result takes over its lists and maps instead of copying them
 * (an EndpointSlice has one address list per Pod). Optional fields are set one by one after the
 * required ones rather than spread in: the spreads made throwaway objects and slow objects.
 */

import type { CoreEndpoint, CoreEndpointPort, CoreEndpointSlice } from './model/endpoint-slice.js';
import type { CoreEndpoints } from './model/endpoints.js';
import type { CoreObjectMeta } from './model/meta.js';
import type { CoreNode } from './model/node.js';
import type { CorePod } from './model/pod.js';
import type { CoreLoadBalancerIngress, CoreService, CoreServiceSpec } from './model/service.js';
import type {
  EndpointSlice,
  Endpoints,
  IPFamilyName,
  LoadBalancerIngress,
  Node,
  NodeAddress,
  ObjectMeta,
  Pod,
  PodPort,
  Protocol,
  Service,
  ServiceType,
  TrafficPolicy,
} from './types.js';

export function meta(m: CoreObjectMeta): ObjectMeta {
  return { name: m.name, namespace: m.namespace, labels: m.labels, annotations: m.annotations };
}

function toKubeServicePort(p: CoreServiceSpec['ports'][number]): Service['spec']['ports'][number] {
  const out: Service['spec']['ports'][number] = { name: p.name, protocol: p.protocol as Protocol, port: p.port, targetPort: p.targetPort, nodePort: p.nodePort };
  if (p.appProtocol !== undefined) out.appProtocol = p.appProtocol;
  return out;
}

/** meta() plus what the controllers read of a Service or Pod: its uid and deletionTimestamp. */
function metaWithIdentity(m: CoreObjectMeta): ObjectMeta {
  const out = meta(m);
  if (m.uid !== undefined) out.uid = m.uid;
  if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
  return out;
}

function toKubeServiceSpec(s: CoreServiceSpec): Service['spec'] {
  const spec: Service['spec'] = {
    type: s.type as ServiceType,
    clusterIP: s.clusterIP,
    clusterIPs: s.clusterIPs,
    ipFamilies: s.ipFamilies as IPFamilyName[],
    ports: s.ports.map(toKubeServicePort),
    externalIPs: s.externalIPs,
    loadBalancerSourceRanges: s.loadBalancerSourceRanges,
    sessionAffinity: s.sessionAffinity as 'None' | 'ClientIP',
    healthCheckNodePort: s.healthCheckNodePort,
  };
  if (s.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = s.ipFamilyPolicy as 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
  if (s.selector !== undefined) spec.selector = s.selector;
  if (s.externalName !== '') spec.externalName = s.externalName;
  if (s.sessionAffinity === 'ClientIP') spec.sessionAffinityTimeoutSeconds = s.sessionAffinityConfig!.clientIP!.timeoutSeconds!;
  if (s.externalTrafficPolicy !== '') spec.externalTrafficPolicy = s.externalTrafficPolicy as TrafficPolicy;
  if (s.internalTrafficPolicy !== undefined) spec.internalTrafficPolicy = s.internalTrafficPolicy as TrafficPolicy;
  if (s.allocateLoadBalancerNodePorts !== undefined) spec.allocateLoadBalancerNodePorts = s.allocateLoadBalancerNodePorts;
  if (s.trafficDistribution !== undefined) spec.trafficDistribution = s.trafficDistribution;
  if (s.publishNotReadyAddresses) spec.publishNotReadyAddresses = true;
  return spec;
}

function toKubeIngress(i: CoreLoadBalancerIngress): LoadBalancerIngress {
  const out: LoadBalancerIngress = {};
  if (i.ip !== '') out.ip = i.ip;
  if (i.hostname !== '') out.hostname = i.hostname;
  if (i.ipMode !== undefined) out.ipMode = i.ipMode as 'VIP' | 'Proxy';
  return out;
}

export function toKubeService(svc: CoreService): Service {
  return {
    kind: 'Service',
    metadata: metaWithIdentity(svc.metadata),
    spec: toKubeServiceSpec(svc.spec),
    status: { loadBalancerIngress: svc.status.loadBalancer.ingress.map(toKubeIngress) },
  };
}

/** One endpoint (this runs once per Pod). */
function toKubeEndpoint(e: CoreEndpoint): EndpointSlice['endpoints'][number] {
  const out: EndpointSlice['endpoints'][number] = { addresses: e.addresses, conditions: e.conditions };
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
    status: nodeStatus(node),
  };
}

function nodeStatus(node: CoreNode): Node['status'] {
  const status: Node['status'] = { addresses: node.status.addresses.map((a) => ({ type: a.type as NodeAddress['type'], address: a.address })) };
  if (node.status.conditions.find((c) => c.type === 'Ready')?.status === 'True') status.ready = true;
  const cpu = node.status.allocatable.cpu;
  if (cpu !== undefined) status.allocatableCPU = cpu;
  return status;
}

/** FindPort's search order: the containers' ports, then those of sidecars (restartable init containers). */
function namedPortsOf(pod: CorePod): PodPort[] {
  const out: PodPort[] = [];
  const add = (c: CorePod['spec']['containers'][number]) => {
    for (const p of c.ports) if (p.name !== '') out.push({ name: p.name, containerPort: p.containerPort, protocol: p.protocol as Protocol });
  };
  for (const c of pod.spec.containers) add(c);
  for (const c of pod.spec.initContainers) if (c.restartPolicy === 'Always') add(c);
  return out;
}

export function toKubePod(pod: CorePod): Pod {
  return {
    kind: 'Pod',
    metadata: metaWithIdentity(pod.metadata),
    spec: { nodeName: pod.spec.nodeName, hostname: pod.spec.hostname, subdomain: pod.spec.subdomain, namedPorts: namedPortsOf(pod) },
    status: {
      phase: pod.status.phase,
      // getPodReadyCondition takes the first Ready condition.
      ready: pod.status.conditions.find((c) => c.type === 'Ready')?.status === 'True',
      podIPs: pod.status.podIPs,
    },
  };
}

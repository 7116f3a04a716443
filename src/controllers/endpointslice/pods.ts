/**
 * A Pod as one endpoint of a Service: k8s.io/endpointslice utils.go podToEndpoint,
 * getEndpointAddresses, getEndpointPorts, FindPort, and util/controller_utils.go
 * ShouldPodBeInEndpoints, ShouldSetHostname, IsPodReady.
 */

import { formatIP, parseIP } from '../../net/ip.js';
import type { Node, Pod, Service } from '../../parser/k8s/types.js';
import type { DerivedEndpoint, DerivedEndpointPort } from './model.js';
import { ZONE_LABEL } from '../../parser/k8s/model/node.js';

/**
 * ShouldPodBeInEndpoints(pod, includeTerminating=true): not terminal (Succeeded, Failed) and
 * with an IP. kpc's podIPs already holds the v1 podIP (the API server's conversion).
 */
export function shouldPodBeInEndpoints(pod: Pod): boolean {
  if (pod.status.phase === 'Failed' || pod.status.phase === 'Succeeded') return false;
  return pod.status.podIPs.length > 0;
}

/** ShouldSetHostname: the Pod names the Service as its subdomain (in its namespace). */
export function shouldSetHostname(pod: Pod, svc: Service): boolean {
  return pod.spec.hostname.length > 0 && pod.spec.subdomain === svc.metadata.name && svc.metadata.namespace === pod.metadata.namespace;
}

/**
 * getEndpointAddresses: the pod IPs of one family, each parsed sloppily and printed again
 * ("in case it is in an irregular format"); an IPv4-mapped IPv6 address counts as IPv4.
 */
export function endpointAddresses(pod: Pod, addressType: 'IPv4' | 'IPv6'): string[] {
  const out: string[] = [];
  for (const text of pod.status.podIPs) {
    const p = parseIP(text);
    // Validation let only IPs through; ParseIPSloppy of anything else is nil, which IsIPv6
    // calls not IPv6 and String() prints as "<nil>". kpc never gets there.
    if (!p) continue;
    if (p.ip.family === addressType) out.push(formatIP(p.ip));
  }
  return out;
}

/**
 * podToEndpoint. Ready is never true for a terminating Pod unless the Service publishes
 * not-ready addresses.
 */
export function podToEndpoint(pod: Pod, node: Node | undefined, svc: Service, addressType: 'IPv4' | 'IPv6'): DerivedEndpoint {
  const serving = pod.status.ready;
  const terminating = pod.metadata.deletionTimestamp !== undefined;
  const ready = svc.spec.publishNotReadyAddresses === true || (serving && !terminating);
  const ep: DerivedEndpoint = {
    addresses: endpointAddresses(pod, addressType),
    conditions: { ready, serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, ...(pod.metadata.uid !== undefined ? { uid: pod.metadata.uid } : {}) },
  };
  if (pod.spec.nodeName !== '') ep.nodeName = pod.spec.nodeName;
  const zone = node?.metadata.labels[ZONE_LABEL];
  if (zone !== undefined && zone !== '') ep.zone = zone;
  if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec.hostname;
  return ep;
}

/**
 * FindPort: a number is itself; a name is looked up in the containers' ports, then in the
 * sidecars' (restartable init containers), matching the Service port's protocol too.
 */
export function findPort(pod: Pod, svcPort: Service['spec']['ports'][number]): number | undefined {
  const target = svcPort.targetPort;
  if (typeof target === 'number') return target;
  for (const p of pod.spec.namedPorts) if (p.name === target && p.protocol === svcPort.protocol) return p.containerPort;
  return undefined;
}

/**
 * getEndpointPorts: one port per Service port whose target resolves for this Pod (the others
 * are left out: one Service can yield several port sets). A headless Service may have none.
 */
export function endpointPorts(svc: Service, pod: Pod): DerivedEndpointPort[] {
  const out: DerivedEndpointPort[] = [];
  if (svc.spec.ports.length === 0 && svc.spec.clusterIP === 'None') return out;
  for (const sp of svc.spec.ports) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const ep: DerivedEndpointPort = { name: sp.name, protocol: sp.protocol, port };
    if (sp.appProtocol !== undefined) ep.appProtocol = sp.appProtocol;
    out.push(ep);
  }
  return out;
}

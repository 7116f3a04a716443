/**
 * EndpointSlices from Pods: what the EndpointSlice controller (kube-controller-manager,
 * k8s.io/kubernetes pkg/controller/endpointslice with the k8s.io/endpointslice reconciler)
 * writes for selector Services, derived offline from the Services, Pods and Nodes of the input.
 * A pure function: the same objects, in any order, give the same slices.
 *
 * Which Services: `auto` derives for every Service the controller reconciles (a selector, not
 * ExternalName, not being deleted) that has no EndpointSlice in the input, in a namespace that
 * has Pods in the input (an input without the namespace's Pods says nothing about them);
 * `pods` for every Service the controller reconciles, in place of the input's slices that the
 * controller manages (other managers' slices stay); `slices` for none.
 */

import { compareStrings } from '../../go/strings.js';
import type { EndpointSlice, Node, Pod, Service } from '../../parser/k8s/types.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../parser/k8s/model/endpoint-slice.js';
import { CONTROLLER_NAME, type DerivedEndpointSlice } from './model.js';
import { reconciledByController, reconcileService, type ServiceSlices } from './reconcile.js';
import { RELEASES, type ControllerVersion } from './releases.js';
import { topologyCacheFor, type TopologyOutcome } from './topology.js';

export type { DerivedEndpoint, DerivedEndpointPort, DerivedEndpointSlice, OwnerReference, TargetRef } from './model.js';
export { CONTROLLER_RELEASES, isControllerVersion, type ControllerVersion } from './releases.js';

export type EndpointsFrom = 'auto' | 'pods' | 'slices';

export interface DeriveInput {
  services: readonly Service[];
  pods: readonly Pod[];
  nodes: readonly Node[];
  /** The input's EndpointSlices (auto: a Service with one is left alone; pods: replaced). */
  slices: readonly EndpointSlice[];
}

export interface DeriveOptions {
  endpointsFrom: EndpointsFrom;
  /** The controller release: kube-controller-manager's, taken to be the kube-proxy release's (--kube-proxy-version). */
  release: ControllerVersion;
}

export interface ServiceDerivation {
  namespace: string;
  name: string;
  slices: number;
  podsWithoutNode: Array<{ pod: string; nodeName: string }>;
  topology: TopologyOutcome[];
}

export interface DeriveResult {
  /** The derived slices, by Service (namespace/name), address type, ports and endpoints. */
  derived: DerivedEndpointSlice[];
  /** The input's slices that stay (all but those the derived ones replace). */
  kept: EndpointSlice[];
  /** One entry per Service slices were derived for, in namespace/name order. */
  services: ServiceDerivation[];
}

function serviceKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function deriveEndpointSlices(input: DeriveInput, opts: DeriveOptions): DeriveResult {
  if (opts.endpointsFrom === 'slices') return { derived: [], kept: [...input.slices], services: [] };
  const release = RELEASES[opts.release];
  const podsByNamespace = new Map<string, Pod[]>();
  for (const p of input.pods) {
    const list = podsByNamespace.get(p.metadata.namespace);
    if (list) list.push(p);
    else podsByNamespace.set(p.metadata.namespace, [p]);
  }
  const withSlices = new Set(input.slices.map((s) => serviceKey(s.metadata.namespace, s.metadata.labels[SERVICE_NAME_LABEL] ?? '')));
  const chosen = input.services
    .filter((svc) => {
      if (!reconciledByController(svc)) return false;
      if (opts.endpointsFrom === 'pods') return true;
      return !withSlices.has(serviceKey(svc.metadata.namespace, svc.metadata.name)) && podsByNamespace.has(svc.metadata.namespace);
    })
    .sort((a, b) => compareStrings(serviceKey(a.metadata.namespace, a.metadata.name), serviceKey(b.metadata.namespace, b.metadata.name)));
  const replaced = new Set(chosen.map((s) => serviceKey(s.metadata.namespace, s.metadata.name)));
  const kept = input.slices.filter(
    (s) => !(replaced.has(serviceKey(s.metadata.namespace, s.metadata.labels[SERVICE_NAME_LABEL] ?? '')) && s.metadata.labels[MANAGED_BY_LABEL] === CONTROLLER_NAME),
  );
  const nodes = new Map(input.nodes.map((n) => [n.metadata.name, n]));
  const ctx = { release, nodes, topology: topologyCacheFor(input.nodes) };
  const derived: DerivedEndpointSlice[] = [];
  const services: ServiceDerivation[] = [];
  for (const svc of chosen) {
    const r: ServiceSlices = reconcileService(svc, podsByNamespace.get(svc.metadata.namespace) ?? [], ctx);
    derived.push(...r.slices);
    services.push({
      namespace: svc.metadata.namespace,
      name: svc.metadata.name,
      slices: r.slices.length,
      podsWithoutNode: r.podsWithoutNode.map((m) => ({ pod: m.pod.metadata.name, nodeName: m.nodeName })).sort((a, b) => compareStrings(a.pod, b.pod)),
      topology: r.topology,
    });
  }
  return { derived, kept, services };
}
export { toList, toManifest } from './manifest.js';

/**
 * One Service's EndpointSlices as the controller first writes them (no slices of its own yet):
 * k8s.io/endpointslice reconciler.go Reconcile / reconcileByAddressType / reconcileByPortMapping
 * / finalize, utils.go newEndpointSlice / setEndpointSliceLabels / getAddressTypesForService,
 * and pkg/controller/endpointslice syncService (which Services, which Pods).
 *
 * Per address type of the Service: every Pod the selector picks that should be in endpoints
 * becomes one endpoint, grouped by its set of ports (a named targetPort can resolve
 * differently per Pod); each group fills slices of at most 100 endpoints; an address type with
 * no endpoint at all gets one empty placeholder slice. A Pod whose Node is not known is left out
 * (the controller retries later), unless the Service publishes not-ready addresses.
 *
 * Where the controller is random, kpc is deterministic: endpoints are sorted by address and Pod
 * (the controller pops them from a Go map), and so is which endpoints share a slice when a group
 * needs several; ports keep the controller's own order (sorted by their hash, releases.ts).
 */

import { compareStrings } from '../../go/strings.js';
import type { Node, Pod, Service } from '../../parser/k8s/types.js';
import { portsInOrder } from './hash.js';
import { addTrafficDistributionHints, hintsMode } from './hints.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../parser/k8s/model/endpoint-slice.js';
import { HEADLESS_LABEL } from '../../parser/k8s/model/service.js';
import { CONTROLLER_NAME, type DerivedEndpoint, type DerivedEndpointPort, type DerivedEndpointSlice, type OwnerReference } from './model.js';
import { endpointSlicePrefix, generatedName } from './names.js';
import { endpointPorts, podToEndpoint, shouldPodBeInEndpoints } from './pods.js';
import { MAX_ENDPOINTS_PER_SLICE, type ControllerRelease } from './releases.js';
import { addTopologyHints, type TopologyCache, type TopologyOutcome } from './topology.js';

export interface ReconcileContext {
  release: ControllerRelease;
  nodes: ReadonlyMap<string, Node>;
  topology: TopologyCache;
  maxEndpointsPerSlice?: number;
}

export interface ServiceSlices {
  slices: DerivedEndpointSlice[];
  /** Pods left out because their Node is not in the input. */
  podsWithoutNode: Array<{ pod: Pod; nodeName: string }>;
  /** What the topology cache decided, per address type (topology-mode Services only). */
  topology: TopologyOutcome[];
}

/** syncService's filter, and finalize's: which Services get slices from the controller. */
export function reconciledByController(svc: Service): boolean {
  if (svc.spec.type === 'ExternalName') return false;
  // An empty selector does not survive the API server's storage round trip (protobuf drops an
  // empty map), so the controller reads it as none.
  if (svc.spec.selector === undefined || Object.keys(svc.spec.selector).length === 0) return false;
  return svc.metadata.deletionTimestamp === undefined;
}

/** labels.SelectorFromSet(selector).Matches(pod labels). */
export function selects(selector: Readonly<Record<string, string>>, pod: Pod): boolean {
  for (const [k, v] of Object.entries(selector)) if (pod.metadata.labels[k] !== v) return false;
  return true;
}

/** getAddressTypesForService, in the Service's family order. */
export function addressTypesOf(svc: Service): Array<'IPv4' | 'IPv6'> {
  const out: Array<'IPv4' | 'IPv6'> = [];
  for (const f of svc.spec.ipFamilies) if (!out.includes(f)) out.push(f);
  if (out.length > 0) return out;
  const ip = svc.spec.clusterIP;
  if (ip !== '' && ip !== 'None') return [ip.includes(':') ? 'IPv6' : 'IPv4'];
  return ['IPv4', 'IPv6'];
}

const RESERVED_LABELS = new Set([SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL]);

/** setEndpointSliceLabels for a new slice: the Service's labels but the reserved ones, then those. */
export function sliceLabels(svc: Service): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(svc.metadata.labels)) if (!RESERVED_LABELS.has(k)) labels[k] = v;
  const ipSet = svc.spec.clusterIP !== 'None' && svc.spec.clusterIP !== '';
  if (!ipSet) labels[HEADLESS_LABEL] = '';
  labels[SERVICE_NAME_LABEL] = svc.metadata.name;
  labels[MANAGED_BY_LABEL] = CONTROLLER_NAME;
  return labels;
}

/** metav1.NewControllerRef(service, v1 Service). */
function ownerReference(svc: Service): OwnerReference {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    name: svc.metadata.name,
    ...(svc.metadata.uid !== undefined ? { uid: svc.metadata.uid } : {}),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** NewPortMapKey's sort (portsInOrder): by the hash of each port, the release's hash. */
function sortPorts(ports: DerivedEndpointPort[], release: ControllerRelease): { ports: DerivedEndpointPort[]; key: string } {
  const keyed = portsInOrder(ports, release.hash);
  return { ports: keyed.map((k) => k.port), key: keyed.map((k) => k.hash).join(',') };
}

/** The order kpc gives endpoints (the controller's is a Go map's). */
function endpointKey(e: DerivedEndpoint): string {
  return `${[...e.addresses].sort().join(',')}\u0000${e.targetRef.namespace}/${e.targetRef.name}`;
}

interface PortGroup {
  ports: DerivedEndpointPort[];
  key: string;
  /** EndpointSet: keyed by hashEndpoint's fields (addresses, hostname, Pod). */
  endpoints: Map<string, DerivedEndpoint>;
}

function newSlice(svc: Service, addressType: 'IPv4' | 'IPv6', ports: DerivedEndpointPort[], endpoints: DerivedEndpoint[], seed: string): DerivedEndpointSlice {
  const prefix = endpointSlicePrefix(svc.metadata.name);
  return {
    kind: 'EndpointSlice',
    metadata: {
      name: generatedName(prefix, `${svc.metadata.namespace}/${svc.metadata.name} ${seed}`),
      generateName: prefix,
      namespace: svc.metadata.namespace,
      labels: sliceLabels(svc),
      annotations: {},
      ownerReferences: [ownerReference(svc)],
    },
    addressType,
    endpoints,
    ports: ports.map((p) => ({ ...p })),
  };
}

/** The slices of one Service (reconciledByController must be true) from the Pods of its namespace. */
export function reconcileService(svc: Service, namespacePods: readonly Pod[], ctx: ReconcileContext): ServiceSlices {
  const max = ctx.maxEndpointsPerSlice ?? MAX_ENDPOINTS_PER_SLICE;
  const selector = svc.spec.selector!;
  const pods = namespacePods.filter((p) => selects(selector, p));
  const out: ServiceSlices = { slices: [], podsWithoutNode: [], topology: [] };
  const missing = new Map<string, { pod: Pod; nodeName: string }>();
  const mode = hintsMode(svc, ctx.release);
  for (const addressType of addressTypesOf(svc)) {
    const groups = new Map<string, PortGroup>();
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod)) continue;
      const sorted = sortPorts(endpointPorts(svc, pod), ctx.release);
      let group = groups.get(sorted.key);
      if (!group) {
        group = { ports: sorted.ports, key: sorted.key, endpoints: new Map() };
        groups.set(sorted.key, group);
      }
      const node = ctx.nodes.get(pod.spec.nodeName);
      if (node === undefined && svc.spec.publishNotReadyAddresses !== true) {
        missing.set(`${pod.metadata.namespace}/${pod.metadata.name}`, { pod, nodeName: pod.spec.nodeName });
        continue;
      }
      const ep = podToEndpoint(pod, node, svc, addressType);
      if (ep.addresses.length === 0) continue;
      group.endpoints.set(`${[...ep.addresses].sort().join(',')}\u0000${ep.hostname ?? ''}\u0000${ep.targetRef.namespace}/${ep.targetRef.name}`, ep);
    }
    const created: DerivedEndpointSlice[] = [];
    for (const group of [...groups.values()].sort((a, b) => compareStrings(a.key, b.key))) {
      const endpoints = [...group.endpoints.values()].sort((a, b) => compareStrings(endpointKey(a), endpointKey(b)));
      for (let i = 0; i * max < endpoints.length; i++) {
        created.push(newSlice(svc, addressType, group.ports, endpoints.slice(i * max, (i + 1) * max), `${addressType} ${group.key} ${i}`));
      }
    }
    // "When no endpoint slices would usually exist, we need to add a placeholder."
    if (created.length === 0) created.push(newSlice(svc, addressType, [], [], `${addressType} placeholder`));
    if (mode === 'topology') out.topology.push(addTopologyHints(created, ctx.topology, addressType));
    else if (mode === 'traffic-distribution') addTrafficDistributionHints(created, svc.spec.trafficDistribution!);
    out.slices.push(...created);
  }
  out.podsWithoutNode = [...missing.values()];
  return out;
}

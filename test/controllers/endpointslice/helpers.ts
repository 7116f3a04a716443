/**
 * Builders for the EndpointSlice controller tests: the upstream tests' helpers (k8s.io/endpointslice
 * utils_test.go newPod, newServiceAndEndpointMeta; reconciler_test.go newReconciler) as kpc's
 * model objects.
 *
 * Pods and Nodes go through kpc's decoder (src/parser/k8s/decode.ts), i.e. what the API server
 * would store, so the parser's part (the v1 podIP reconciled into podIPs, container ports in
 * FindPort's order, sidecars, the Node's Ready condition and allocatable CPU) is exercised too.
 * Services are built as kpc's model directly, as the Go tests hand their structs straight to the
 * reconciler: several upstream Services have no cluster IP, which kpc's decoder refuses (it needs
 * the IP a cluster assigned) but which the controller reads as "not set" (the headless label).
 */

import { decodeObject } from '../../../src/parser/k8s/decode.js';
import type { Node, Pod, Service } from '../../../src/parser/k8s/types.js';
import type { DerivedEndpoint, DerivedEndpointSlice } from '../../../src/controllers/endpointslice/model.js';
import { reconcileService, type ServiceSlices } from '../../../src/controllers/endpointslice/reconcile.js';
import { RELEASES, type ControllerRelease } from '../../../src/controllers/endpointslice/releases.js';
import { topologyCacheFor } from '../../../src/controllers/endpointslice/topology.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const OPTS = { ipValidation: 'legacy', nodePortRange: { min: 30000, max: 32767 } } as const;

export function decoded<T>(raw: Raw): T {
  const r = decodeObject(raw, OPTS);
  if (r.status !== 'ok') throw new Error(`test input does not decode: ${JSON.stringify(r)}`);
  return r.object as T;
}

/**
 * utils_test.go newPod(n, namespace, ready, nPorts, terminating): pod<n>, label foo=bar, one
 * container without ports, node-1, pod IP 1.2.3.<4+n>, the Ready condition. The Go helper's
 * addresses for n > 251 are not IPs at all (1.2.3.256 and up: ParseIPSloppy gives nil, printed
 * "<nil>"); the API server would refuse them, so from there on the address continues in the
 * next /24 (1.2.4.0, ...). No test here looks at those addresses, only at counts.
 */
export function podRaw(n: number, namespace: string, ready: boolean, terminating: boolean): Raw {
  const i = 4 + n;
  const ip = i < 256 ? `1.2.3.${i}` : `1.2.${3 + Math.floor(i / 256)}.${i % 256}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace,
      name: `pod${n}`,
      labels: { foo: 'bar' },
      ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [{ name: 'container-1' }], nodeName: 'node-1' },
    status: { podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

export function newPod(n: number, namespace: string, ready: boolean, terminating: boolean, change?: (p: Raw) => void): Pod {
  const raw = podRaw(n, namespace, ready, terminating);
  change?.(raw);
  return decoded<Pod>(raw);
}

export interface NodeSpec {
  name: string;
  zone?: string;
  labels?: Record<string, string>;
  /** The Ready condition's status; no condition when undefined. */
  ready?: 'True' | 'False';
  cpu?: string;
}

export function newNode(s: NodeSpec): Node {
  const labels: Record<string, string> = { ...(s.labels ?? {}) };
  if (s.zone !== undefined) labels['topology.kubernetes.io/zone'] = s.zone;
  const status: Raw = {};
  if (s.ready !== undefined) status.conditions = [{ type: 'Ready', status: s.ready }];
  if (s.cpu !== undefined) status.allocatable = { cpu: s.cpu };
  return decoded<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: s.name, labels }, spec: {}, status });
}

export interface ServiceSpec {
  name: string;
  namespace: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  clusterIP?: string;
  ipFamilies?: Array<'IPv4' | 'IPv6'>;
  ports?: Service['spec']['ports'];
  selector?: Record<string, string> | undefined;
  publishNotReadyAddresses?: boolean;
  trafficDistribution?: string;
  type?: Service['spec']['type'];
  deletionTimestamp?: string;
}

export function newService(s: ServiceSpec): Service {
  return {
    kind: 'Service',
    metadata: {
      name: s.name,
      namespace: s.namespace,
      labels: s.labels ?? {},
      annotations: s.annotations ?? {},
      ...(s.uid !== undefined ? { uid: s.uid } : {}),
      ...(s.deletionTimestamp !== undefined ? { deletionTimestamp: s.deletionTimestamp } : {}),
    },
    spec: {
      type: s.type ?? 'ClusterIP',
      clusterIP: s.clusterIP ?? '',
      clusterIPs: s.clusterIP !== undefined && s.clusterIP !== '' ? [s.clusterIP] : [],
      ipFamilies: s.ipFamilies ?? [],
      ports: s.ports ?? [],
      ...('selector' in s ? (s.selector !== undefined ? { selector: s.selector } : {}) : { selector: { foo: 'bar' } }),
      externalIPs: [],
      loadBalancerSourceRanges: [],
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      healthCheckNodePort: 0,
      ...(s.publishNotReadyAddresses ? { publishNotReadyAddresses: true as const } : {}),
      ...(s.trafficDistribution !== undefined ? { trafficDistribution: s.trafficDistribution } : {}),
    },
    status: { loadBalancerIngress: [] },
  };
}

/**
 * utils_test.go newServiceAndEndpointMeta(name, namespace): UID "<namespace>-<name>", one TCP
 * port named <name> with targetPort 80, selector foo=bar, ipFamilies [IPv4], no cluster IP.
 * (The Go port has no `port`; the slice's port is the target port, so 80 is used for both.)
 */
export function newServiceAndEndpointMeta(name: string, namespace: string, change: Partial<ServiceSpec> = {}): Service {
  return newService({
    name,
    namespace,
    uid: `${namespace}-${name}`,
    ports: [{ name, protocol: 'TCP', port: 80, targetPort: 80, nodePort: 0 }],
    ipFamilies: ['IPv4'],
    ...change,
  });
}

export interface ReconcileOptions {
  release?: ControllerRelease;
  maxEndpointsPerSlice?: number;
}

/** reconcileHelper with no existing slices: newReconciler(client, nodes, max) + Reconcile. */
export function reconcile(svc: Service, pods: readonly Pod[], nodes: readonly Node[], o: ReconcileOptions = {}): ServiceSlices {
  return reconcileService(svc, pods, {
    release: o.release ?? RELEASES['1.37'],
    nodes: new Map(nodes.map((n) => [n.metadata.name, n])),
    topology: topologyCacheFor(nodes),
    ...(o.maxEndpointsPerSlice !== undefined ? { maxEndpointsPerSlice: o.maxEndpointsPerSlice } : {}),
  });
}

/** expectUnorderedSlicesWithLengths. */
export function lengths(slices: readonly DerivedEndpointSlice[]): number[] {
  return slices.map((s) => s.endpoints.length).sort((a, b) => b - a);
}

export function allEndpoints(slices: readonly DerivedEndpointSlice[]): DerivedEndpoint[] {
  return slices.flatMap((s) => s.endpoints);
}

/** How many endpoints carry a hint for each zone ('' for none), as the Go tests count them. */
export function hintsByZone(slices: readonly DerivedEndpointSlice[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of allEndpoints(slices)) {
    const z = e.hints !== undefined && e.hints.forZones.length === 1 ? e.hints.forZones[0]! : '';
    out[z] = (out[z] ?? 0) + 1;
  }
  return out;
}

export function crossZoneHints(slices: readonly DerivedEndpointSlice[]): number {
  return allEndpoints(slices).filter((e) => e.hints !== undefined && e.hints.forZones.length > 0 && e.hints.forZones[0] !== e.zone).length;
}

/**
 * kube-proxy's TestCategorizeEndpoints (pkg/proxy/topology_test.go), ported case by case onto
 * kpc's categorizeEndpoints (src/ir/topology.ts).
 *
 * Sources (the Go module cache, /root/go/pkg/mod/k8s.io/kubernetes@<release>/pkg/proxy/):
 *   v1.34.4  31 cases (`since: 'v1.34'` below). v1.35.4 has the same 31 cases; it only makes
 *            the harness also pin the emulation version to 1.34 when it turns the gate off,
 *            because PreferSameTrafficDistribution is GA and locked on from 1.35.
 *   v1.36.3  adds 1 case ("single endpoint not ready, not serving, not terminating",
 *            `since: 'v1.36'`), together with topologyModeFromHints' hasReadyEndpoints guard.
 *   v1.37.2  the same 32 cases as v1.36.3.
 *
 * Every expectation is the Go test's data, copied, never kpc's output. The harness below checks
 * what the Go harness checks, the same way:
 *   - an expected list that is nil or empty only requires kpc's list to be empty (Go's
 *     `len(tc.clusterEndpoints) == 0 && len(clusterEndpoints) != 0`); kpc has no nil, it returns
 *     [] for a policy the port never uses;
 *   - otherwise lists are compared as SETS of endpoint strings (checkExpectedEndpoints):
 *     kube-proxy builds the merged allReachableEndpoints through a Go map (random order) and its
 *     test compares sets, while kpc sorts the union by address;
 *   - the expected allEndpoints is derived as the Go harness derives it: the cluster set when
 *     only it is non-empty, the local set when only it is non-empty, else tc.allEndpoints;
 *   - hasAnyEndpoints must be `len(expectedAllEndpoints) > 0 || tc.onlyRemoteEndpoints`.
 *
 * Mapping of the Go inputs onto kpc's types:
 *   - nodeName → NodeFacts.name ('' when the Go case leaves it unset);
 *   - nodeLabels[topology.kubernetes.io/zone] → NodeFacts.zone ('' when the label is missing
 *     or empty: kube-proxy reads `topologyLabels[v1.LabelTopologyZone]`, which is "" in both);
 *   - preferSameEnabled (the PreferSameTrafficDistribution gate the Go test sets, false when
 *     the case does not mention it) → categorizeEndpoints' nodeHintsEnabled argument;
 *   - BaseServicePortInfo{internalPolicyLocal, externalPolicyLocal, nodePort} → the same
 *     ServicePort fields (nodePort is what makes the port externally accessible);
 *   - BaseEndpointInfo{endpoint, ready, serving, terminating, isLocal, zoneHints, nodeHints} →
 *     the same Endpoint fields (a Go zero value is false / no hints). The Go endpoint lists are
 *     already in address order, as kpc's ServicePort.endpoints must be.
 */
import { describe, expect, it } from 'vitest';
import type { Endpoint, NodeFacts, ServicePort } from '../../src/ir/model.js';
import { categorizeEndpoints, topologyModeFromHints } from '../../src/ir/topology.js';

const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** A Go `&BaseEndpointInfo{...}` literal. */
interface GoEndpoint {
  endpoint: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  isLocal?: boolean;
  /** Go `zoneHints: nil` is written as null. */
  zoneHints?: string[] | null;
  nodeHints?: string[] | null;
}

/** A Go `&BaseServicePortInfo{...}` literal (only the fields the test sets). */
interface GoServicePort {
  internalPolicyLocal?: boolean;
  externalPolicyLocal?: boolean;
  nodePort?: number;
}

interface Case {
  name: string;
  since: 'v1.34' | 'v1.36';
  preferSameEnabled?: boolean;
  nodeName?: string;
  nodeLabels?: Record<string, string>;
  serviceInfo: GoServicePort;
  /** null is Go's `endpoints: nil`. */
  endpoints: GoEndpoint[] | null;
  /** null is Go's nil ("the service doesn't use this kind of endpoints"), [] is sets.New(). */
  clusterEndpoints: string[] | null;
  localEndpoints: string[] | null;
  allEndpoints?: string[] | null;
  onlyRemoteEndpoints?: boolean;
}

function endpointOf(g: GoEndpoint): Endpoint {
  const m = /^(.*):(\d+)$/.exec(g.endpoint);
  if (!m) throw new Error(`bad endpoint ${g.endpoint}`);
  const ep: Endpoint = {
    ip: m[1]!,
    port: Number(m[2]),
    address: g.endpoint,
    ready: g.ready ?? false,
    serving: g.serving ?? false,
    terminating: g.terminating ?? false,
    isLocal: g.isLocal ?? false,
  };
  if (g.zoneHints) ep.zoneHints = new Set(g.zoneHints);
  if (g.nodeHints) ep.nodeHints = new Set(g.nodeHints);
  return ep;
}

function servicePortOf(g: GoServicePort, endpoints: Endpoint[]): ServicePort {
  return {
    namespace: 'ns',
    name: 'svc',
    portName: '',
    protocol: 'TCP',
    spn: 'ns/svc',
    clusterIP: '172.30.0.1',
    port: 80,
    nodePort: g.nodePort ?? 0,
    externalIPs: [],
    loadBalancerVIPs: [],
    loadBalancerSourceRanges: [],
    externalPolicyLocal: g.externalPolicyLocal ?? false,
    internalPolicyLocal: g.internalPolicyLocal ?? false,
    healthCheckNodePort: 0,
    endpoints,
  };
}

function nodeOf(c: Case): NodeFacts {
  return { name: c.nodeName ?? '', zone: c.nodeLabels?.[ZONE_LABEL] ?? '', ips: [] };
}

const cases: Case[] = [
  {
    name: "should use topology since all endpoints have hints, node has a zone label and and there are endpoints for the node's zone",
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'externalTrafficPolicy: Local, topology ignored for Local endpoints',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: { externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true, isLocal: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], ready: true, isLocal: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: ['10.1.2.3:80', '10.1.2.4:80'],
    allEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, topology ignored for Local endpoints',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: { internalPolicyLocal: true, externalPolicyLocal: false, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true, isLocal: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], ready: true, isLocal: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: ['10.1.2.3:80', '10.1.2.4:80'],
    allEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
  },
  {
    name: 'empty node labels',
    since: 'v1.34',
    nodeLabels: {},
    serviceInfo: {},
    endpoints: [{ endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true }],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'empty zone label',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: '' },
    serviceInfo: {},
    endpoints: [{ endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true }],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'node in different zone, no endpoint filtering',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-b' },
    serviceInfo: {},
    endpoints: [{ endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true }],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'unready endpoint',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], ready: false }, // unready
    ],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'only unready endpoints in same zone (should not filter)',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: false },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], ready: false },
    ],
    clusterEndpoints: ['10.1.2.4:80', '10.1.2.5:80'],
    localEndpoints: null,
  },
  {
    name: 'missing hints, no filtering applied',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: null, ready: true }, // Endpoint is missing hint.
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.5:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'multiple hints per endpoint, filtering includes any endpoint with zone included',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-c' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a', 'zone-b', 'zone-c'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b', 'zone-c'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-b', 'zone-d'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-c'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'PreferSameNode falls back to same-zone when feature gate disabled',
    since: 'v1.34',
    preferSameEnabled: false,
    nodeName: 'node-1',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], nodeHints: ['node-1'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], nodeHints: ['node-2'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], nodeHints: ['node-3'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], nodeHints: ['node-4'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'PreferSameNode available',
    since: 'v1.34',
    preferSameEnabled: true,
    nodeName: 'node-1',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], nodeHints: ['node-1'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], nodeHints: ['node-2'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], nodeHints: ['node-3'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], nodeHints: ['node-4'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80'],
    localEndpoints: null,
  },
  {
    name: 'PreferSameNode ignored if some endpoints unhinted',
    since: 'v1.34',
    preferSameEnabled: true,
    nodeName: 'node-1',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], nodeHints: ['node-1'], ready: true },
      { endpoint: '10.1.2.4:80', ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], nodeHints: ['node-3'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], nodeHints: ['node-4'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.4:80', '10.1.2.5:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'PreferSameNode falls back to PreferSameZone if no endpoint for node',
    since: 'v1.34',
    preferSameEnabled: true,
    nodeName: 'node-0',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.1.2.3:80', zoneHints: ['zone-a'], nodeHints: ['node-1'], ready: true },
      { endpoint: '10.1.2.4:80', zoneHints: ['zone-b'], nodeHints: ['node-2'], ready: true },
      { endpoint: '10.1.2.5:80', zoneHints: ['zone-c'], nodeHints: ['node-3'], ready: true },
      { endpoint: '10.1.2.6:80', zoneHints: ['zone-a'], nodeHints: ['node-4'], ready: true },
    ],
    clusterEndpoints: ['10.1.2.3:80', '10.1.2.6:80'],
    localEndpoints: null,
  },
  {
    name: 'conflicting topology and localness require merging allEndpoints',
    since: 'v1.34',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: { internalPolicyLocal: false, externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', zoneHints: ['zone-a'], ready: true, isLocal: true },
      { endpoint: '10.0.0.1:80', zoneHints: ['zone-b'], ready: true, isLocal: true },
      { endpoint: '10.0.0.2:80', zoneHints: ['zone-a'], ready: true, isLocal: false },
      { endpoint: '10.0.0.3:80', zoneHints: ['zone-b'], ready: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.2:80'],
    localEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80', '10.0.0.2:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, with empty endpoints',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true },
    endpoints: [],
    clusterEndpoints: null,
    localEndpoints: [],
  },
  {
    name: 'internalTrafficPolicy: Local, but all endpoints are remote',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: false },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: false },
    ],
    clusterEndpoints: null,
    localEndpoints: [],
    onlyRemoteEndpoints: true,
  },
  {
    name: 'internalTrafficPolicy: Local, all endpoints are local',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: true },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: true },
    ],
    clusterEndpoints: null,
    localEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'internalTrafficPolicy: Local, some endpoints are local',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: true },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: false },
    ],
    clusterEndpoints: null,
    localEndpoints: ['10.0.0.0:80'],
  },
  {
    name: 'Cluster traffic policy, endpoints not Ready',
    since: 'v1.34',
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: false },
      { endpoint: '10.0.0.1:80', ready: false },
    ],
    clusterEndpoints: [],
    localEndpoints: null,
  },
  {
    name: 'Cluster traffic policy, some endpoints are Ready',
    since: 'v1.34',
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: false },
      { endpoint: '10.0.0.1:80', ready: true },
    ],
    clusterEndpoints: ['10.0.0.1:80'],
    localEndpoints: null,
  },
  {
    name: 'Cluster traffic policy, all endpoints are terminating',
    since: 'v1.34',
    serviceInfo: {},
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: false, serving: true, terminating: true, isLocal: true },
      { endpoint: '10.0.0.1:80', ready: false, serving: true, terminating: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: null,
  },
  {
    name: 'iTP: Local, eTP: Cluster, some endpoints local',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true, externalPolicyLocal: false, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: true },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: ['10.0.0.0:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Cluster, eTP: Local, some endpoints local',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: false, externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: true },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: ['10.0.0.0:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, some endpoints local',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: true },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: ['10.0.0.0:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, all endpoints remote',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: false },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: [],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Local, eTP: Local, all endpoints remote and terminating',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: false, serving: true, terminating: true, isLocal: false },
      { endpoint: '10.0.0.1:80', ready: false, serving: true, terminating: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: [],
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    onlyRemoteEndpoints: true,
  },
  {
    name: 'iTP: Cluster, eTP: Local, with terminating endpoints',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: false, externalPolicyLocal: true, nodePort: 8080 },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: false },
      { endpoint: '10.0.0.1:80', ready: false, serving: false, isLocal: true },
      { endpoint: '10.0.0.2:80', ready: false, serving: true, terminating: true, isLocal: true },
      { endpoint: '10.0.0.3:80', ready: false, serving: true, terminating: true, isLocal: false },
    ],
    clusterEndpoints: ['10.0.0.0:80'],
    localEndpoints: ['10.0.0.2:80'],
    allEndpoints: ['10.0.0.0:80', '10.0.0.2:80'],
  },
  {
    name: 'externalTrafficPolicy ignored if not externally accessible',
    since: 'v1.34',
    serviceInfo: { externalPolicyLocal: true },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: false },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: true },
    ],
    clusterEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
    localEndpoints: null,
    allEndpoints: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'no cluster endpoints for iTP:Local internal-only service',
    since: 'v1.34',
    serviceInfo: { internalPolicyLocal: true },
    endpoints: [
      { endpoint: '10.0.0.0:80', ready: true, isLocal: false },
      { endpoint: '10.0.0.1:80', ready: true, isLocal: true },
    ],
    clusterEndpoints: null,
    localEndpoints: ['10.0.0.1:80'],
    allEndpoints: ['10.0.0.1:80'],
  },
  {
    name: 'empty endpoints when no service endpoints exist',
    since: 'v1.34',
    serviceInfo: {},
    endpoints: null,
    clusterEndpoints: null,
    localEndpoints: null,
    allEndpoints: null,
  },
  {
    name: 'single endpoint not ready, not serving, not terminating',
    since: 'v1.36',
    nodeLabels: { [ZONE_LABEL]: 'zone-a' },
    serviceInfo: {},
    endpoints: [{ endpoint: '10.0.0.0:80', ready: false, serving: false, terminating: false }],
    clusterEndpoints: [],
    localEndpoints: null,
  },
];

const setOf = (eps: readonly Endpoint[]): string[] => eps.map((e) => e.address).sort();
const sorted = (xs: readonly string[] | null | undefined): string[] => [...(xs ?? [])].sort();

describe("categorizeEndpoints: kube-proxy's TestCategorizeEndpoints", () => {
  it('ports every case: 31 from v1.34.4 (unchanged in v1.35.4), 1 more from v1.36.3/v1.37.2', () => {
    expect(cases.filter((c) => c.since === 'v1.34')).toHaveLength(31);
    expect(cases.filter((c) => c.since === 'v1.36')).toHaveLength(1);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  for (const tc of cases) {
    it(`${tc.name} [${tc.since}]`, () => {
      const endpoints = (tc.endpoints ?? []).map(endpointOf);
      const sp = servicePortOf(tc.serviceInfo, endpoints);
      const got = categorizeEndpoints(sp, nodeOf(tc), tc.preferSameEnabled ?? false);

      // Cluster and Local lists: compared as sets; an expected nil or empty set only requires
      // emptiness (as the Go harness does).
      if ((tc.clusterEndpoints ?? []).length === 0) expect(got.clusterEndpoints, 'cluster endpoints').toEqual([]);
      else expect(setOf(got.clusterEndpoints), 'cluster endpoints').toEqual(sorted(tc.clusterEndpoints));
      if ((tc.localEndpoints ?? []).length === 0) expect(got.localEndpoints, 'local endpoints').toEqual([]);
      else expect(setOf(got.localEndpoints), 'local endpoints').toEqual(sorted(tc.localEndpoints));

      // allEndpoints, derived exactly as the Go harness derives its expectation.
      const cl = tc.clusterEndpoints ?? [];
      const lo = tc.localEndpoints ?? [];
      const expectedAll = cl.length !== 0 && lo.length === 0 ? cl : lo.length !== 0 && cl.length === 0 ? lo : (tc.allEndpoints ?? []);
      // Compared as a set: kube-proxy returns the merged list in Go map order; kpc sorts it.
      expect(setOf(got.allReachableEndpoints), 'allEndpoints').toEqual(sorted(expectedAll));

      const expectedHasAny = expectedAll.length > 0 || (tc.onlyRemoteEndpoints ?? false);
      expect(got.hasAnyEndpoints, 'hasAnyEndpoints').toBe(expectedHasAny);

      // kpc's own contract on top of the Go test (model.ts / topology.ts): the reachable list is
      // sorted by address, because kpc's output must be deterministic.
      const addrs = got.allReachableEndpoints.map((e) => e.address);
      expect(addrs, 'kpc sorts allReachableEndpoints by address').toEqual([...addrs].sort());
    });
  }
});

/**
 * topologyModeFromHints has no table of its own in kube-proxy; these rows are read off its code
 * in pkg/proxy/topology.go (v1.37.2 line numbers; v1.34.4 is the same logic except that its
 * guard is `len(endpoints) == 0` at line 165, which yields "" for the same inputs because an
 * unready endpoint never sets hasEndpointForZone/hasEndpointForNode).
 */
describe('topologyModeFromHints (topology.go)', () => {
  const node: NodeFacts = { name: 'node-1', zone: 'zone-a', ips: [] };
  const ep = (g: Partial<GoEndpoint>) => endpointOf({ endpoint: '10.0.0.1:80', ...g });
  const rows: { name: string; endpoints: Endpoint[]; gate: boolean; mode: '' | 'PreferSameZone' | 'PreferSameNode' }[] = [
    // 190-192: no ready endpoint, no hints to consider.
    { name: 'no endpoints', endpoints: [], gate: true, mode: '' },
    { name: 'only unready endpoints, hinted for this node and zone', endpoints: [ep({ zoneHints: ['zone-a'], nodeHints: ['node-1'] })], gate: true, mode: '' },
    // 194-197: gate on, every ready endpoint node-hinted, one for this node.
    { name: 'gate on, node hint for this node', endpoints: [ep({ ready: true, zoneHints: ['zone-a'], nodeHints: ['node-1'] })], gate: true, mode: 'PreferSameNode' },
    // 194 gate off: node hints are not looked at; 204-206 zone hints decide.
    { name: 'gate off, node hint for this node', endpoints: [ep({ ready: true, zoneHints: ['zone-a'], nodeHints: ['node-1'] })], gate: false, mode: 'PreferSameZone' },
    // 198-199 then 204-206: no node hint for this node, falls through to zone.
    { name: 'gate on, node hints for another node', endpoints: [ep({ ready: true, zoneHints: ['zone-a'], nodeHints: ['node-2'] })], gate: true, mode: 'PreferSameZone' },
    // 171-173: unready endpoints' (missing) hints are skipped.
    {
      name: 'unready endpoint without hints does not spoil the hints',
      endpoints: [ep({ ready: true, zoneHints: ['zone-a'] }), endpointOf({ endpoint: '10.0.0.2:80', ready: false })],
      gate: true,
      mode: 'PreferSameZone',
    },
    // 204-212: zone hints for other zones only.
    { name: 'zone hints for another zone only', endpoints: [ep({ ready: true, zoneHints: ['zone-b'] })], gate: true, mode: '' },
    // 213-214: one ready endpoint without a zone hint.
    {
      name: 'a ready endpoint lacks a zone hint',
      endpoints: [ep({ ready: true, zoneHints: ['zone-a'] }), endpointOf({ endpoint: '10.0.0.2:80', ready: true })],
      gate: true,
      mode: '',
    },
  ];
  for (const r of rows) {
    it(r.name, () => expect(topologyModeFromHints(r.endpoints, node, r.gate)).toBe(r.mode));
  }
});

/**
 * Topology-aware hints (src/controllers/endpointslice/topology.ts), ported from the
 * controller's own tests:
 *
 *   k8s.io/endpointslice topologycache/topologycache_test.go  TestSetNodes, TestAddHints
 *   k8s.io/endpointslice topologycache/utils_test.go  Test_getGivingAndReceivingZones,
 *       Test_redistributeHints (through AddHints: kpc inlines redistributeHints)
 *   k8s.io/endpointslice reconciler_test.go  TestReconcileTopology (the hints it expects, from
 *       scratch: the Go case starts from existing slices holding the same Pods; hints do not
 *       depend on how endpoints are spread over slices, only on which are ready and where)
 *
 * The same cases in v0.34.4, v0.35.4, v0.36.3 and v0.37.2 (topologycache/ is unchanged between
 * them apart from comments). The Go cache's cpuRatiosByZone is set directly by TestAddHints;
 * kpc's TopologyCache is that map.
 */
import { describe, expect, it } from 'vitest';
import type { DerivedEndpointSlice } from '../../../src/controllers/endpointslice/model.js';
import { addTopologyHints, givingAndReceiving, topologyCacheFor, type Allocation } from '../../../src/controllers/endpointslice/topology.js';
import { crossZoneHints, hintsByZone, newNode, newPod, newServiceAndEndpointMeta, reconcile, type NodeSpec } from './helpers.js';

describe('SetNodes (topologycache_test.go TestSetNodes)', () => {
  type N = [zone: string, cpu: string, ready: 'True' | 'False', labels?: Record<string, string>];
  const cp = { 'node-role.kubernetes.io/control-plane': '' };
  const cases: Array<{ name: string; nodes: N[]; ratios: Record<string, number> | undefined }> = [
    { name: 'empty', nodes: [], ratios: undefined },
    { name: 'single node', nodes: [['zone-a', '1000m', 'True']], ratios: undefined },
    { name: 'single zone', nodes: [['zone-a', '1000m', 'True'], ['zone-a', '1000m', 'True']], ratios: undefined },
    { name: '2 zones', nodes: [['zone-a', '1000m', 'True'], ['zone-b', '1000m', 'True']], ratios: { 'zone-a': 0.5, 'zone-b': 0.5 } },
    { name: '2 zones, unready node in 1, ready node in 1', nodes: [['zone-a', '1000m', 'False'], ['zone-b', '1000m', 'True']], ratios: undefined },
    { name: '2 zones, control plane node in 1, ready node in 1', nodes: [['zone-a', '1000m', 'True'], ['zone-b', '1000m', 'True', cp]], ratios: undefined },
    {
      name: '2 zones, unready node in 1, ready node in 2',
      nodes: [['zone-a', '1000m', 'True'], ['zone-b', '1000m', 'True'], ['zone-b', '1000m', 'False']],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
    },
    {
      name: '2 zones, control plane node in 1, ready node in 2',
      nodes: [['zone-a', '1000m', 'True'], ['zone-b', '1000m', 'True'], ['zone-b', '1000m', 'True', cp]],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
    },
    {
      name: '3 zones, 4 nodes in 1, 2 nodes in 1, 1 node in 1',
      nodes: [
        ['zone-a', '1000m', 'True'],
        ['zone-a', '1000m', 'True'],
        ['zone-a', '1000m', 'True'],
        ['zone-a', '2000m', 'True'],
        ['zone-b', '3000m', 'True'],
        ['zone-b', '1500m', 'True'],
        ['zone-c', '500m', 'True'],
      ],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.45, 'zone-c': 0.05 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      // The Go Nodes have no names; kpc's decoder needs one.
      const nodes = c.nodes.map(([zone, cpu, ready, labels], i) => newNode({ name: `n${i}`, zone, cpu, ready, ...(labels ? { labels } : {}) } satisfies NodeSpec));
      const got = topologyCacheFor(nodes).cpuRatiosByZone;
      // Go compares the ratios with != (exact float64 equality); so does toStrictEqual.
      expect(got === undefined ? undefined : Object.fromEntries(got)).toStrictEqual(c.ratios);
    });
  }
  it('a Node without a zone or CPU spoils every zone (the loop breaks: "insufficient node info")', () => {
    // Not a Go case of TestSetNodes: the `!ok || zone == "" || nodeCPU.IsZero()` branch.
    const base: NodeSpec[] = [
      { name: 'a', zone: 'zone-a', cpu: '1', ready: 'True' },
      { name: 'b', zone: 'zone-b', cpu: '1', ready: 'True' },
    ];
    expect(topologyCacheFor([...base, { name: 'c', cpu: '1', ready: 'True' }].map(newNode)).cpuRatiosByZone).toBeUndefined();
    expect(topologyCacheFor([...base, { name: 'c', zone: 'zone-c', ready: 'True' }].map(newNode)).cpuRatiosByZone).toBeUndefined();
    expect(topologyCacheFor([...base, { name: 'c', zone: 'zone-c', cpu: '0', ready: 'True' }].map(newNode)).cpuRatiosByZone).toBeUndefined();
  });
});

type Ep = [address: string, zone: string, ready: boolean | undefined];

function slicesOf(...lists: Ep[][]): DerivedEndpointSlice[] {
  return lists.map((eps) => ({
    kind: 'EndpointSlice',
    metadata: { name: '', namespace: '', labels: {}, annotations: {}, generateName: '', ownerReferences: [] },
    addressType: 'IPv4',
    ports: [],
    // A Go endpoint without conditions (Ready nil) is not ready for EndpointReady
    // (`Ready != nil && *Ready`); kpc's derived endpoints always carry ready, so nil is false.
    endpoints: eps.map(([address, zone, ready]) => ({ addresses: [address], zone, conditions: { ready: ready === true, serving: ready === true, terminating: false }, targetRef: { kind: 'Pod', namespace: '', name: '' } })),
  }));
}

const hints = (s: DerivedEndpointSlice[]) => s.flatMap((x) => x.endpoints.map((e) => [e.addresses[0], e.hints ? e.hints.forZones : null]));

describe('AddHints (topologycache_test.go TestAddHints), slices to create', () => {
  const cache = (ratios: Record<string, number> | undefined) => ({ cpuRatiosByZone: ratios ? new Map(Object.entries(ratios)) : undefined });
  it('empty', () => {
    expect(addTopologyHints([], cache(undefined), 'IPv4')).toStrictEqual({ addressType: 'IPv4', hints: false, why: 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes' });
  });
  it('slice to create, no zone ratios', () => {
    const s = slicesOf([['10.1.2.3', 'zone-a', true]]);
    expect(addTopologyHints(s, cache(undefined), 'IPv4')).toMatchObject({ hints: false, why: 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes' });
    expect(hints(s)).toStrictEqual([['10.1.2.3', null]]);
  });
  it('slice to create with 2 endpoints, zone ratios require 3', () => {
    const s = slicesOf([
      ['10.1.2.3', 'zone-a', true],
      ['10.1.2.4', 'zone-b', true],
    ]);
    // InsufficientNumberOfEndpoints, with the counts getAllocations formats into it.
    expect(addTopologyHints(s, cache({ 'zone-a': 0.3, 'zone-b': 0.4, 'zone-c': 0.3 }), 'IPv4')).toMatchObject({ hints: false, why: 'Insufficient number of endpoints (2 endpoints, 3 zones)' });
    expect(hints(s)).toStrictEqual([
      ['10.1.2.3', null],
      ['10.1.2.4', null],
    ]);
  });
  it('slice to create with 2 endpoints, zone ratios only require 2', () => {
    const s = slicesOf([
      ['10.1.2.3', 'zone-a', true],
      ['10.1.2.4', 'zone-b', true],
    ]);
    expect(addTopologyHints(s, cache({ 'zone-a': 0.45, 'zone-b': 0.55 }), 'IPv4')).toStrictEqual({ addressType: 'IPv4', hints: true });
    expect(hints(s)).toStrictEqual([
      ['10.1.2.3', ['zone-a']],
      ['10.1.2.4', ['zone-b']],
    ]);
  });
  it('slice to create with 2 ready, 1 unready, 1 unknown endpoints, zone ratios only require 2', () => {
    const s = slicesOf([
      ['10.1.2.3', 'zone-a', true],
      ['10.1.2.4', 'zone-b', true],
      ['10.1.2.5', 'zone-b', false],
      ['10.1.2.6', 'zone-b', undefined],
    ]);
    expect(addTopologyHints(s, cache({ 'zone-a': 0.45, 'zone-b': 0.55 }), 'IPv4')).toMatchObject({ hints: true });
    expect(hints(s)).toStrictEqual([
      ['10.1.2.3', ['zone-a']],
      ['10.1.2.4', ['zone-b']],
      ['10.1.2.5', null],
      ['10.1.2.6', null],
    ]);
  });
  it('slices to create and update within 3 zone threshold (the Go slices to update follow those to create, as allocatableSlices appends them)', () => {
    const s = slicesOf(
      [
        ['10.1.2.3', 'zone-a', true],
        ['10.1.2.4', 'zone-b', true],
      ],
      [
        ['10.1.3.3', 'zone-c', true],
        ['10.1.3.4', 'zone-c', true],
        ['10.1.3.4', 'zone-a', true],
      ],
      [
        ['10.2.2.3', 'zone-a', true],
        ['10.2.2.4', 'zone-a', true],
      ],
      [
        ['10.2.3.3', 'zone-b', true],
        ['10.2.3.4', 'zone-c', true],
        ['10.2.3.4', 'zone-a', true],
      ],
    );
    expect(addTopologyHints(s, cache({ 'zone-a': 0.35, 'zone-b': 0.35, 'zone-c': 0.3 }), 'IPv4')).toMatchObject({ hints: true });
    expect(hints(s)).toStrictEqual([
      ['10.1.2.3', ['zone-b']],
      ['10.1.2.4', ['zone-b']],
      ['10.1.3.3', ['zone-c']],
      ['10.1.3.4', ['zone-c']],
      ['10.1.3.4', ['zone-a']],
      ['10.2.2.3', ['zone-a']],
      ['10.2.2.4', ['zone-a']],
      ['10.2.3.3', ['zone-b']],
      ['10.2.3.4', ['zone-c']],
      ['10.2.3.4', ['zone-a']],
    ]);
    // expectedEndpointsByAddrType: zone-a 4, zone-b 3, zone-c 3 hints after redistribution.
    const byZone: Record<string, number> = {};
    for (const [, z] of hints(s)) byZone[(z as string[])[0]!] = (byZone[(z as string[])[0]!] ?? 0) + 1;
    expect(byZone).toStrictEqual({ 'zone-a': 4, 'zone-b': 3, 'zone-c': 3 });
  });
  it('one endpoint without a zone: no hints at all ("One or more endpoints do not have a zone specified")', () => {
    // Not a Go case of TestAddHints: AddHints' NoZoneSpecified branch.
    const s = slicesOf([
      ['10.1.2.3', 'zone-a', true],
      ['10.1.2.4', '', true],
    ]);
    expect(addTopologyHints(s, cache({ 'zone-a': 0.5, 'zone-b': 0.5 }), 'IPv4')).toMatchObject({ hints: false, why: 'One or more endpoints do not have a zone specified' });
    expect(hints(s)).toStrictEqual([
      ['10.1.2.3', null],
      ['10.1.2.4', null],
    ]);
  });
  it('one zone only: "Nodes only ready in one zone" (getAllocations; unreachable through SetNodes)', () => {
    expect(addTopologyHints(slicesOf([['10.1.2.3', 'zone-a', true]]), cache({ 'zone-a': 1 }), 'IPv4')).toMatchObject({ hints: false, why: 'Nodes only ready in one zone' });
  });
});

describe('redistributeHints (topologycache/utils_test.go Test_redistributeHints), through AddHints', () => {
  it('single endpoint: zone-a −1, zone-b +1', () => {
    // The Go case hands redistributeHints giving {zone-a: 1}, receiving {zone-b: 1}. Through
    // AddHints that is two zone-a endpoints and two zones of equal CPU (each desires 1): one
    // zone-a endpoint is given to zone-b.
    const s = slicesOf([
      ['10.0.0.1', 'zone-a', true],
      ['10.0.0.2', 'zone-a', true],
    ]);
    expect(addTopologyHints(s, { cpuRatiosByZone: new Map([['zone-a', 0.5], ['zone-b', 0.5]]) }, 'IPv4')).toMatchObject({ hints: true });
    expect(hintsByZone(s)).toStrictEqual({ 'zone-a': 1, 'zone-b': 1 });
  });
  it('endpoints from 1 zone redistributed to 2 other zones: zone-a −2, zone-b +1, zone-c +1', () => {
    // Three zone-a endpoints, three zones of equal CPU: each zone desires 1, so zone-a gives 2.
    const s = slicesOf([
      ['10.0.0.1', 'zone-a', true],
      ['10.0.0.2', 'zone-a', true],
      ['10.0.0.3', 'zone-a', true],
    ]);
    const third = 1 / 3;
    expect(addTopologyHints(s, { cpuRatiosByZone: new Map([['zone-a', third], ['zone-b', third], ['zone-c', third]]) }, 'IPv4')).toMatchObject({ hints: true });
    expect(hintsByZone(s)).toStrictEqual({ 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 });
  });
});

describe('getGivingAndReceivingZones (topologycache/utils_test.go Test_getGivingAndReceivingZones)', () => {
  const alloc = (d: Record<string, number>) => new Map(Object.entries(d).map(([z, desired]): [string, Allocation] => [z, { minimum: 0, maximum: 0, desired }]));
  const cases: Array<{ name: string; allocations: Record<string, number>; allocated: Record<string, number>; giving: Record<string, number>; receiving: Record<string, number> }> = [
    { name: 'empty', allocations: {}, allocated: {}, giving: {}, receiving: {} },
    { name: 'simple allocation with no need for rebalancing', allocations: { 'zone-a': 1.2, 'zone-b': 1.1, 'zone-c': 1.0 }, allocated: { 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 }, giving: {}, receiving: {} },
    {
      name: 'preference for same zone even when giving an extra endpoint would result in slightly better distribution',
      allocations: { 'zone-a': 5.1, 'zone-b': 5.1, 'zone-c': 5.8 },
      allocated: { 'zone-a': 16 },
      giving: { 'zone-a': 10 },
      receiving: { 'zone-b': 5, 'zone-c': 5 },
    },
    {
      name: 'when 2 zones need < 1 endpoint, give to zone that needs endpoint most',
      allocations: { 'zone-a': 5.0, 'zone-b': 5.6, 'zone-c': 5.4 },
      allocated: { 'zone-a': 16 },
      giving: { 'zone-a': 11 },
      receiving: { 'zone-b': 6, 'zone-c': 5 },
    },
    {
      name: 'when 2 zones have extra endpoints, give from zone with most extra',
      allocations: { 'zone-a': 5.0, 'zone-b': 5.6, 'zone-c': 5.4 },
      allocated: { 'zone-b': 8, 'zone-c': 8 },
      giving: { 'zone-b': 2, 'zone-c': 3 },
      receiving: { 'zone-a': 5 },
    },
    { name: 'ensure function can handle unexpected data (more allocated than allocations)', allocations: { 'zone-a': 5, 'zone-b': 5, 'zone-c': 5 }, allocated: { 'zone-a': 6, 'zone-b': 6, 'zone-c': 6 }, giving: {}, receiving: {} },
    { name: 'ensure function can handle unexpected data (negative allocations)', allocations: { 'zone-a': -5, 'zone-b': -5, 'zone-c': -5 }, allocated: { 'zone-a': 6, 'zone-b': 6, 'zone-c': 6 }, giving: {}, receiving: {} },
    { name: 'ensure function can handle unexpected data (negative allocated)', allocations: { 'zone-a': 5, 'zone-b': 5, 'zone-c': 5 }, allocated: { 'zone-a': -4, 'zone-b': -3, 'zone-c': -2 }, giving: {}, receiving: {} },
    {
      name: 'ensure function can handle unexpected data (negative for 1 zone)',
      allocations: { 'zone-a': 5, 'zone-b': 5, 'zone-c': 5 },
      allocated: { 'zone-a': -40, 'zone-b': 20, 'zone-c': 20 },
      giving: { 'zone-b': 15, 'zone-c': 15 },
      receiving: { 'zone-a': 30 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { giving, receiving } = givingAndReceiving(alloc(c.allocations), new Map(Object.entries(c.allocated)));
      expect(Object.fromEntries(giving)).toStrictEqual(c.giving);
      expect(Object.fromEntries(receiving)).toStrictEqual(c.receiving);
    });
  }
});

describe('reconciler_test.go TestReconcileTopology (the hints each case expects, from scratch)', () => {
  // 3 zones, 10 Nodes (ready, 100m CPU) and one Pod per Node: pod <i*100+j> on node-zone-<i>-j.
  const ns = 'testing';
  const zones = ['zone-a', 'zone-b', 'zone-c'];
  const nodes = zones.flatMap((zone) => Array.from({ length: 10 }, (_, j) => newNode({ name: `node-${zone}-${j}`, zone, ready: 'True', cpu: '100m' })));
  const pods = zones.flatMap((zone, i) =>
    Array.from({ length: 10 }, (_, j) =>
      newPod(i * 100 + j, ns, true, false, (p) => {
        p.spec.nodeName = `node-${zone}-${j}`;
        // newPod's 1.2.3.<4+n> is no address for n ≥ 252 (see helpers.ts); these Pods get
        // 10.0.<i>.<j> instead. Addresses do not enter the hints.
        p.status.podIP = `10.0.${i}.${j + 1}`;
        p.status.podIPs = [{ ip: `10.0.${i}.${j + 1}` }];
      }),
    ),
  );
  // The Go slicePods, by index into pods.
  const slicePods: Record<string, number[]> = { 'zone-a-b': [7, 8, 16, 17, 18], 'zone-a-c': [5, 6, 25, 26], 'zone-c': [27, 28, 29] };
  const run = (annotation: string, ...sets: string[]) => {
    const svc = newServiceAndEndpointMeta('foo', ns, { annotations: { 'service.kubernetes.io/topology-aware-hints': annotation } });
    return reconcile(
      svc,
      sets.flatMap((k) => slicePods[k]!.map((i) => pods[i]!)),
      nodes,
    ).slices;
  };
  it('enabling topologyCache, hintsAnnotation == auto: one hint per zone, 2 cross-zone', () => {
    const s = run('auto', 'zone-c');
    expect(hintsByZone(s)).toStrictEqual({ 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 });
    expect(crossZoneHints(s)).toBe(2);
  });
  it('topology enabled, hintsAnnotation==auto, ratio beyond threshold: no hints', () => {
    expect(hintsByZone(run('auto', 'zone-a-c'))).toStrictEqual({ '': 4 });
  });
  it('topology enabled, hintsAnnotation==Auto, more slices and endpoints: 3 per zone, 1 cross-zone', () => {
    const s = run('Auto', 'zone-a-c', 'zone-a-b');
    expect(hintsByZone(s)).toStrictEqual({ 'zone-a': 3, 'zone-b': 3, 'zone-c': 3 });
    expect(crossZoneHints(s)).toBe(1);
  });
  it('topology enabled, hintsAnnotation==disabled, more slices and endpoints: no hints', () => {
    expect(hintsByZone(run('disabled', 'zone-a-c', 'zone-a-b'))).toStrictEqual({ '': 9 });
  });
});

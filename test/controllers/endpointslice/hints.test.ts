/**
 * Hints from trafficDistribution and which hints path a Service takes
 * (src/controllers/endpointslice/hints.ts), ported from the controller's own tests:
 *
 *   k8s.io/endpointslice utils_test.go          Test_hintsEnabled
 *   k8s.io/endpointslice trafficdist/trafficdist_test.go  TestReconcileHints (the cases with
 *       slices to create or update; kpc's slices are all new, so a Go slice "to update" is
 *       one more slice to create here: ReconcileHints treats both alike)
 *   k8s.io/endpointslice reconciler_test.go     TestReconcile_TrafficDistribution
 *
 * The same cases in v0.34.4, v0.35.4, v0.36.3 and v0.37.2 (v0.36 dropped the
 * trafficDistributionEnabled plumbing; PreferSameTrafficDistribution is a gate in every release,
 * on by default, GA and locked from v1.35: TestReconcile_TrafficDistribution still sets it off
 * in one case, which kpc reaches with a release whose gate is off).
 */
import { describe, expect, it } from 'vitest';
import { addTrafficDistributionHints, hintsEnabled, hintsMode, validTrafficDistribution } from '../../../src/controllers/endpointslice/hints.js';
import type { DerivedEndpointSlice } from '../../../src/controllers/endpointslice/model.js';
import { RELEASES } from '../../../src/controllers/endpointslice/releases.js';
import { crossZoneHints, hintsByZone, newNode, newPod, newServiceAndEndpointMeta, reconcile } from './helpers.js';

const DEPRECATED = 'service.kubernetes.io/topology-aware-hints';
const MODE = 'service.kubernetes.io/topology-mode';

describe('hintsEnabled (utils_test.go Test_hintsEnabled)', () => {
  const cases: Array<[string, Record<string, string>, boolean]> = [
    ['empty annotations', {}, false],
    ['different annotations', { 'topology-hints': 'enabled' }, false],
    ['hints annotation == enabled', { [DEPRECATED]: 'enabled' }, false],
    ['hints annotation == aUto', { [DEPRECATED]: 'aUto' }, false],
    ['hints annotation == auto', { [DEPRECATED]: 'auto' }, true],
    ['hints annotation == Auto', { [DEPRECATED]: 'Auto' }, true],
    ['hints annotation == disabled', { [DEPRECATED]: 'disabled' }, false],
    ['mode annotation == enabled', { [MODE]: 'enabled' }, false],
    ['mode annotation == aUto', { [MODE]: 'aUto' }, false],
    ['mode annotation == auto', { [MODE]: 'auto' }, true],
    ['mode annotation == Auto', { [MODE]: 'Auto' }, true],
    ['mode annotation == disabled', { [MODE]: 'disabled' }, false],
    ['mode annotation == disabled, hints annotation == auto', { [MODE]: 'disabled', [DEPRECATED]: 'auto' }, true],
    ['mode annotation == auto, hints annotation == disabled', { [MODE]: 'auto', [DEPRECATED]: 'disabled' }, false],
  ];
  for (const [name, annotations, want] of cases) {
    it(name, () => expect(hintsEnabled(annotations)).toBe(want));
  }
});

describe('validTrafficDistribution (reconciler.go)', () => {
  const gateOff = { ...RELEASES['1.34'], preferSameTrafficDistribution: false };
  it('PreferClose always; PreferSameZone and PreferSameNode only with the gate; anything else never', () => {
    for (const r of [RELEASES['1.34'], RELEASES['1.37']]) {
      expect(['PreferClose', 'PreferSameZone', 'PreferSameNode', 'Unknown', undefined].map((td) => validTrafficDistribution(td, r))).toStrictEqual([true, true, true, false, false]);
    }
    expect(['PreferClose', 'PreferSameZone', 'PreferSameNode'].map((td) => validTrafficDistribution(td, gateOff))).toStrictEqual([true, false, false]);
  });
});

type Ep = [address: string, zone: string | undefined, node: string, ready: boolean];

/** Slices as the Go test's literals: endpoints with address, zone, node and Ready only. */
function slices(...lists: Ep[][]): DerivedEndpointSlice[] {
  return lists.map((eps) => ({
    kind: 'EndpointSlice',
    metadata: { name: '', namespace: '', labels: {}, annotations: {}, generateName: '', ownerReferences: [] },
    addressType: 'IPv4',
    ports: [],
    endpoints: eps.map(([address, zone, node, ready]) => ({
      addresses: [address],
      ...(zone !== undefined ? { zone } : {}),
      nodeName: node,
      conditions: { ready, serving: ready, terminating: false },
      targetRef: { kind: 'Pod', namespace: '', name: '' },
    })),
  }));
}

function hintsOf(s: DerivedEndpointSlice[]): Array<[string, string[] | null, string[] | null]> {
  return s.flatMap((x) => x.endpoints.map((e): [string, string[] | null, string[] | null] => [e.addresses[0]!, e.hints ? e.hints.forZones : null, e.hints ? e.hints.forNodes : null]));
}

describe('ReconcileHints (trafficdist/trafficdist_test.go TestReconcileHints)', () => {
  // The eight endpoints of the "should set ..." cases: two slices to create, two to update.
  const zoned = (): DerivedEndpointSlice[] =>
    slices(
      [
        ['10.0.0.1', 'zone-a', 'node-1', true],
        ['10.0.0.2', 'zone-b', 'node-2', true],
      ],
      [
        ['10.0.0.3', 'zone-a', 'node-3', true],
        ['10.0.0.4', 'zone-b', 'node-4', true],
      ],
      [
        ['10.0.0.5', 'zone-a', 'node-5', true],
        ['10.0.0.6', 'zone-a', 'node-6', true],
      ],
      [
        ['10.0.0.7', 'zone-b', 'node-7', true],
        ['10.0.0.8', 'zone-c', 'node-8', true],
      ],
    );
  const zones = ['zone-a', 'zone-b', 'zone-a', 'zone-b', 'zone-a', 'zone-a', 'zone-b', 'zone-c'];
  const addr = (i: number) => `10.0.0.${i + 1}`;

  for (const td of ['PreferClose', 'PreferSameZone']) {
    it(`should set zone hints with ${td}`, () => {
      const s = zoned();
      addTrafficDistributionHints(s, td);
      expect(hintsOf(s)).toStrictEqual(zones.map((z, i) => [addr(i), [z], []]));
    });
  }
  it('should set zone and node hints with PreferSameNode', () => {
    const s = zoned();
    addTrafficDistributionHints(s, 'PreferSameNode');
    expect(hintsOf(s)).toStrictEqual(zones.map((z, i) => [addr(i), [z], [`node-${i + 1}`]]));
  });
  const zoneless = (): DerivedEndpointSlice[] =>
    slices(
      [
        ['10.0.0.1', undefined, 'node-1', true],
        ['10.0.0.2', undefined, 'node-2', true],
      ],
      [
        ['10.0.0.3', undefined, 'node-3', true],
        ['10.0.0.4', undefined, 'node-4', true],
      ],
      [
        ['10.0.0.5', undefined, 'node-5', true],
        ['10.0.0.6', undefined, 'node-6', true],
      ],
      [
        ['10.0.0.7', undefined, 'node-7', true],
        ['10.0.0.8', undefined, 'node-8', true],
      ],
    );
  it('should not create hints with PreferClose if there are no zones', () => {
    const s = zoneless();
    addTrafficDistributionHints(s, 'PreferClose');
    expect(hintsOf(s)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => [`10.0.0.${i}`, null, null]));
  });
  it('should create only node hints with PreferSameNode if there are no zones', () => {
    const s = zoneless();
    addTrafficDistributionHints(s, 'PreferSameNode');
    expect(hintsOf(s)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => [`10.0.0.${i}`, [], [`node-${i}`]]));
  });
  it('unready endpoints get no hints (the Go case "unready endpoints should not trigger updates", for a new slice)', () => {
    const s = slices([['10.0.0.2', 'zone-b', 'node-2', false]]);
    addTrafficDistributionHints(s, 'PreferClose');
    expect(hintsOf(s)).toStrictEqual([['10.0.0.2', null, null]]);
  });
  it('should remove hints when trafficDistribution is unrecognized (the reconciler does not call ReconcileHints then: no hints path)', () => {
    // reconciler.go only reaches trafficdist when validTrafficDistribution; an unrecognized
    // value takes the "no hints" path, and a new slice has none to remove.
    const svc = newServiceAndEndpointMeta('foo', 'ns', { trafficDistribution: 'Unknown' });
    expect(hintsMode(svc, RELEASES['1.37'])).toBe('none');
    const s = zoned();
    addTrafficDistributionHints(s, 'Unknown');
    expect(hintsOf(s).every(([, z, n]) => z === null && n === null)).toBe(true);
  });
});

describe('reconciler_test.go TestReconcile_TrafficDistribution', () => {
  // node-0 IN zone-a CONTAINS {pod-0}; node-1 IN zone-b CONTAINS {pod-1, pod-2, pod-3};
  // node-2 IN zone-c CONTAINS {pod-4, pod-5}; every Node ready with 100m of CPU.
  const ns = 'ns1';
  const nodes = [0, 1, 2].map((i) => newNode({ name: `node-${i}`, zone: `zone-${'abc'[i]}`, ready: 'True', cpu: '100m' }));
  const nodeOf = [0, 1, 1, 1, 2, 2];
  const pods = nodeOf.map((n, i) => newPod(i, ns, true, false, (p) => (p.spec.nodeName = `node-${n}`)));
  const gateOff = { ...RELEASES['1.37'], preferSameTrafficDistribution: false };
  const cases = [
    { name: 'trafficDistribution=PreferClose, topologyAnnotation=Disabled', td: 'PreferClose', topology: 'Disabled', byZone: { 'zone-a': 1, 'zone-b': 3, 'zone-c': 2 }, cross: 0 },
    // "pod-3 is just an example, it could have also been either of the other two".
    { name: 'trafficDistribution=PreferClose, topologyAnnotation=Auto', td: 'PreferClose', topology: 'Auto', byZone: { 'zone-a': 2, 'zone-b': 2, 'zone-c': 2 }, cross: 1 },
    { name: 'trafficDistribution=nil, topologyAnnotation=<empty>', td: undefined, topology: '', byZone: { '': 6 }, cross: 0 },
    {
      name: 'trafficDistribution=PreferSameNode, PSTD enabled',
      td: 'PreferSameNode',
      topology: 'Disabled',
      byZone: { 'zone-a': 1, 'zone-b': 3, 'zone-c': 2 },
      byNode: { 'node-0': 1, 'node-1': 3, 'node-2': 2 },
      cross: 0,
    },
    { name: 'trafficDistribution=PreferSameZone, PSTD disabled', td: 'PreferSameZone', topology: 'Disabled', gate: false, byZone: { '': 6 }, cross: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const svc = newServiceAndEndpointMeta('foo', ns, { annotations: { [DEPRECATED]: c.topology }, ...(c.td ? { trafficDistribution: c.td } : {}) });
      const { slices: out } = reconcile(svc, pods, nodes, c.gate === false ? { release: gateOff } : {});
      expect(hintsByZone(out)).toStrictEqual(c.byZone);
      expect(crossZoneHints(out)).toBe(c.cross);
      if (c.byNode) {
        const byNode: Record<string, number> = {};
        for (const e of out.flatMap((s) => s.endpoints)) for (const n of e.hints?.forNodes ?? []) byNode[n] = (byNode[n] ?? 0) + 1;
        expect(byNode).toStrictEqual(c.byNode);
      }
    });
  }
});

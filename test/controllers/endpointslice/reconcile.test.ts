/**
 * One Service's slices from scratch (src/controllers/endpointslice/reconcile.ts) and which
 * Services get slices (index.ts deriveEndpointSlices), ported from the controller's own tests:
 *
 *   k8s.io/endpointslice utils_test.go       TestNewEndpointSlice, TestSetEndpointSliceLabels,
 *                                             TestSupportedServiceAddressType
 *   k8s.io/endpointslice reconciler_test.go  TestReconcileEmpty, TestReconcile1Pod,
 *       TestReconcile1EndpointSlicePublishNotReadyAddresses, TestReconcileManyPods,
 *       TestReconcileEndpointSlicesServicesReservedLabels (its first reconcile),
 *       TestReconcileEndpointSlicesNamedPorts, TestReconcileMaxEndpointsPerSlice,
 *       TestReconcilerPodMissingNode (its two "Create" cases), TestReconcileHeadlessServiceNoPorts,
 *       TestReconcilerFinalizeSvcDeletionTimestamp (nothing is created for a Service being deleted)
 *   k8s.io/kubernetes pkg/controller/endpointslice/endpointslice_controller_test.go
 *       TestSyncServiceNoSelector, TestServiceExternalNameTypeSync, TestSyncServicePendingDeletion,
 *       TestSyncServiceWithSelector, TestSyncServicePodSelection, TestSyncService
 *
 * Releases: the cases are the same in k8s.io/endpointslice v0.34.4, v0.35.4, v0.36.3, v0.37.2
 * (reconciler_test.go changed between v0.35 and v0.36 only in TestReconcileHeadlessServiceNoPorts,
 * added there, and in gate plumbing) and k8s.io/kubernetes v1.34.4..v1.37.2 (the controller test
 * changed only in how Pod events are fed: addPod → onPodUpdate). The cases here run for every
 * release kpc reproduces where the release matters (port order), else for v1.37.
 *
 * Only what a from-scratch reconcile decides is ported: the cases about existing slices
 * (updates, packing, recycling, metrics) have nothing to compare with, as kpc derives slices
 * for a controller that has written none yet. Where the Go test checks counts, kpc's output is
 * checked for the same counts; where it lists endpoints, for the same endpoints.
 */
import { describe, expect, it } from 'vitest';
import { deriveEndpointSlices } from '../../../src/controllers/endpointslice/index.js';
import { addressTypesOf, sliceLabels } from '../../../src/controllers/endpointslice/reconcile.js';
import { CONTROLLER_RELEASES } from '../../../src/controllers/endpointslice/releases.js';
import type { Pod, Service } from '../../../src/parser/k8s/types.js';
import { allEndpoints, lengths, newNode, newPod, newService, newServiceAndEndpointMeta, reconcile } from './helpers.js';

const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const SERVICE_NAME = 'kubernetes.io/service-name';
const HEADLESS = 'service.kubernetes.io/headless';
const CONTROLLER = 'endpointslice-controller.k8s.io';

describe('newEndpointSlice (utils_test.go TestNewEndpointSlice)', () => {
  // Service foo/test, ClusterIP 1.1.1.1, one port, selector foo=bar; no uid (the Go owner
  // reference then has an empty UID; kpc leaves the field out).
  // endpointMeta's address type IPv4 is the Service's only family.
  const base = { name: 'foo', namespace: 'test', clusterIP: '1.1.1.1', ipFamilies: ['IPv4' as const], ports: [{ name: '', protocol: 'TCP' as const, port: 80, targetPort: 80, nodePort: 0 }] };
  const owner = [{ apiVersion: 'v1', kind: 'Service', name: 'foo', controller: true, blockOwnerDeletion: true }];
  const cases: Array<{ name: string; svc: Service; labels: Record<string, string> }> = [
    { name: 'Service without labels', svc: newService(base), labels: { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER } },
    { name: 'Service with labels', svc: newService({ ...base, labels: { foo: 'bar' } }), labels: { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER, foo: 'bar' } },
    {
      name: 'Headless Service with labels',
      svc: newService({ ...base, labels: { foo: 'bar' }, clusterIP: 'None' }),
      labels: { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER, [HEADLESS]: '', foo: 'bar' },
    },
    {
      name: 'Service with multiple labels',
      svc: newService({ ...base, labels: { foo: 'bar', foo2: 'bar2' } }),
      labels: { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER, foo: 'bar', foo2: 'bar2' },
    },
    {
      name: 'Evil service hijacking endpoint slices labels',
      svc: newService({ ...base, labels: { [SERVICE_NAME]: 'bad', [MANAGED_BY]: 'actor', foo: 'bar' } }),
      labels: { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER, foo: 'bar' },
    },
    { name: 'Service with annotations', svc: newService({ ...base, annotations: { foo: 'bar' } }), labels: { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      // The placeholder a Service without Pods gets is newEndpointSlice's slice (ports [] there).
      const [slice, ...rest] = reconcile(c.svc, [], [newNode({ name: 'node-1' })]).slices;
      expect(rest).toHaveLength(0);
      expect(slice!.metadata.labels).toStrictEqual(c.labels);
      expect(slice!.metadata.generateName).toBe('foo-');
      expect(slice!.metadata.namespace).toBe('test');
      expect(slice!.metadata.ownerReferences).toStrictEqual(owner);
      expect(slice!.metadata.annotations).toStrictEqual({});
      expect(slice!.addressType).toBe('IPv4');
      expect(slice!.endpoints).toStrictEqual([]);
    });
  }
});

describe('setEndpointSliceLabels (utils_test.go TestSetEndpointSliceLabels)', () => {
  // The labels it returns depend on the Service only (the existing slice's labels decide only
  // whether an update is needed, which a new slice does not ask), so each Go case's expected
  // labels are checked against kpc's labels for a new slice of that Service.
  const base = { name: 'foo', namespace: 'test', clusterIP: '1.1.1.1' };
  const plain = { [SERVICE_NAME]: 'foo', [MANAGED_BY]: CONTROLLER };
  const cases: Array<{ name: string; svc: Partial<Parameters<typeof newService>[0]>; labels: Record<string, string> }> = [
    { name: 'Service without labels and empty endpoint slice', svc: {}, labels: plain },
    { name: 'Headless service with labels and empty endpoint slice', svc: { clusterIP: 'None', labels: { foo: 'bar' } }, labels: { ...plain, [HEADLESS]: '', foo: 'bar' } },
    { name: 'Headless service without labels and empty endpoint slice', svc: { clusterIP: 'None' }, labels: { ...plain, [HEADLESS]: '' } },
    { name: 'Non Headless service with Headless label and empty endpoint slice', svc: { labels: { [HEADLESS]: '' } }, labels: plain },
    { name: 'Headless Service change to ClusterIP Service with headless label', svc: { labels: { [HEADLESS]: '' } }, labels: plain },
    { name: 'Headless Service change to ClusterIP Service', svc: {}, labels: plain },
    { name: 'Headless service and endpoint slice with same labels', svc: { clusterIP: 'None', labels: { foo: 'bar' } }, labels: { ...plain, [HEADLESS]: '', foo: 'bar' } },
    { name: 'Service with labels and empty endpoint slice', svc: { labels: { foo: 'bar' } }, labels: { ...plain, foo: 'bar' } },
    { name: 'Slice with labels and service without labels', svc: {}, labels: plain },
    { name: 'Slice with headless label and service with ClusterIP', svc: {}, labels: plain },
    { name: 'Slice with reserved labels and service with labels', svc: { labels: { foo: 'bar' } }, labels: { ...plain, foo: 'bar' } },
    { name: 'Evil service trying to hijack slice labels only well-known slice labels', svc: { labels: { [SERVICE_NAME]: 'bad', [MANAGED_BY]: 'actor', [HEADLESS]: 'invalid' } }, labels: plain },
    { name: 'Evil service trying to hijack slice labels with updates', svc: { labels: { [SERVICE_NAME]: 'bad', [MANAGED_BY]: 'actor', foo: 'bar' } }, labels: { ...plain, foo: 'bar' } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(sliceLabels(newService({ ...base, ...c.svc }))).toStrictEqual(c.labels);
    });
  }
});

describe('getAddressTypesForService (utils_test.go TestSupportedServiceAddressType)', () => {
  // The Go test compares the address types as a set.
  const cases: Array<{ name: string; svc: Partial<Parameters<typeof newService>[0]>; want: string[] }> = [
    { name: 'v4 service with no ip families (cluster upgrade)', svc: { clusterIP: '10.0.0.10' }, want: ['IPv4'] },
    { name: 'v6 service with no ip families (cluster upgrade)', svc: { clusterIP: '2000::1' }, want: ['IPv6'] },
    { name: 'v4 service', svc: { ipFamilies: ['IPv4'] }, want: ['IPv4'] },
    { name: 'v6 services', svc: { ipFamilies: ['IPv6'] }, want: ['IPv6'] },
    { name: 'v4,v6 service', svc: { ipFamilies: ['IPv4', 'IPv6'] }, want: ['IPv4', 'IPv6'] },
    { name: 'v6,v4 service', svc: { ipFamilies: ['IPv6', 'IPv4'] }, want: ['IPv6', 'IPv4'] },
    { name: 'headless with no selector and no families (old api-server)', svc: { clusterIP: 'None', selector: undefined }, want: ['IPv6', 'IPv4'] },
    { name: 'headless with selector and no families (old api-server)', svc: { clusterIP: 'None' }, want: ['IPv6', 'IPv4'] },
    { name: 'headless with no selector with families', svc: { clusterIP: 'None', selector: undefined, ipFamilies: ['IPv4', 'IPv6'] }, want: ['IPv4', 'IPv6'] },
    { name: 'headless with selector with families', svc: { clusterIP: 'None', ipFamilies: ['IPv4', 'IPv6'] }, want: ['IPv4', 'IPv6'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(new Set(addressTypesOf(newService({ name: 's', namespace: 'ns', ...c.svc })))).toStrictEqual(new Set(c.want));
    });
  }
});

describe('reconciler_test.go', () => {
  const namespace = 'test';
  const node1 = newNode({ name: 'node-1' });

  it('TestReconcileEmpty: one placeholder slice, no ports, no endpoints', () => {
    const svc = newServiceAndEndpointMeta('foo', namespace);
    const { slices } = reconcile(svc, [], [node1]);
    expect(slices).toHaveLength(1);
    expect(slices[0]!.metadata.name).toMatch(/^foo/);
    expect(slices[0]!.metadata.labels[SERVICE_NAME]).toBe('foo');
    expect(slices[0]!.ports).toStrictEqual([]);
    expect(slices[0]!.endpoints).toStrictEqual([]);
  });

  describe('TestReconcile1Pod', () => {
    // pod1: newPod(1, ...) with PodIPs [1.2.3.4, 1234::5678:0000:0000:9abc:def0] and hostname
    // example-hostname (no subdomain: no hostname in the endpoint). The Go Pod keeps PodIP
    // 1.2.3.5 beside that list; the API server lets podIP win over a different podIPs[0], so the
    // stored Pod of the Go test's situation has podIP 1.2.3.4.
    const pod1 = newPod(1, namespace, true, false, (p) => {
      p.status.podIP = '1.2.3.4';
      p.status.podIPs = [{ ip: '1.2.3.4' }, { ip: '1234::5678:0000:0000:9abc:def0' }];
      p.spec.hostname = 'example-hostname';
    });
    const zonedNode = newNode({ name: 'node-1', labels: { 'topology.kubernetes.io/zone': 'us-central1-a', 'topology.kubernetes.io/region': 'us-central1' } });
    const ep = (address: string) => ({
      addresses: [address],
      conditions: { ready: true, serving: true, terminating: false },
      zone: 'us-central1-a',
      nodeName: 'node-1',
      targetRef: { kind: 'Pod', namespace, name: 'pod1' },
    });
    const v4 = ep('1.2.3.4');
    const v6 = ep('1234::5678:0:0:9abc:def0');
    const plain = { [MANAGED_BY]: CONTROLLER, [SERVICE_NAME]: 'foo' };
    const cases: Array<{ name: string; svc: Service; perType: Record<string, unknown[]>; labels: Record<string, string> }> = [
      { name: 'no-family-service', svc: newServiceAndEndpointMeta('foo', namespace, { clusterIP: '10.0.0.10', ipFamilies: [] }), perType: { IPv4: [v4] }, labels: plain },
      { name: 'ipv4', svc: newServiceAndEndpointMeta('foo', namespace), perType: { IPv4: [v4] }, labels: { ...plain, [HEADLESS]: '' } },
      { name: 'ipv4-clusterip', svc: newServiceAndEndpointMeta('foo', namespace, { clusterIP: '1.1.1.1' }), perType: { IPv4: [v4] }, labels: plain },
      { name: 'ipv4-labels', svc: newServiceAndEndpointMeta('foo', namespace, { labels: { foo: 'bar' } }), perType: { IPv4: [v4] }, labels: { ...plain, foo: 'bar', [HEADLESS]: '' } },
      {
        name: 'ipv4-bad-labels',
        svc: newServiceAndEndpointMeta('foo', namespace, { labels: { [SERVICE_NAME]: 'bad', [MANAGED_BY]: 'actor', [HEADLESS]: 'invalid' } }),
        perType: { IPv4: [v4] },
        labels: { ...plain, [HEADLESS]: '' },
      },
      { name: 'ipv6', svc: newServiceAndEndpointMeta('foo', namespace, { ipFamilies: ['IPv6'] }), perType: { IPv6: [v6] }, labels: { ...plain, [HEADLESS]: '' } },
      { name: 'ipv6-clusterip', svc: newServiceAndEndpointMeta('foo', namespace, { ipFamilies: ['IPv6'], clusterIP: '1234::5678:0000:0000:9abc:def1' }), perType: { IPv6: [v6] }, labels: plain },
      { name: 'dualstack-service', svc: newServiceAndEndpointMeta('foo', namespace, { ipFamilies: ['IPv4', 'IPv6'], clusterIP: '10.0.0.10' }), perType: { IPv6: [v6], IPv4: [v4] }, labels: plain },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const { slices } = reconcile(c.svc, [pod1], [zonedNode]);
        expect(slices).toHaveLength(Object.keys(c.perType).length);
        for (const s of slices) {
          expect(s.metadata.name.startsWith('foo')).toBe(true);
          expect(s.metadata.labels).toStrictEqual(c.labels);
          expect(s.endpoints).toStrictEqual(c.perType[s.addressType]);
        }
        expect(new Set(slices.map((s) => s.addressType))).toStrictEqual(new Set(Object.keys(c.perType)));
      });
    }
  });

  const pods = (n: number, change?: (i: number, p: Record<string, any>) => void): Pod[] =>
    Array.from({ length: n }, (_, i) => newPod(i, namespace, i % 3 !== 0, false, change ? (p) => change(i, p) : undefined));

  it('TestReconcile1EndpointSlicePublishNotReadyAddresses: 50 Pods, 1/3 not ready, all endpoints ready, one slice of 50', () => {
    const svc = newServiceAndEndpointMeta('foo', namespace, { publishNotReadyAddresses: true });
    const { slices } = reconcile(svc, pods(50), [node1]);
    expect(lengths(slices)).toStrictEqual([50]);
    for (const e of allEndpoints(slices)) expect(e.conditions.ready).toBe(true);
  });

  it('TestReconcileManyPods: 250 Pods, slices of 100, 100 and 50', () => {
    const { slices } = reconcile(newServiceAndEndpointMeta('foo', namespace), pods(250), [node1]);
    expect(lengths(slices)).toStrictEqual([100, 100, 50]);
  });

  it('TestReconcileEndpointSlicesServicesReservedLabels (first reconcile): reserved Service labels change nothing, slices of 100, 100 and 50', () => {
    const svc = newServiceAndEndpointMeta('foo', namespace, { labels: { [SERVICE_NAME]: 'bad', [MANAGED_BY]: 'actor', [HEADLESS]: 'invalid' } });
    const { slices } = reconcile(svc, pods(250), [node1]);
    expect(lengths(slices)).toStrictEqual([100, 100, 50]);
    for (const s of slices) expect(s.metadata.labels).toStrictEqual({ [MANAGED_BY]: CONTROLLER, [SERVICE_NAME]: 'foo', [HEADLESS]: '' });
  });

  it('TestReconcileEndpointSlicesNamedPorts: 300 Pods, 5 resolutions of one named port, 5 slices of 60', () => {
    const svc = newService({
      name: 'named-port-example',
      namespace,
      ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 0 }],
      ipFamilies: ['IPv4'],
    });
    const ps = pods(300, (i, p) => {
      p.spec.containers[0].ports = [{ name: 'http', containerPort: 8080 + (i % 5), protocol: 'TCP' }];
    });
    const { slices } = reconcile(svc, ps, [node1]);
    expect(lengths(slices)).toStrictEqual([60, 60, 60, 60, 60]);
    // expectUnorderedSlicesWithTopLevelAttrs: ports {"" TCP 8080+i} and IPv4, in any order.
    const tops = slices.map((s) => JSON.stringify({ addressType: s.addressType, ports: s.ports })).sort();
    const want = [0, 1, 2, 3, 4].map((i) => JSON.stringify({ addressType: 'IPv4', ports: [{ name: '', protocol: 'TCP', port: 8080 + i }] })).sort();
    expect(tops).toStrictEqual(want);
  });

  describe('TestReconcileMaxEndpointsPerSlice: 250 Pods', () => {
    const cases = [
      { max: 50, want: [50, 50, 50, 50, 50] },
      { max: 80, want: [80, 80, 80, 10] },
      { max: 150, want: [150, 100] },
      { max: 250, want: [250] },
      { max: 500, want: [250] },
    ];
    const ps = pods(250);
    for (const c of cases) {
      it(`maxEndpointsPerSlice: ${c.max}`, () => {
        expect(lengths(reconcile(newServiceAndEndpointMeta('foo', namespace), ps, [node1], { maxEndpointsPerSlice: c.max }).slices)).toStrictEqual(c.want);
      });
    }
  });

  describe('TestReconcilerPodMissingNode (the Create cases)', () => {
    // Two Pods on node-0 and node-1; only node-0 is known.
    const ps = [newPod(0, namespace, true, false, (p) => (p.spec.nodeName = 'node-0')), newPod(1, namespace, true, false, (p) => (p.spec.nodeName = 'node-1'))];
    const nodes = [newNode({ name: 'node-0' })];
    it('Create and publishNotReady false: 1 slice, 1 endpoint (the Go reconcile returns an error to retry the other Pod)', () => {
      const r = reconcile(newServiceAndEndpointMeta('foo', namespace), ps, nodes);
      expect(lengths(r.slices)).toStrictEqual([1]);
      expect(r.slices[0]!.endpoints[0]!.targetRef.name).toBe('pod0');
      expect(r.podsWithoutNode.map((m) => m.pod.metadata.name)).toStrictEqual(['pod1']);
    });
    it('Create and publishNotReady true: 1 slice, 2 endpoints', () => {
      const r = reconcile(newServiceAndEndpointMeta('foo', namespace, { publishNotReadyAddresses: true }), ps, nodes);
      expect(lengths(r.slices)).toStrictEqual([2]);
      expect(r.podsWithoutNode).toStrictEqual([]);
    });
  });

  it('TestReconcileHeadlessServiceNoPorts: one slice, no ports, the Pod as its endpoint', () => {
    const svc = newService({ name: 'headless-no-ports', namespace, uid: 'test-uid', clusterIP: 'None', ipFamilies: ['IPv4'] });
    const { slices } = reconcile(svc, [newPod(1, namespace, true, false)], [node1]);
    expect(slices).toHaveLength(1);
    expect(slices[0]!.ports).toStrictEqual([]);
    expect(slices[0]!.endpoints.map((e) => e.addresses)).toStrictEqual([['1.2.3.5']]);
  });
});

describe('which Services the controller writes slices for (endpointslice_controller_test.go, reconciler_test.go)', () => {
  const ns = 'default';
  const nodes = [newNode({ name: 'node-1' })];
  const derive = (services: Service[], pods: Pod[]) => deriveEndpointSlices({ services, pods, nodes, slices: [] }, { endpointsFrom: 'pods', release: '1.37' });
  const pod1 = newPod(1, ns, true, false);

  it('TestSyncServiceNoSelector: no slices', () => {
    const svc = newService({ name: 'testing-1', namespace: ns, selector: undefined, ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 0 }] });
    expect(derive([svc], [pod1]).derived).toStrictEqual([]);
  });
  describe('TestServiceExternalNameTypeSync: no slices', () => {
    const port = [{ name: '', protocol: 'TCP' as const, port: 80, targetPort: 80, nodePort: 0 }];
    const cases = [
      { desc: 'External name with selector and ports should not receive endpoint slices', svc: { selector: { foo: 'bar' }, ports: port } },
      { desc: 'External name with ports should not receive endpoint slices', svc: { selector: undefined, ports: port } },
      { desc: 'External name with selector should not receive endpoint slices', svc: { selector: { foo: 'bar' } } },
      { desc: 'External name without selector and ports should not receive endpoint slices', svc: { selector: undefined } },
    ];
    for (const c of cases) {
      it(c.desc, () => {
        expect(derive([newService({ name: 'testing-1', namespace: ns, type: 'ExternalName', ...c.svc })], [pod1]).derived).toStrictEqual([]);
      });
    }
  });
  it('TestSyncServicePendingDeletion and TestReconcilerFinalizeSvcDeletionTimestamp: nothing created for a Service being deleted', () => {
    const svc = newService({ name: 'testing-1', namespace: ns, deletionTimestamp: '2026-01-01T00:00:00Z', ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 0 }] });
    expect(derive([svc], [pod1]).derived).toStrictEqual([]);
  });
  // createService (endpointslice_controller_test.go): uid <ns>-<name>, one port with targetPort
  // 80, selector foo=bar, ipFamilies [IPv4].
  const created = (name: string) => newService({ name, namespace: ns, uid: `${ns}-${name}`, ipFamilies: ['IPv4'], ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 0 }] });
  it('TestSyncServiceWithSelector: one placeholder slice (no ports, no endpoints)', () => {
    const { derived } = derive([created('testing-1')], []);
    expect(derived).toHaveLength(1);
    expect(derived[0]!.metadata.name).toMatch(/^testing-1/);
    expect(derived[0]!.metadata.labels[SERVICE_NAME]).toBe('testing-1');
    expect(derived[0]!.ports).toStrictEqual([]);
    expect(derived[0]!.endpoints).toStrictEqual([]);
  });
  it('TestSyncServicePodSelection: only the Pod the selector matches', () => {
    const pod2 = newPod(2, ns, true, false, (p) => (p.metadata.labels.foo = 'boo'));
    const { derived } = derive([created('testing-1')], [pod1, pod2]);
    expect(derived).toHaveLength(1);
    expect(derived[0]!.endpoints.map((e) => e.targetRef)).toStrictEqual([{ kind: 'Pod', namespace: ns, name: 'pod1' }]);
  });
});

describe('endpointslice_controller_test.go TestSyncService', () => {
  // Service foobar/default: ports tcp-example (TCP → 80), udp-example (UDP → 161), sctp-example
  // (SCTP → 3456), selector foo=bar; Pods on node-1 (newController's only Node, no labels).
  // The Go test compares ports and endpoints with ElementsMatch (any order) and expects one slice.
  const svcPorts = [
    { name: 'tcp-example', protocol: 'TCP' as const, port: 80, targetPort: 80, nodePort: 0 },
    { name: 'udp-example', protocol: 'UDP' as const, port: 161, targetPort: 161, nodePort: 0 },
    { name: 'sctp-example', protocol: 'SCTP' as const, port: 3456, targetPort: 3456, nodePort: 0 },
  ];
  const wantPorts = [
    { name: 'sctp-example', protocol: 'SCTP', port: 3456 },
    { name: 'udp-example', protocol: 'UDP', port: 161 },
    { name: 'tcp-example', protocol: 'TCP', port: 80 },
  ];
  const pod = (name: string, ips: string[], ready: boolean, o: { terminating?: boolean } = {}): Pod =>
    newPod(0, 'default', ready, o.terminating ?? false, (p) => {
      p.metadata.name = name;
      p.status.podIP = ips[0];
      p.status.podIPs = ips.map((ip) => ({ ip }));
    });
  const ep = (address: string, name: string, ready: boolean, serving: boolean, terminating: boolean) => ({
    conditions: { ready, serving, terminating },
    addresses: [address],
    targetRef: { kind: 'Pod', namespace: 'default', name },
    nodeName: 'node-1',
  });
  const cases: Array<{ name: string; family: 'IPv4' | 'IPv6'; pods: Pod[]; endpoints: unknown[] }> = [
    {
      name: 'pods with multiple IPs and Service with ipFamilies=ipv4',
      family: 'IPv4',
      pods: [pod('pod0', ['10.0.0.1'], true), pod('pod1', ['10.0.0.2', 'fd08::5678:0000:0000:9abc:def0'], true)],
      endpoints: [ep('10.0.0.1', 'pod0', true, true, false), ep('10.0.0.2', 'pod1', true, true, false)],
    },
    {
      name: 'pods with multiple IPs and Service with ipFamilies=ipv6',
      family: 'IPv6',
      pods: [pod('pod0', ['10.0.0.1'], true), pod('pod1', ['10.0.0.2', 'fd08::5678:0000:0000:9abc:def0'], true)],
      endpoints: [ep('fd08::5678:0:0:9abc:def0', 'pod1', true, true, false)],
    },
    {
      name: 'Terminating pods',
      family: 'IPv4',
      pods: [pod('pod0', ['10.0.0.1'], true), pod('pod1', ['10.0.0.2'], true, { terminating: true })],
      endpoints: [ep('10.0.0.1', 'pod0', true, true, false), ep('10.0.0.2', 'pod1', false, true, true)],
    },
    {
      name: 'Not ready terminating pods',
      family: 'IPv4',
      pods: [pod('pod0', ['10.0.0.1'], true), pod('pod1', ['10.0.0.2'], false, { terminating: true })],
      endpoints: [ep('10.0.0.1', 'pod0', true, true, false), ep('10.0.0.2', 'pod1', false, false, true)],
    },
    {
      // pod1: Initialized True, Ready False, ContainersReady False (no phase).
      name: 'Ready and Complete pods with same IPs',
      family: 'IPv4',
      pods: [pod('pod0', ['10.0.0.1'], true), pod('pod1', ['10.0.0.1'], false)],
      endpoints: [ep('10.0.0.1', 'pod0', true, true, false), ep('10.0.0.1', 'pod1', false, false, false)],
    },
    {
      name: 'Two Ready pods with same IPs',
      family: 'IPv4',
      pods: [pod('pod0', ['10.0.0.1'], true), pod('pod1', ['10.0.0.1'], true)],
      endpoints: [ep('10.0.0.1', 'pod0', true, true, false), ep('10.0.0.1', 'pod1', true, true, false)],
    },
  ];
  const key = (v: unknown) => JSON.stringify(v, Object.keys(v as object).sort());
  for (const c of cases) {
    for (const release of CONTROLLER_RELEASES) {
      it(`${c.name} (v${release})`, () => {
        const svc = newService({ name: 'foobar', namespace: 'default', ipFamilies: [c.family], ports: svcPorts });
        const { derived } = deriveEndpointSlices({ services: [svc], pods: c.pods, nodes: [newNode({ name: 'node-1' })], slices: [] }, { endpointsFrom: 'pods', release });
        expect(derived).toHaveLength(1);
        expect(derived[0]!.ports.map(key).sort()).toStrictEqual(wantPorts.map(key).sort());
        expect(derived[0]!.endpoints.map((e) => JSON.stringify(e, ['addresses', 'conditions', 'ready', 'serving', 'terminating', 'nodeName', 'targetRef', 'kind', 'namespace', 'name', 'hostname', 'zone', 'hints'])).sort()).toStrictEqual(
          c.endpoints.map((e) => JSON.stringify(e, ['addresses', 'conditions', 'ready', 'serving', 'terminating', 'nodeName', 'targetRef', 'kind', 'namespace', 'name', 'hostname', 'zone', 'hints'])).sort(),
        );
        // And nothing beyond the Go fields (an extra hostname, zone or hints would be missed by
        // the replacer above).
        for (const e of derived[0]!.endpoints) expect(Object.keys(e).sort()).toStrictEqual(['addresses', 'conditions', 'nodeName', 'targetRef']);
      });
    }
  }
});

describe("the order of a slice's ports, per release (NewPortMapKey sorts them by their hash: MD5 in v1.34, FNV-128a from v1.35)", () => {
  // TestSyncService compares ports as a set. The order is the real controller's, read from
  // `kpc-oracle-vX endpointslices` (test/oracle, built from k8s.io/kubernetes vX) on the same
  // Service (cluster IP 10.96.0.20 added) and one Pod, 2026-12-01.
  const want: Record<string, string[]> = {
    '1.34': ['udp-example', 'sctp-example', 'tcp-example'],
    '1.35': ['udp-example', 'tcp-example', 'sctp-example'],
    '1.36': ['udp-example', 'tcp-example', 'sctp-example'],
    '1.37': ['udp-example', 'tcp-example', 'sctp-example'],
  };
  for (const release of CONTROLLER_RELEASES) {
    it(`v${release}: ${want[release]!.join(', ')}`, () => {
      const svc = newService({
        name: 'foobar',
        namespace: 'default',
        clusterIP: '10.96.0.20',
        ipFamilies: ['IPv4'],
        ports: [
          { name: 'tcp-example', protocol: 'TCP', port: 80, targetPort: 80, nodePort: 0 },
          { name: 'udp-example', protocol: 'UDP', port: 161, targetPort: 161, nodePort: 0 },
          { name: 'sctp-example', protocol: 'SCTP', port: 3456, targetPort: 3456, nodePort: 0 },
        ],
      });
      const pod0 = newPod(0, 'default', true, false, (p) => {
        p.metadata.name = 'pod0';
        p.status.podIP = '10.0.0.1';
        p.status.podIPs = [{ ip: '10.0.0.1' }];
      });
      const { derived } = deriveEndpointSlices({ services: [svc], pods: [pod0], nodes: [newNode({ name: 'node-1' })], slices: [] }, { endpointsFrom: 'pods', release });
      expect(derived[0]!.ports.map((p) => p.name)).toStrictEqual(want[release]);
    });
  }
});

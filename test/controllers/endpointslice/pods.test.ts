/**
 * A Pod as an endpoint (src/controllers/endpointslice/pods.ts), ported from the controller's own
 * tests. Sources (identical in k8s.io/endpointslice v0.34.4, v0.35.4, v0.36.3 and v0.37.2 unless
 * said; read from the Go module cache, /var/cache/kpc-oracle/gomod/k8s.io/endpointslice@v0.37.2):
 *
 *   utils_test.go             TestPodToEndpoint, TestGetEndpointPorts, TestFindPort
 *   util/controller_utils_test.go  TestShouldPodBeInEndpoints, TestShouldSetHostname
 *                                  (v0.34/v0.35 differ from v0.36/v0.37 only in sets.String →
 *                                  sets.Set[string] and an import, not in these cases)
 *
 * Every expectation is the Go test's data. Deviations from the Go inputs are named at the case:
 * the Go tests hand structs to the functions directly, kpc's Pods come through its decoder, so
 * a Go input the API server would never store (a podIP different from podIPs[0], a negative
 * port, protocol "snmp") is either made consistent or built as kpc's model directly.
 */
import { describe, expect, it } from 'vitest';
import { endpointPorts, findPort, podToEndpoint, shouldPodBeInEndpoints, shouldSetHostname } from '../../../src/controllers/endpointslice/pods.js';
import type { Pod } from '../../../src/parser/k8s/types.js';
import { decoded, newNode, newPod, newService, newServiceAndEndpointMeta } from './helpers.js';

describe('podToEndpoint (utils_test.go TestPodToEndpoint)', () => {
  const ns = 'test';
  const svc = newServiceAndEndpointMeta('foo', ns);
  const svcPublishNotReady = newServiceAndEndpointMeta('publishnotready', ns, { publishNotReadyAddresses: true });
  const readyPod = newPod(1, ns, true, false);
  const readyTerminatingPod = newPod(1, ns, true, true);
  const readyPodHostname = newPod(1, ns, true, false, (p) => {
    p.spec.subdomain = 'foo';
    p.spec.hostname = 'example-hostname';
  });
  const unreadyPod = newPod(1, ns, false, false);
  const unreadyTerminatingPod = newPod(1, ns, false, true);
  // Go: PodIP 1.2.3.5 (from newPod) with PodIPs [1.2.3.4, 1234::5678:0000:0000:9abc:def0]; the
  // API server's conversion lets podIP win over a different podIPs[0], so the stored Pod that
  // gives the Go test's situation has podIP 1.2.3.4.
  const multiIPPod = newPod(1, ns, true, false, (p) => {
    p.status.podIP = '1.2.3.4';
    p.status.podIPs = [{ ip: '1.2.3.4' }, { ip: '1234::5678:0000:0000:9abc:def0' }];
  });
  const node1 = newNode({ name: 'node-1', labels: { 'topology.kubernetes.io/zone': 'us-central1-a', 'topology.kubernetes.io/region': 'us-central1' } });
  const ref = { kind: 'Pod', namespace: ns, name: 'pod1' };

  const cases = [
    { name: 'Ready pod', pod: readyPod, svc, want: { addresses: ['1.2.3.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1', targetRef: ref } },
    { name: 'Ready pod + publishNotReadyAddresses', pod: readyPod, svc: svcPublishNotReady, want: { addresses: ['1.2.3.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1', targetRef: ref } },
    { name: 'Unready pod', pod: unreadyPod, svc, want: { addresses: ['1.2.3.5'], conditions: { ready: false, serving: false, terminating: false }, nodeName: 'node-1', targetRef: ref } },
    { name: 'Unready pod + publishNotReadyAddresses', pod: unreadyPod, svc: svcPublishNotReady, want: { addresses: ['1.2.3.5'], conditions: { ready: true, serving: false, terminating: false }, nodeName: 'node-1', targetRef: ref } },
    { name: 'Ready pod + node labels', pod: readyPod, node: node1, svc, want: { addresses: ['1.2.3.5'], conditions: { ready: true, serving: true, terminating: false }, zone: 'us-central1-a', nodeName: 'node-1', targetRef: ref } },
    { name: 'Multi IP Ready pod + node labels', pod: multiIPPod, node: node1, svc, want: { addresses: ['1.2.3.4'], conditions: { ready: true, serving: true, terminating: false }, zone: 'us-central1-a', nodeName: 'node-1', targetRef: ref } },
    {
      name: 'Ready pod + hostname',
      pod: readyPodHostname,
      node: node1,
      svc,
      want: { addresses: ['1.2.3.5'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'example-hostname', zone: 'us-central1-a', nodeName: 'node-1', targetRef: ref },
    },
    { name: 'Ready terminating pod', pod: readyTerminatingPod, svc, want: { addresses: ['1.2.3.5'], conditions: { ready: false, serving: true, terminating: true }, nodeName: 'node-1', targetRef: ref } },
    { name: 'Not ready terminating pod', pod: unreadyTerminatingPod, svc, want: { addresses: ['1.2.3.5'], conditions: { ready: false, serving: false, terminating: true }, nodeName: 'node-1', targetRef: ref } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(podToEndpoint(c.pod, c.node, c.svc, 'IPv4')).toStrictEqual(c.want);
    });
  }

  it('Multi IP pod, IPv6 (utils.go getEndpointAddresses: the address is parsed and printed again)', () => {
    // Not a Go case: the same Pod for the IPv6 address type. The address comes out canonical,
    // as TestReconcile1Pod's "ipv6" case expects for this Pod's address (1234::5678:0:0:9abc:def0).
    expect(podToEndpoint(multiIPPod, node1, svc, 'IPv6').addresses).toStrictEqual(['1234::5678:0:0:9abc:def0']);
  });
});

/** A Pod with only container ports, as a Go test's PodSpec literal (through the decoder). */
function podWithPorts(containers: unknown[], initContainers: unknown[] = []): Pod {
  return decoded<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers, initContainers },
    status: {},
  });
}

describe('getEndpointPorts (utils_test.go TestGetEndpointPorts)', () => {
  const base = { nodePort: 0 };
  it('service with AppProtocol on one port', () => {
    const svc = newService({ name: 's', namespace: 'default', ports: [{ ...base, name: 'http', port: 80, targetPort: 80, protocol: 'TCP', appProtocol: 'example.com/custom-protocol' }] });
    const pod = podWithPorts([{ name: 'c', ports: [] }]);
    expect(endpointPorts(svc, pod)).toStrictEqual([{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'example.com/custom-protocol' }]);
  });
  it('service with named port and AppProtocol on one port', () => {
    // Go: the second Service port has no `port` (0); only its targetPort enters the slice.
    const svc = newService({
      name: 's',
      namespace: 'default',
      ports: [
        { ...base, name: 'http', port: 80, targetPort: 80, protocol: 'TCP' },
        { ...base, name: 'https', port: 443, targetPort: 'https', protocol: 'TCP', appProtocol: 'https' },
      ],
    });
    const pod = podWithPorts([{ name: 'c', ports: [{ name: 'https', containerPort: 443, protocol: 'TCP' }] }]);
    expect(endpointPorts(svc, pod)).toStrictEqual([
      { name: 'http', port: 80, protocol: 'TCP' },
      { name: 'https', port: 443, protocol: 'TCP', appProtocol: 'https' },
    ]);
  });
  it('service with named port for restartable init container', () => {
    const svc = newService({
      name: 's',
      namespace: 'default',
      ports: [
        { ...base, name: 'http-sidecar', port: 8080, targetPort: 8080, protocol: 'TCP' },
        { ...base, name: 'http', port: 8090, targetPort: 'http', protocol: 'TCP' },
      ],
    });
    const pod = podWithPorts(
      [{ name: 'c', ports: [{ name: 'http', containerPort: 8090, protocol: 'TCP' }] }],
      [{ name: 'i', restartPolicy: 'Always', ports: [{ name: 'http-sidecar', containerPort: 8080, protocol: 'TCP' }] }],
    );
    expect(endpointPorts(svc, pod)).toStrictEqual([
      { name: 'http-sidecar', port: 8080, protocol: 'TCP' },
      { name: 'http', port: 8090, protocol: 'TCP' },
    ]);
  });
  it('service with same named port for regular and restartable init container', () => {
    const svc = newService({ name: 's', namespace: 'default', ports: [{ ...base, name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] });
    // FindPort looks at the regular containers first, then the sidecars.
    const pod = podWithPorts(
      [{ name: 'c', ports: [{ name: 'http', containerPort: 8090, protocol: 'TCP' }] }],
      [{ name: 'i', restartPolicy: 'Always', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }],
    );
    expect(endpointPorts(svc, pod)).toStrictEqual([{ name: 'http', port: 8090, protocol: 'TCP' }]);
  });
  it('a named target port no container has is left out (reconciler_test.go TestReconcileEndpointSlicesNamedPorts relies on it per Pod)', () => {
    // Not a Go case of TestGetEndpointPorts: getEndpointPorts `continue`s when FindPort fails.
    const svc = newService({ name: 's', namespace: 'default', ports: [{ ...base, name: 'x', port: 80, targetPort: 'nope', protocol: 'TCP' }] });
    expect(endpointPorts(svc, podWithPorts([{ name: 'c' }]))).toStrictEqual([]);
  });
});

/** kpc's Pod model as FindPort sees it: the named ports in its search order. */
function modelPod(namedPorts: Pod['spec']['namedPorts']): Pod {
  return {
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', labels: {}, annotations: {} },
    spec: { nodeName: '', hostname: '', subdomain: '', namedPorts },
    status: { phase: '', ready: false, podIPs: [] },
  };
}

describe('FindPort (utils_test.go TestFindPort)', () => {
  const svcPort = (targetPort: number | string) => ({ name: '', protocol: 'TCP' as const, port: 1, targetPort, nodePort: 0 });
  // Through the decoder: what the API server accepts.
  const decodedCases: Array<{ name: string; containers: unknown[]; initContainers?: unknown[]; port: number | string; expected: number | undefined }> = [
    { name: 'valid int, no ports', containers: [{ name: 'a' }], port: 93, expected: 93 },
    {
      name: 'valid int, with ports',
      containers: [{ name: 'a', ports: [{ containerPort: 11, protocol: 'TCP' }, { name: 'p', containerPort: 22, protocol: 'TCP' }] }],
      port: 93,
      expected: 93,
    },
    { name: 'valid str, no ports', containers: [{ name: 'a' }], port: 'p', expected: undefined },
    {
      name: 'valid str, one ctr with ports',
      containers: [{ name: 'a', ports: [{ containerPort: 11, protocol: 'UDP' }, { name: 'p', containerPort: 22, protocol: 'TCP' }, { name: 'q', containerPort: 33, protocol: 'TCP' }] }],
      port: 'q',
      expected: 33,
    },
    {
      name: 'valid str, two ctr with ports',
      containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 11, protocol: 'UDP' }, { name: 'p', containerPort: 22, protocol: 'TCP' }, { name: 'q', containerPort: 33, protocol: 'TCP' }] }],
      port: 'q',
      expected: 33,
    },
    {
      name: 'valid str, two ctr with same port',
      containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 11, protocol: 'UDP' }, { name: 'p', containerPort: 22, protocol: 'TCP' }, { name: 'q', containerPort: 22, protocol: 'TCP' }] }],
      port: 'q',
      expected: 22,
    },
    { name: 'valid hostPort', containers: [{ name: 'a' }, { name: 'b', ports: [{ name: 'a', containerPort: 11, hostPort: 81, protocol: 'TCP' }] }], port: 'a', expected: 11 },
    { name: 'HostIP Address', containers: [{ name: 'a' }, { name: 'b', ports: [{ name: 'a', containerPort: 11, hostIP: '192.168.1.1', protocol: 'TCP' }] }], port: 'a', expected: 11 },
    {
      name: 'Invalid(restartPolicy != Always) initContainer named port',
      containers: [{ name: 'c' }],
      initContainers: [{ name: 'i', ports: [{ name: 'a', containerPort: 80, protocol: 'TCP' }] }],
      port: 'a',
      expected: undefined,
    },
  ];
  for (const c of decodedCases) {
    it(c.name, () => {
      expect(findPort(podWithPorts(c.containers, c.initContainers), svcPort(c.port))).toBe(c.expected);
    });
  }

  // Go inputs the API server refuses (hostPort -1, containerPort -1, protocol "snmp"): kpc's
  // decoder would reject the Pod, so FindPort gets kpc's model with the Go ports as they stand.
  it('valid str, invalid protocol', () => {
    expect(findPort(modelPod([{ name: 'a', containerPort: 11, protocol: 'snmp' as never }]), svcPort('a'))).toBeUndefined();
  });
  it('invalid hostPort ("this should fail but passes")', () => {
    expect(findPort(modelPod([{ name: 'a', containerPort: 11, protocol: 'TCP' }]), svcPort('a'))).toBe(11);
  });
  it('invalid ContainerPort ("this should fail but passes")', () => {
    expect(findPort(modelPod([{ name: 'a', containerPort: -1, protocol: 'TCP' }]), svcPort('a'))).toBe(-1);
  });
  it('Sidecar initContainer named port (Go hostPort -1 left out: the API server refuses it)', () => {
    const pod = podWithPorts([{ name: 'c' }], [{ name: 'i', restartPolicy: 'Always', ports: [{ name: 'a', containerPort: 80, protocol: 'TCP' }] }]);
    expect(findPort(pod, svcPort('a'))).toBe(80);
  });
  it('App and sidecar containers have the same named port, first app container port will be used (Go hostPort -1 left out)', () => {
    const pod = podWithPorts(
      [
        { name: 'c1', ports: [{ name: 'a', containerPort: 81, protocol: 'TCP' }] },
        { name: 'c2', ports: [{ name: 'a', containerPort: 82, protocol: 'TCP' }] },
      ],
      [{ name: 'i', restartPolicy: 'Always', ports: [{ name: 'a', containerPort: 80, protocol: 'TCP' }] }],
    );
    expect(findPort(pod, svcPort('a'))).toBe(81);
  });
  it('a named port of another protocol is not found (FindPort matches port.Protocol too)', () => {
    // Not a Go case: FindPort's `port.Name == name && port.Protocol == svcPort.Protocol`.
    const pod = podWithPorts([{ name: 'c', ports: [{ name: 'a', containerPort: 53, protocol: 'UDP' }] }]);
    expect(findPort(pod, svcPort('a'))).toBeUndefined();
  });
});

function phasePod(phase: string, podIPs: string[], terminating = false): Pod {
  return decoded<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { containers: [{ name: 'c' }] },
    status: { phase, ...(podIPs.length ? { podIP: podIPs[0], podIPs: podIPs.map((ip) => ({ ip })) } : {}) },
  });
}

describe('ShouldPodBeInEndpoints(pod, includeTerminating=true) (util/controller_utils_test.go TestShouldPodBeInEndpoints)', () => {
  // The reconciler always passes includeTerminating=true (reconciler.go:191 in v0.37.2), so
  // the Go case "Terminating Pod with includeTerminating=false" does not apply. restartPolicy
  // does not enter the function (the Go cases vary it; kpc does not keep it).
  const cases: Array<{ name: string; pod: Pod; expected: boolean }> = [
    { name: 'Failed pod with Never RestartPolicy', pod: phasePod('Failed', ['1.2.3.4']), expected: false },
    { name: 'Succeeded pod with Never RestartPolicy', pod: phasePod('Succeeded', ['1.2.3.4']), expected: false },
    { name: 'Succeeded pod with OnFailure RestartPolicy', pod: phasePod('Succeeded', ['1.2.3.4']), expected: false },
    { name: 'Empty Pod IPs, Running pod with OnFailure RestartPolicy', pod: phasePod('Running', []), expected: false },
    { name: 'Failed pod with Always RestartPolicy', pod: phasePod('Failed', ['1.2.3.4']), expected: false },
    { name: 'Pending pod with Never RestartPolicy', pod: phasePod('Pending', ['1.2.3.4']), expected: true },
    { name: 'Unknown pod with OnFailure RestartPolicy', pod: phasePod('Unknown', ['1.2.3.4']), expected: true },
    { name: 'Running pod with Never RestartPolicy', pod: phasePod('Running', ['1.2.3.4']), expected: true },
    { name: 'Multiple Pod IPs, Running pod with OnFailure RestartPolicy', pod: phasePod('Running', ['1.2.3.4', '1234::5678:0000:0000:9abc:def0']), expected: true },
    { name: 'Terminating Pod with includeTerminating=true', pod: phasePod('Running', ['1.2.3.4'], true), expected: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(shouldPodBeInEndpoints(c.pod)).toBe(c.expected);
    });
  }
});

describe('ShouldSetHostname (util/controller_utils_test.go TestShouldSetHostname)', () => {
  const simplePod = (namespace: string, hostname: string, subdomain: string): Pod => ({
    kind: 'Pod',
    metadata: { name: '', namespace, labels: {}, annotations: {} },
    spec: { nodeName: '', hostname, subdomain, namedPorts: [] },
    status: { phase: '', ready: false, podIPs: [] },
  });
  const simpleSvc = (namespace: string, name: string) => newService({ name, namespace });
  const cases = [
    { name: 'all matching', pod: simplePod('ns', 'foo', 'svc-name'), svc: simpleSvc('ns', 'svc-name'), expected: true },
    { name: 'all matching, hostname not set', pod: simplePod('ns', '', 'svc-name'), svc: simpleSvc('ns', 'svc-name'), expected: false },
    { name: 'all set, different name/subdomain', pod: simplePod('ns', 'hostname', 'subdomain'), svc: simpleSvc('ns', 'name'), expected: false },
    { name: 'all set, different namespace', pod: simplePod('ns1', 'hostname', 'svc-name'), svc: simpleSvc('ns2', 'svc-name'), expected: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(shouldSetHostname(c.pod, c.svc)).toBe(c.expected);
    });
  }
});

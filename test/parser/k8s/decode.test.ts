import { describe, expect, it } from 'vitest';
import { decodeObject } from '../../../src/parser/k8s/decode.js';
import { errorsOf, LEGACY, ok, service, warningsOf } from './helpers.js';

/** What `kubectl get svc web -o yaml` prints on a v1.33 cluster. */
const kubectlService = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Service"}\n' },
    creationTimestamp: '2025-05-01T10:00:00Z',
    labels: { app: 'web' },
    managedFields: [
      {
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:ports': {} } },
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        time: '2025-05-01T10:00:00Z',
      },
    ],
    name: 'web',
    namespace: 'default',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: '8e3c1a52-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true }],
    resourceVersion: '12345',
    uid: '8e3c1a52-0000-4000-8000-000000000002',
    finalizers: ['service.kubernetes.io/load-balancer-cleanup'],
  },
  spec: {
    allocateLoadBalancerNodePorts: true,
    clusterIP: '10.96.12.34',
    clusterIPs: ['10.96.12.34'],
    externalTrafficPolicy: 'Cluster',
    internalTrafficPolicy: 'Cluster',
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    ports: [{ name: 'http', nodePort: 31080, port: 80, protocol: 'TCP', targetPort: 'http' }],
    selector: { app: 'web' },
    sessionAffinity: 'None',
    type: 'LoadBalancer',
  },
  status: {
    loadBalancer: { ingress: [{ ip: '203.0.113.7', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }] },
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-05-01T10:00:00Z', reason: 'Ok', message: '', observedGeneration: 1 }],
  },
};

const kubectlSlice = {
  addressType: 'IPv4',
  apiVersion: 'discovery.k8s.io/v1',
  endpoints: [
    {
      addresses: ['10.244.1.7'],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'node-a',
      targetRef: { kind: 'Pod', name: 'web-7d9f-abcde', namespace: 'default', uid: '8e3c1a52-0000-4000-8000-000000000003' },
      zone: 'zone-a',
      hints: { forZones: [{ name: 'zone-a' }] },
    },
  ],
  kind: 'EndpointSlice',
  metadata: {
    annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2025-05-01T10:00:00Z' },
    creationTimestamp: '2025-05-01T10:00:00Z',
    generateName: 'web-',
    generation: 3,
    labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'kubernetes.io/service-name': 'web' },
    name: 'web-x7k2p',
    namespace: 'default',
    ownerReferences: [{ apiVersion: 'v1', blockOwnerDeletion: true, controller: true, kind: 'Service', name: 'web', uid: '8e3c1a52-0000-4000-8000-000000000002' }],
    resourceVersion: '12346',
    uid: '8e3c1a52-0000-4000-8000-000000000004',
  },
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
};

const kubectlNode = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    creationTimestamp: '2025-05-01T09:00:00Z',
    labels: { 'kubernetes.io/hostname': 'node-a', 'topology.kubernetes.io/zone': 'zone-a', 'node-role.kubernetes.io/control-plane': '' },
    name: 'node-a',
    resourceVersion: '999',
    uid: '8e3c1a52-0000-4000-8000-000000000005',
  },
  spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'], providerID: 'kind://docker/kind/node-a', taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] },
  status: {
    addresses: [
      { address: '172.18.0.2', type: 'InternalIP' },
      { address: 'fc00:f853:ccd:e793::2', type: 'InternalIP' },
      { address: 'node-a', type: 'Hostname' },
    ],
    allocatable: { cpu: '8', memory: '16Gi', pods: '110' },
    capacity: { cpu: '8', memory: '16Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: null, lastTransitionTime: null }],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    images: [{ names: ['registry.k8s.io/pause:3.10'], sizeBytes: 320368 }],
    nodeInfo: { architecture: 'amd64', kernelVersion: '6.8.0', kubeletVersion: 'v1.33.0', operatingSystem: 'linux', swap: {} },
    runtimeHandlers: [{ name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }],
    features: { supplementalGroupsPolicy: true },
  },
};

describe('decodeObject: kubectl get -o yaml output decodes', () => {
  it('a Service with managedFields, ownerReferences, finalizers and status', () => {
    const r = decodeObject(structuredClone(kubectlService), LEGACY);
    expect(errorsOf(r)).toEqual([]);
    expect(warningsOf(r)).toEqual([]);
  });

  it('an EndpointSlice with generateName, targetRef and hints', () => {
    expect(errorsOf(decodeObject(structuredClone(kubectlSlice), LEGACY))).toEqual([]);
  });

  it('a Node with a status full of fields kube-proxy never reads', () => {
    const r = decodeObject(structuredClone(kubectlNode), LEGACY);
    expect(errorsOf(r)).toEqual([]);
    expect(ok(r).spec).toEqual({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'] });
  });

  it('null means "not set", as Go decodes it (creationTimestamp: null)', () => {
    const s = service();
    s.metadata.creationTimestamp = null;
    s.metadata.labels = null;
    s.spec.externalIPs = null;
    s.status = { loadBalancer: {} };
    expect(decodeObject(s, LEGACY).status).toBe('ok');
  });
});

describe('decodeObject: apiVersion and kind', () => {
  it.each([
    ['apps/v1', 'Deployment', { namespace: 'default', name: 'web' }, 'skipping apps/v1 Deployment default/web: kpc reads Service, EndpointSlice, Endpoints, Node, Pod and ServiceCIDR'],
    ['v1', 'Namespace', { name: 'kube-system' }, 'skipping v1 Namespace kube-system: kpc reads Service, EndpointSlice, Endpoints, Node, Pod and ServiceCIDR'],
    ['v1', 'ConfigMap', { namespace: 'a b', name: 'x"y' }, 'skipping v1 ConfigMap "a b"/"x\\"y": kpc reads Service, EndpointSlice, Endpoints, Node, Pod and ServiceCIDR'],
    [
      'kubeproxy.config.k8s.io/v1alpha1',
      'KubeProxyConfiguration',
      {},
      'skipping kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration: a kube-proxy configuration is read with --config, not with -f',
    ],
  ])('skips %s %s with a note', (apiVersion, kind, metadata, note) => {
    expect(decodeObject({ apiVersion, kind, metadata }, LEGACY)).toEqual({ status: 'skipped', note, kind });
  });

  it('an EndpointSlice in discovery.k8s.io/v1beta1 is an error, not a skip', () => {
    const r = decodeObject({ apiVersion: 'discovery.k8s.io/v1beta1', kind: 'EndpointSlice', metadata: { name: 'x', namespace: 'default' } }, LEGACY);
    expect(errorsOf(r)).toEqual([
      'apiVersion: Invalid value: "discovery.k8s.io/v1beta1": no matches for kind "EndpointSlice" in version "discovery.k8s.io/v1beta1"; discovery.k8s.io/v1beta1 EndpointSlice is no longer served since v1.25; use discovery.k8s.io/v1',
    ]);
  });

  it('a Service in another version', () => {
    const s = service();
    s.apiVersion = 'v2';
    expect(errorsOf(decodeObject(s, LEGACY))).toEqual(['apiVersion: Invalid value: "v2": no matches for kind "Service" in version "v2"; kpc reads v1 Service']);
  });

  it('kind and apiVersion are required', () => {
    expect(errorsOf(decodeObject({ apiVersion: 'v1', metadata: {} }, LEGACY))).toEqual(['kind: Required value']);
    expect(errorsOf(decodeObject({ kind: 'Service', metadata: {} }, LEGACY))).toEqual(['apiVersion: Required value']);
  });

  it('a document that is not an object', () => {
    expect(errorsOf(decodeObject('hello', LEGACY))).toEqual(['Invalid value: "hello": a Kubernetes object must be of type object: "string"']);
    expect(errorsOf(decodeObject([1], LEGACY))).toEqual(['Invalid value: [1]: a Kubernetes object must be of type object: "array"']);
  });

  it('kind must be a string', () => {
    expect(errorsOf(decodeObject({ apiVersion: 'v1', kind: 3 }, LEGACY))).toEqual(['kind: Invalid value: 3: kind in body must be of type string: "integer"']);
  });
});

describe('decodeObject: strict structural decoding', () => {
  it.each([
    ['an unknown spec field', (s: ReturnType<typeof service>) => (s.spec.foo = 1), ['spec.foo: unknown field "spec.foo"']],
    ['an unknown top-level field', (s: ReturnType<typeof service>) => (s.extra = true), ['extra: unknown field "extra"']],
    ['an unknown field in a list item', (s: ReturnType<typeof service>) => (s.spec.ports[0].hostPort = 80), ['spec.ports[0].hostPort: unknown field "spec.ports[0].hostPort"']],
    ['a misspelt field (case matters)', (s: ReturnType<typeof service>) => (s.spec.clusterIp = s.spec.clusterIP), ['spec.clusterIp: unknown field "spec.clusterIp" (did you mean "clusterIP"?)']],
    ['clusterName, removed from ObjectMeta', (s: ReturnType<typeof service>) => (s.metadata.clusterName = 'x'), ['metadata.clusterName: unknown field "metadata.clusterName"']],
    [
      'a quoted port number',
      (s: ReturnType<typeof service>) => (s.spec.ports[0].port = '80'),
      ['spec.ports[0].port: Invalid value: "80": spec.ports[0].port in body must be of type integer: "string"'],
    ],
    [
      'a fractional port number',
      (s: ReturnType<typeof service>) => (s.spec.ports[0].port = 80.5),
      ['spec.ports[0].port: Invalid value: 80.5: spec.ports[0].port in body must be of type integer: "number"'],
    ],
    [
      'a port number beyond int32',
      (s: ReturnType<typeof service>) => (s.spec.ports[0].port = 1e12),
      ['spec.ports[0].port: Invalid value: 1000000000000: spec.ports[0].port in body should be less than or equal to 2147483647'],
    ],
    [
      'a number where a string belongs (label value)',
      (s: ReturnType<typeof service>) => (s.metadata.labels = { version: 1 }),
      ['metadata.labels[version]: Invalid value: 1: metadata.labels[version] in body must be of type string: "integer"'],
    ],
    [
      'a boolean written as a string',
      (s: ReturnType<typeof service>) => (s.spec.publishNotReadyAddresses = 'true'),
      ['spec.publishNotReadyAddresses: Invalid value: "true": spec.publishNotReadyAddresses in body must be of type boolean: "string"'],
    ],
    [
      'a list where an object belongs',
      (s: ReturnType<typeof service>) => (s.spec.selector = ['app']),
      ['spec.selector: Invalid value: ["app"]: spec.selector in body must be of type object: "array"'],
    ],
    [
      'an object where a list belongs',
      (s: ReturnType<typeof service>) => (s.spec.ports = { port: 80 }),
      ['spec.ports: Invalid value: {"port":80}: spec.ports in body must be of type array: "object"'],
    ],
    [
      'a boolean targetPort',
      (s: ReturnType<typeof service>) => (s.spec.ports[0].targetPort = true),
      ['spec.ports[0].targetPort: Invalid value: true: spec.ports[0].targetPort in body must be of type integer or string: "boolean"'],
    ],
  ])('%s', (_name, change, expected) => {
    const s = service();
    change(s);
    expect(errorsOf(decodeObject(s, LEGACY))).toEqual(expected);
  });

  it('reports every structural error, not just the first', () => {
    const s = service();
    s.spec.foo = 1;
    s.spec.ports[0].port = '80';
    s.status = { bar: 1 };
    expect(errorsOf(decodeObject(s, LEGACY))).toEqual([
      'spec.ports[0].port: Invalid value: "80": spec.ports[0].port in body must be of type integer: "string"',
      'spec.foo: unknown field "spec.foo"',
      'status.bar: unknown field "status.bar"',
    ]);
  });
});

/**
 * A cluster made by hand for the EndpointSlices-from-Pods end-to-end test
 * (test/oracle/endpointslices.test.ts): what a small shop namespace looks like from
 * `kubectl get svc,pods,nodes -A -o yaml`. Named target ports resolving differently per Pod
 * (two port sets for one Service), a named port of two protocols (in two containers), not-ready, terminating and
 * failed Pods, a Pod without the named port, a headless Service publishing not-ready addresses
 * with hostnames, externalTrafficPolicy Local, trafficDistribution.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

const pod = (name: string, app: string, node: string, ip: string, o: { ready?: boolean; phase?: string; terminating?: boolean; ports?: Item[]; secondContainerPorts?: Item[]; hostname?: string; subdomain?: string } = {}): Item => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'shop', uid: `uid-${name}`, labels: { app }, ...(o.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { nodeName: node, ...(o.hostname ? { hostname: o.hostname } : {}), ...(o.subdomain ? { subdomain: o.subdomain } : {}), containers: [{ name: 'c', image: 'registry.example/app:1', ...(o.ports ? { ports: o.ports } : {}) }, ...(o.secondContainerPorts ? [{ name: 'c2', image: 'registry.example/app:1', ports: o.secondContainerPorts }] : [])] },
  status: {
    phase: o.phase ?? 'Running',
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [{ type: 'Ready', status: (o.ready ?? true) ? 'True' : 'False' }],
  },
});

const node = (name: string, zone: string, ip: string): Item => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone } },
  spec: {},
  status: { addresses: [{ type: 'InternalIP', address: ip }], conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '4' } },
});

const svc = (name: string, spec: Item): Item => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop', uid: `uid-svc-${name}` }, spec: { selector: { app: name }, ...spec } });

export const HAND_MADE: Item[] = [
  node('node-a', 'zone-a', '192.168.0.10'),
  node('node-b', 'zone-b', '192.168.0.11'),
  svc('web', { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 'http' }], trafficDistribution: 'PreferClose' }),
  svc('api', { type: 'NodePort', clusterIP: '10.96.0.11', externalTrafficPolicy: 'Local', ports: [{ name: 'https', port: 443, targetPort: 8443, nodePort: 30443 }, { name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP', nodePort: 30090 }] }),
  svc('db', { clusterIP: 'None', publishNotReadyAddresses: true, ports: [{ name: 'pg', port: 5432 }] }),
  svc('dns', { type: 'ClusterIP', clusterIP: '10.96.0.53', ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' }, { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 'dns' }] }),
  pod('web-0', 'web', 'node-a', '10.244.1.10', { ports: [{ name: 'http', containerPort: 8080 }] }),
  pod('web-1', 'web', 'node-b', '10.244.2.10', { ports: [{ name: 'http', containerPort: 8081 }] }),
  pod('web-2', 'web', 'node-a', '10.244.1.11', { ready: false, ports: [{ name: 'http', containerPort: 8080 }] }),
  pod('web-3', 'web', 'node-b', '10.244.2.11', { terminating: true, ports: [{ name: 'http', containerPort: 8080 }] }),
  pod('api-0', 'api', 'node-a', '10.244.1.20', { ports: [{ name: 'metrics', containerPort: 9100 }] }),
  pod('api-1', 'api', 'node-b', '10.244.2.20'),
  pod('api-2', 'api', 'node-a', '10.244.1.21', { phase: 'Failed' }),
  pod('api-3', 'api', 'node-b', '10.244.2.21', { terminating: true, ready: false }),
  pod('db-0', 'db', 'node-a', '10.244.1.30', { ready: false, hostname: 'db-0', subdomain: 'db' }),
  pod('db-1', 'db', 'node-b', '10.244.2.30', { hostname: 'db-1', subdomain: 'db' }),
  pod('dns-0', 'dns', 'node-a', '10.244.1.53', { ports: [{ name: 'dns', containerPort: 1053, protocol: 'UDP' }], secondContainerPorts: [{ name: 'dns', containerPort: 1054, protocol: 'TCP' }] }),
  pod('dns-1', 'dns', 'node-b', '10.244.2.53', { ports: [{ name: 'dns', containerPort: 1053, protocol: 'UDP' }] }),
];


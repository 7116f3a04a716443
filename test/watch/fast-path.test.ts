/**
 * kpc watch's fast paths (src/watch/iptables.ts, nftables.ts, ipvs.ts) at a size where it matters: a generated
 * cluster (bench/gen.ts, in large cluster mode: over 1,000 endpoints), then a seeded stream of
 * single-object changes of every kind the fast path handles — endpoint churn, traffic-policy
 * and type changes, new and deleted Services and slices, a slice moved to another Service, a
 * slice with hundreds of endpoints (and its deletion, crossing the 1,000-endpoint threshold:
 * a rebuild), Node label changes (this node's: a rebuild; another's: nothing to rebuild), Node
 * address and annotation changes, bare objects, a Service sharing another's local
 * endpoint (nftables: an element with two writers, a rebuild), two Services sharing an external
 * IP and port (IPVS: a virtual server with two writers, a rebuild), a selector-less Service's
 * legacy Endpoints (mirrored, on the fast path). After every event the watch's delta
 * must be what kpc compile --previous prints for the test's own object set (compile run in
 * process: it is the compile command's code, not the watch engine's).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { generateCluster, prng } from '../../bench/gen.js';
import { runKpc } from '../helpers/run-kpc.js';
import { expectedSteps, parseSteps, type Obj } from './replay.js';

const dir = mkdtempSync(join(tmpdir(), 'kpc-watch-fast-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NODE = ['--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9'];

type Any = Record<string, any>;

/** The seeded stream: each event a change to a copy of the current object. */
function stream(objects: Any[], count: number, seed: number): string {
  const rand = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
  const services = objects.filter((o) => o.kind === 'Service');
  const slices = objects.filter((o) => o.kind === 'EndpointSlice');
  const nodes = objects.filter((o) => o.kind === 'Node');
  const out: string[] = [];
  let ip = (10 << 24) | (250 << 16);
  const nextIP = () => {
    ip++;
    return `${(ip >>> 24) & 255}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
  };
  let extra = 0;
  const emit = (type: string | undefined, o: Any) => out.push(JSON.stringify(type ? { type, object: o } : o));
  for (let n = 0; n < count; n++) {
    const r = rand();
    if (n === 20) {
      // A slice of 400 endpoints for a new Service: past the threshold or back under it, a rebuild.
      const name = 'big';
      const svc = clone(services[0]!);
      svc.metadata = { name, namespace: 'ns-0' };
      svc.spec = { ...svc.spec, type: 'ClusterIP', clusterIP: '10.99.0.1', clusterIPs: ['10.99.0.1'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] };
      delete svc.spec.externalTrafficPolicy;
      delete svc.spec.healthCheckNodePort;
      delete svc.spec.allocateLoadBalancerNodePorts;
      delete svc.status;
      emit('ADDED', svc);
      const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'big-1', namespace: 'ns-0', labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: Array.from({ length: 400 }, (_, i) => ({ addresses: [nextIP()], conditions: { ready: true }, nodeName: `node-${i % 3}` })) };
      emit('ADDED', slice);
      continue;
    }
    if (n === 30) {
      // Two Services with the same external IP and port: one IPVS virtual server with two
      // writers (the later one in sync order has it), so a change to either rebuilds in IPVS mode.
      const mk = (name: string, clusterIP: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'ns-2' }, spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], externalIPs: ['192.0.2.77'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } });
      const slice = (name: string) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: 'ns-2', labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: [{ addresses: [nextIP()], conditions: { ready: true }, nodeName: 'node-1' }] });
      emit('ADDED', mk('shared-a', '10.96.250.1'));
      emit('ADDED', slice('shared-a'));
      emit('ADDED', mk('shared-b', '10.96.250.2'));
      emit('ADDED', slice('shared-b'));
      emit('MODIFIED', slice('shared-a'));
      emit('MODIFIED', slice('shared-b'));
      emit('DELETED', mk('shared-b', '10.96.250.2'));
      emit('MODIFIED', slice('shared-a'));
      continue;
    }
    if (n === 35) {
      // A Service without a selector and its legacy Endpoints (mirrored into slices): address
      // churn, a not-ready address, then a slice of its own (which the Endpoints then give way
      // to), the slice gone again, and the Endpoints gone.
      const name = 'legacy';
      emit('ADDED', { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'ns-3' }, spec: { type: 'ClusterIP', clusterIP: '10.96.251.1', clusterIPs: ['10.96.251.1'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } });
      const ports = [{ name: 'http', port: 8080, protocol: 'TCP' }];
      const eps = (addresses: Any[], notReady: Any[] = []) => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: 'ns-3' }, subsets: [{ addresses, ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}), ports }] });
      const a = { ip: nextIP(), nodeName: 'node-0' };
      const b = { ip: nextIP(), nodeName: 'node-1' };
      emit('ADDED', eps([a]));
      emit('MODIFIED', eps([a, b]));
      emit('MODIFIED', eps([b], [a]));
      emit(undefined, eps([a, b, { ip: nextIP(), nodeName: 'node-2' }]));
      const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-own`, namespace: 'ns-3', labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', ports, endpoints: [{ addresses: [nextIP()], conditions: { ready: true }, nodeName: 'node-0' }] };
      emit('ADDED', slice);
      emit('MODIFIED', eps([a]));
      emit('DELETED', slice);
      emit('DELETED', eps([a]));
      continue;
    }
    if (n === 45) {
      // Node changes the IR does not depend on: another node's address, this node's annotation
      // (no rebuild: the same settings); then this node's own address (node-port addresses: a rebuild) and back.
      const other = clone(nodes.find((x) => x.metadata.name !== 'node-0')!);
      other.status.addresses[0].address = '192.0.2.201';
      emit('MODIFIED', other);
      const self = nodes.find((x) => x.metadata.name === 'node-0')!;
      emit('MODIFIED', { ...clone(self), metadata: { ...clone(self.metadata), annotations: { 'example.com/heartbeat': String(n) } } });
      const moved = clone(self);
      moved.status.addresses[0].address = '192.0.2.200';
      emit('MODIFIED', moved);
      emit('MODIFIED', clone(self));
      continue;
    }
    if (n === 40) {
      out.push(JSON.stringify({ type: 'DELETED', object: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'big-1', namespace: 'ns-0', labels: { 'kubernetes.io/service-name': 'big' } }, addressType: 'IPv4', endpoints: [] } }));
      continue;
    }
    if (r < 0.45) {
      const s = pick(slices);
      if (s.endpoints.length === 0) continue;
      const e = pick(s.endpoints as Any[]);
      if (rand() < 0.5) e.conditions = { ready: e.conditions.ready === false, serving: e.conditions.ready === false, terminating: false };
      else e.addresses = [nextIP()];
      emit('MODIFIED', clone(s));
    } else if (r < 0.6) {
      const s = pick(services);
      s.spec.internalTrafficPolicy = s.spec.internalTrafficPolicy === 'Local' ? 'Cluster' : 'Local';
      emit(rand() < 0.2 ? undefined : 'MODIFIED', clone(s));
    } else if (r < 0.68) {
      // ClusterIP <-> NodePort without node ports of its own (the API server would assign them; here 32000+).
      const s = pick(services.filter((x) => x.spec.type === 'ClusterIP' && !x.spec.externalIPs));
      if (!s) continue;
      const to: Any = clone(s);
      to.spec.type = 'NodePort';
      to.spec.externalTrafficPolicy = 'Cluster';
      to.spec.ports = to.spec.ports.map((p: Any, i: number) => ({ ...p, nodePort: 32500 + (extra++ % 200) * 1 + i * 0 }));
      emit('MODIFIED', to);
      emit('MODIFIED', clone(s));
    } else if (r < 0.76) {
      // A new Service and its slice, then (sometimes) gone again.
      const name = `new-${n}`;
      const addr = `10.98.${n >> 8}.${n & 255}`;
      const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'ns-1' }, spec: { type: 'ClusterIP', clusterIP: addr, clusterIPs: [addr], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } };
      const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: 'ns-1', labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: [{ addresses: [nextIP()], conditions: { ready: true }, nodeName: 'node-0' }, { addresses: [nextIP()], conditions: { ready: true }, nodeName: 'node-1' }] };
      emit('ADDED', slice);
      emit('ADDED', svc);
      if (rand() < 0.5) {
        emit('DELETED', svc);
        emit('DELETED', slice);
      }
    } else if (r < 0.84) {
      // A slice moved to another Service of its namespace, and back.
      const s = pick(slices);
      const others = services.filter((x) => x.metadata.namespace === s.metadata.namespace && x.metadata.name !== s.metadata.labels['kubernetes.io/service-name']);
      if (others.length === 0) continue;
      const moved = clone(s);
      moved.metadata.labels['kubernetes.io/service-name'] = pick(others).metadata.name;
      emit('MODIFIED', moved);
      emit('MODIFIED', clone(s));
    } else if (r < 0.9) {
      const node = pick(nodes);
      node.metadata.labels['topology.kubernetes.io/zone'] = pick(['zone-a', 'zone-b', 'zone-c']);
      emit('MODIFIED', clone(node));
    } else if (r < 0.94) {
      // A new Service sharing a local endpoint (address and port) of another one: nftables'
      // hairpin element then has two writers (the fast path must compare whole states).
      const local = slices.filter((x) => x.endpoints.some((e: Any) => e.nodeName === 'node-0'));
      if (local.length === 0) continue;
      const s = pick(local);
      const ep = (s.endpoints as Any[]).find((e) => e.nodeName === 'node-0')!;
      const name = `twin-${n}`;
      const addr = `10.97.${n >> 8}.${n & 255}`;
      const port = s.ports[0];
      emit('ADDED', { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: s.metadata.namespace }, spec: { type: 'ClusterIP', clusterIP: addr, clusterIPs: [addr], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: port.name, port: 80, protocol: port.protocol, targetPort: port.port }], sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } });
      emit('ADDED', { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: s.metadata.namespace, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', ports: [port], endpoints: [clone(ep)] });
      // and the original endpoint goes not ready while the twin still has it
      const e2 = clone(s);
      for (const e of e2.endpoints as Any[]) if (e.addresses[0] === ep.addresses[0]) e.conditions = { ready: false, serving: false, terminating: false };
      emit('MODIFIED', e2);
      emit('MODIFIED', clone(s));
    } else {
      // A Service deleted and added back.
      const s = pick(services);
      emit('DELETED', clone(s));
      emit('ADDED', clone(s));
    }
  }
  return out.join('\n') + '\n';
}

it.each(['iptables', 'nftables', 'ipvs'])('the %s fast path gives compile --previous\'s bytes after every event (generated cluster, crossing large cluster mode and back)', { timeout: 300_000 }, async (mode) => {
  const objects = generateCluster({ services: 60, seed: 11 }) as Any[];
  const endpoints = objects.filter((o) => o.kind === 'EndpointSlice').reduce((n, s) => n + s.endpoints.length, 0);
  // Near the 1,000-endpoint threshold, so the 400-endpoint slice crosses it.
  expect(endpoints).toBeGreaterThan(600);
  expect(endpoints).toBeLessThan(1000);
  const initialPath = join(dir, 'cluster.json');
  writeFileSync(initialPath, objects.map((o) => JSON.stringify(o)).join('\n'));
  const eventsPath = join(dir, 'events.json');
  writeFileSync(eventsPath, stream(JSON.parse(JSON.stringify(objects)), 70, 5));

  const flags = ['--proxy-mode', mode];
  const watch = await runKpc(['watch', ...flags, ...NODE, '-f', initialPath, '--events', eventsPath]);
  expect(watch.stderr).toContain(`${mode} incremental path`);
  const steps = parseSteps(watch.stdout);
  const expected = await expectedSteps(flags, { events: eventsPath, initial: objects as Obj[], run: (args) => runKpc(args), nodeFlags: NODE });
  const first = steps.get(0);
  expect(first?.kind === 'delta' ? first.text : undefined).toBe(expected.initial);
  let deltas = 0;
  for (const e of expected.steps) {
    const got = steps.get(e.n);
    if (e.rejected) {
      expect(got, `event ${e.n}: ${e.compileRefusal?.stderr}`).toEqual({ kind: 'rejected' });
      continue;
    }
    if (e.full === e.previousFull) {
      expect(got, `event ${e.n}`).toEqual({ kind: 'no change', label: e.label });
      continue;
    }
    expect(got?.kind, `event ${e.n} ${e.label}`).toBe('delta');
    expect((got as { text: string }).text, `event ${e.n} ${e.label}`).toBe(e.delta);
    deltas++;
  }
  expect(watch.code, watch.stderr).toBe(expected.steps.some((s) => s.rejected) ? 2 : 0);
  expect(deltas).toBeGreaterThan(60);
  // The fast path did the work: only the changes it hands on (Node labels, the 400-endpoint
  // slice crossing large cluster mode, shared elements or virtual servers) rebuilt the IR.
  const counts = /watch: end of the changes: (\d+) computed on the incremental path, (\d+) by a rebuild of the IR/.exec(watch.stderr);
  expect(counts, watch.stderr).not.toBeNull();
  const [incremental, rebuilt] = [Number(counts![1]), Number(counts![2])];
  expect(incremental).toBeGreaterThan(4 * rebuilt);
  expect(incremental).toBeGreaterThan(50);
  // Node changes the build does not depend on (another node's, this one's annotation) rebuilt nothing.
  expect(Number(/(\d+) Node changes the IR does not depend on/.exec(watch.stderr)?.[1])).toBeGreaterThan(1);
});

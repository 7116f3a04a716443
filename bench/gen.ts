/**
 * A seeded generator of realistic clusters, as manifests `kubectl get -o yaml|json` prints
 * (`kind: List`). Same options and seed → same bytes.
 *
 *   node dist/bench/gen.js --services 20000 --seed 1 --format json > cluster.json
 *
 * Shape (per Service, drawn from the seeded PRNG):
 *   type: ~80% ClusterIP, ~12% NodePort, ~5% LoadBalancer (half with source ranges),
 *         ~3% ClusterIP with externalIPs
 *   node ports: the default range 30000-32767 holds 2,768 ports, fewer than ~0.24 per Service
 *         needs beyond ~10,000 Services. Past that, a Service that wants node ports gets them
 *         with a probability scaled to fit the range (a second PRNG stream, so sizes that fit
 *         are unchanged), spread over all Services rather than the first ones. Without: a
 *         NodePort Service becomes ClusterIP, and a LoadBalancer keeps its type, load-balancer
 *         IP and source ranges with `allocateLoadBalancerNodePorts: false` and
 *         externalTrafficPolicy Cluster (Local would need a health-check node port), so the
 *         LoadBalancer share stays ~5% at every size
 *   externalTrafficPolicy Local on half of the NodePort/LoadBalancer Services that have node ports
 *   ClientIP affinity ~5%; multi-port ~15%; UDP ~5% (DNS-like TCP+UDP pairs among them)
 *   endpoints: log-normal, mean ~10, a few with hundreds (capped at 1000), in slices of at
 *   most 100 as the EndpointSlice controller cuts them; ~2% terminating; spread over nodes
 *   Nodes: max(3, S/100) across three zones; the node to compile for is `node-0`.
 */

import { closeSync, openSync, writeSync } from 'node:fs';

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off);
}

export interface GenOptions {
  services: number;
  seed: number;
  /** Change one Service (the middle one) so two runs can be diffed. */
  variant?: 'base' | 'one-changed';
}

/** mulberry32: small, fast, and the same everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/** The default --service-node-port-range, 30000-32767. */
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;
const NODE_PORT_BUDGET = NODE_PORT_MAX - NODE_PORT_MIN + 1;
/**
 * Node ports one Service needs on average when every NodePort/LoadBalancer Service gets them:
 * 17% of Services × ~1.26 ports each + a health-check port for the 2.5% that are LoadBalancer
 * with externalTrafficPolicy Local = ~0.24.
 */
const NODE_PORT_DEMAND = 0.24;

function ipv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

const CLUSTER_IP_BASE = (10 << 24) | (96 << 16); // 10.96.0.0/12
const POD_IP_BASE = (10 << 24) | (128 << 16); // 10.128.0.0/9: room for millions of pods
const NODE_IP_BASE = (192 << 24) | (168 << 16); // 192.168.0.0/16
const LB_IP_BASE = (198 << 24) | (18 << 16); // 198.18.0.0/15 (benchmark range)
const EXT_IP_BASE = (198 << 24) | (19 << 16);

/** Log-normal endpoint count with mean about 10 and a long tail. */
function endpointCount(rand: () => number): number {
  const u1 = Math.max(rand(), 1e-12);
  const u2 = rand();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  const n = Math.round(Math.exp(1.75 + 1.0 * z));
  return Math.max(1, Math.min(1000, n));
}

export function generateCluster(opts: GenOptions): unknown[] {
  const rand = prng(opts.seed);
  const nodes = Math.max(3, Math.ceil(opts.services / 100));
  const namespaces = Math.max(1, Math.ceil(opts.services / 40));
  const objects: unknown[] = [];
  for (let i = 0; i < nodes; i++) {
    objects.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `node-${i}`, labels: { 'kubernetes.io/hostname': `node-${i}`, 'topology.kubernetes.io/zone': ZONES[i % 3] } },
      spec: { podCIDR: `10.${128 + ((i >> 8) & 127)}.${i & 255}.0/24`, podCIDRs: [`10.${128 + ((i >> 8) & 127)}.${i & 255}.0/24`] },
      status: { addresses: [{ type: 'InternalIP', address: ipv4(NODE_IP_BASE + 10 + i) }, { type: 'Hostname', address: `node-${i}` }] },
    });
  }
  let nextNodePort = NODE_PORT_MIN;
  // Which node-port-wanting Services get node ports (see the header): its own stream, so the
  // main one (and every size whose node ports fit) stays as it was.
  const ticketRand = prng((opts.seed ^ 0x5bd1e995) >>> 0);
  const ticketShare = Math.min(1, (NODE_PORT_BUDGET * 0.9) / (opts.services * NODE_PORT_DEMAND));
  let nextPodIP = POD_IP_BASE + 2;
  const changed = opts.variant === 'one-changed' ? Math.floor(opts.services / 2) : -1;
  for (let s = 0; s < opts.services; s++) {
    const ns = `ns-${s % namespaces}`;
    const name = `svc-${s}`;
    const r = rand();
    let type = r < 0.8 ? 'ClusterIP' : r < 0.92 ? 'NodePort' : r < 0.97 ? 'LoadBalancer' : 'ClusterIP-ext';
    const multi = rand() < 0.15;
    const udp = rand() < 0.05;
    const affinity = rand() < 0.05;
    const local = rand() < 0.5;
    const ranges = rand() < 0.5;
    const ports: Array<Record<string, unknown>> = [];
    const portCount = udp ? 2 : multi ? 2 + Math.floor(rand() * 2) : 1;
    const wantsNodePorts = type === 'NodePort' || type === 'LoadBalancer';
    // Ports + a possible health-check port must fit in the range.
    const nodePorts =
      wantsNodePorts && (ticketShare >= 1 || ticketRand() < ticketShare) && nextNodePort + portCount + 1 <= NODE_PORT_MAX + 1;
    if (wantsNodePorts && !nodePorts && type === 'NodePort') type = 'ClusterIP';
    for (let p = 0; p < portCount; p++) {
      const port: Record<string, unknown> = udp
        ? { name: p === 0 ? 'dns' : 'dns-tcp', port: 53, protocol: p === 0 ? 'UDP' : 'TCP', targetPort: 5353 }
        : { name: portCount > 1 ? `p${8080 + p}` : 'http', port: 80 + p, protocol: 'TCP', targetPort: 8080 + p };
      if (nodePorts) port.nodePort = nextNodePort++;
      ports.push(port);
    }
    const clusterIP = ipv4(CLUSTER_IP_BASE + 10 + s);
    const spec: Record<string, unknown> = {
      type: type === 'ClusterIP-ext' ? 'ClusterIP' : type,
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      selector: { app: name },
      ports,
      sessionAffinity: affinity ? 'ClientIP' : 'None',
      internalTrafficPolicy: 'Cluster',
    };
    if (affinity) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
    if (type !== 'ClusterIP') spec.externalTrafficPolicy = local && nodePorts ? 'Local' : 'Cluster';
    if (type === 'ClusterIP-ext') spec.externalIPs = [ipv4(EXT_IP_BASE + s)];
    if (type === 'LoadBalancer') {
      spec.allocateLoadBalancerNodePorts = nodePorts;
      if (ranges) spec.loadBalancerSourceRanges = ['203.0.113.0/24', '198.51.100.0/24'];
      if (spec.externalTrafficPolicy === 'Local') spec.healthCheckNodePort = nextNodePort++;
    }
    if (s === changed) (ports[0] as Record<string, unknown>).port = 8443;
    const service: Record<string, unknown> = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns, labels: { app: name } },
      spec,
    };
    if (type === 'LoadBalancer') service.status = { loadBalancer: { ingress: [{ ip: ipv4(LB_IP_BASE + s), ipMode: 'VIP' }] } };
    else service.status = { loadBalancer: {} };
    objects.push(service);

    const count = endpointCount(rand);
    const endpoints: unknown[] = [];
    for (let e = 0; e < count; e++) {
      const node = Math.floor(rand() * nodes);
      const terminating = rand() < 0.02;
      endpoints.push({
        addresses: [ipv4(nextPodIP++)],
        conditions: { ready: !terminating, serving: true, terminating },
        nodeName: `node-${node}`,
        zone: ZONES[node % 3],
        targetRef: { kind: 'Pod', namespace: ns, name: `${name}-${e}` },
      });
    }
    const slicePorts = ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol }));
    for (let k = 0; k * 100 < endpoints.length; k++) {
      objects.push({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${name}-${k.toString(36).padStart(5, 'x')}`,
          namespace: ns,
          labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
        },
        addressType: 'IPv4',
        ports: slicePorts,
        endpoints: endpoints.slice(k * 100, k * 100 + 100),
      });
    }
  }
  return objects;
}

/** A node printed with an anchor (`&name`) before it. */
class Anchored {
  constructor(
    readonly name: string,
    readonly value: unknown,
  ) {}
}

/** An alias (`*name`) printed in place of a node. */
class Alias {
  constructor(readonly name: string) {}
}

/** YAML as `kubectl get -o yaml` prints a List (block style, two-space indent). */
function toYAML(value: unknown, indent = ''): string {
  if (value instanceof Anchored) return ` &${value.name}${toYAML(value.value, indent)}`;
  if (value instanceof Alias) return ` *${value.name}\n`;
  if (Array.isArray(value)) {
    if (value.length === 0) return ' []\n';
    let out = '\n';
    for (const item of value) {
      const body = toYAML(item, `${indent}  `);
      out += `${indent}- ${body.startsWith('\n') ? body.slice(indent.length + 3) : body.trimStart()}`;
    }
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return ' {}\n';
    let out = '\n';
    for (const [k, v] of entries) out += `${indent}${yamlKey(k)}:${toYAML(v, `${indent}  `)}`;
    return out;
  }
  return ` ${yamlScalar(value)}\n`;
}

function yamlKey(k: string): string {
  return /^[A-Za-z0-9_.\/-]+$/.test(k) ? k : JSON.stringify(k);
}

function yamlScalar(v: unknown): string {
  if (typeof v === 'string') return /^[A-Za-z][A-Za-z0-9_.\/-]*$/.test(v) && !/^(true|false|null|yes|no|on|off|y|n)$/i.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

export type ClusterFormat = 'json' | 'json-compact' | 'yaml' | 'yaml-anchors';

/** How many aliases the yaml-anchors format places, and at most how many per anchor. */
const YAML_ALIASES = 112;
const YAML_ALIASES_PER_ANCHOR = 8;

/**
 * The yaml format with some Services sharing their port list through an anchor and aliases,
 * as hand-written manifests do: the first Service with a given list anchors it (`ports: &ports-N`)
 * and later Services with the same list name it (`ports: *ports-N`), up to 8 per anchor (the
 * alias budget of a document is 100 per anchor), 112 aliases in all, the first ones found in
 * the List's order. The same cluster as the other formats.
 */
function withSharedPorts(objects: unknown[]): unknown[] {
  const first = new Map<string, number>();
  const uses = new Map<number, number>();
  const aliasOf = new Map<number, number>();
  objects.forEach((obj, i) => {
    const o = obj as { kind?: string; spec?: { ports?: unknown } };
    if (o.kind !== 'Service' || !Array.isArray(o.spec?.ports) || aliasOf.size >= YAML_ALIASES) return;
    const key = JSON.stringify(o.spec.ports);
    const f = first.get(key);
    if (f === undefined || (uses.get(f) ?? 0) >= YAML_ALIASES_PER_ANCHOR) {
      first.set(key, i);
      return;
    }
    uses.set(f, (uses.get(f) ?? 0) + 1);
    aliasOf.set(i, f);
  });
  const anchorName = (i: number) => `ports-${i}`;
  return objects.map((obj, i) => {
    const alias = aliasOf.get(i);
    if (alias === undefined && !uses.has(i)) return obj;
    const o = obj as { spec: Record<string, unknown> };
    const ports = alias !== undefined ? new Alias(anchorName(alias)) : new Anchored(anchorName(i), o.spec.ports);
    return { ...o, spec: { ...o.spec, ports } };
  });
}

/**
 * The List as text chunks, one per item, so clusters larger than a JavaScript string
 * (about 512 MiB) can still be written. JSON is indented like `kubectl get -o json`;
 * json-compact is the same List on one line (`jq -c`, the API's wire form).
 */
export function* renderCluster(objects: unknown[], format: ClusterFormat): Generator<string> {
  if (format === 'json-compact') {
    yield '{"apiVersion":"v1","items":[';
    for (let i = 0; i < objects.length; i++) yield `${i > 0 ? ',' : ''}${JSON.stringify(objects[i])}`;
    yield '],"kind":"List","metadata":{"resourceVersion":""}}';
    return;
  }
  if (format === 'json') {
    yield '{\n    "apiVersion": "v1",\n    "items": [\n';
    for (let i = 0; i < objects.length; i++) {
      const item = JSON.stringify(objects[i], null, 4).replace(/\n/g, '\n        ');
      yield `        ${item}${i < objects.length - 1 ? ',' : ''}\n`;
    }
    yield '    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n';
    return;
  }
  yield 'apiVersion: v1\nitems:\n';
  for (const item of format === 'yaml-anchors' ? withSharedPorts(objects) : objects) yield toYAML([item]).slice(1);
  yield 'kind: List\nmetadata:\n  resourceVersion: ""\n';
}

function main(argv: string[]): void {
  const arg = (name: string, dflt: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
  };
  const services = Number(arg('services', '1000'));
  const seed = Number(arg('seed', '1'));
  const format = arg('format', 'json') as ClusterFormat;
  const variant = arg('variant', 'base') as 'base' | 'one-changed';
  const out = arg('output', '-');
  const fd = out === '-' ? 1 : openSync(out, 'w');
  let buffer = '';
  for (const chunk of renderCluster(generateCluster({ services, seed, variant }), format)) {
    buffer += chunk;
    if (buffer.length > 1 << 20) {
      writeAll(fd, buffer);
      buffer = '';
    }
  }
  writeAll(fd, buffer);
  if (fd !== 1) closeSync(fd);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) main(process.argv.slice(2));

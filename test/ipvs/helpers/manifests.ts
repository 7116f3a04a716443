/**
 * A small stand-in for kpc's manifest reader, for the IPVS tests only: YAML/JSON files →
 * the typed, API-defaulted objects of src/parser/k8s/types.ts. It applies just the defaults the
 * golden manifests rely on and does no validation; the real reader (src/parser/load.ts) is
 * used instead whenever it is present (see compile-case.ts).
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Endpoint, EndpointPort, EndpointSlice, LoadBalancerIngress, Node, ObjectMeta, Protocol, Service, ServicePort } from '../../../src/parser/k8s/types.js';

type Obj = Record<string, unknown>;

const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const strs = (v: unknown): string[] => arr(v).map((x) => String(x));
const num = (v: unknown, d = 0): number => (typeof v === 'number' ? v : d);
const optBool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

function meta(o: Obj, namespaced: boolean): ObjectMeta {
  const m = obj(o.metadata);
  return {
    name: str(m.name),
    namespace: namespaced ? str(m.namespace, 'default') : '',
    labels: Object.fromEntries(Object.entries(obj(m.labels)).map(([k, v]) => [k, String(v)])),
    annotations: Object.fromEntries(Object.entries(obj(m.annotations)).map(([k, v]) => [k, String(v)])),
  };
}

function toService(o: Obj): Service {
  const spec = obj(o.spec);
  const type = str(spec.type, 'ClusterIP') as Service['spec']['type'];
  const clusterIP = str(spec.clusterIP);
  const externalIPs = strs(spec.externalIPs);
  const ports: ServicePort[] = arr(spec.ports).map((p) => {
    const q = obj(p);
    const port = num(q.port);
    return { name: str(q.name), protocol: str(q.protocol, 'TCP') as Protocol, port, targetPort: (q.targetPort as number | string | undefined) ?? port, nodePort: num(q.nodePort) };
  });
  const externallyAccessible = type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && externalIPs.length > 0);
  const sessionAffinity = str(spec.sessionAffinity, 'None') as 'None' | 'ClientIP';
  const ingress: LoadBalancerIngress[] = arr(obj(obj(o.status).loadBalancer).ingress).map((i) => {
    const q = obj(i);
    const out: LoadBalancerIngress = {};
    if (typeof q.ip === 'string') {
      out.ip = q.ip;
      out.ipMode = (str(q.ipMode) || 'VIP') as 'VIP' | 'Proxy';
    }
    if (typeof q.hostname === 'string') out.hostname = q.hostname;
    return out;
  });
  const svc: Service = {
    kind: 'Service',
    metadata: meta(o, true),
    spec: {
      type,
      clusterIP,
      clusterIPs: spec.clusterIPs !== undefined ? strs(spec.clusterIPs) : clusterIP ? [clusterIP] : [],
      ipFamilies: strs(spec.ipFamilies) as Service['spec']['ipFamilies'],
      ports,
      externalIPs,
      loadBalancerSourceRanges: strs(spec.loadBalancerSourceRanges),
      sessionAffinity,
      healthCheckNodePort: num(spec.healthCheckNodePort),
      internalTrafficPolicy: (str(spec.internalTrafficPolicy) || 'Cluster') as 'Cluster' | 'Local',
    },
    status: { loadBalancerIngress: ingress },
  };
  if (externallyAccessible) svc.spec.externalTrafficPolicy = (str(spec.externalTrafficPolicy) || 'Cluster') as 'Cluster' | 'Local';
  if (sessionAffinity === 'ClientIP') svc.spec.sessionAffinityTimeoutSeconds = num(obj(obj(spec.sessionAffinityConfig).clientIP).timeoutSeconds, 10800);
  return svc;
}

function toSlice(o: Obj): EndpointSlice {
  const endpoints: Endpoint[] = arr(o.endpoints).map((e) => {
    const q = obj(e);
    const c = obj(q.conditions);
    const conditions: Endpoint['conditions'] = {};
    const ready = optBool(c.ready);
    const serving = optBool(c.serving);
    const terminating = optBool(c.terminating);
    if (ready !== undefined) conditions.ready = ready;
    if (serving !== undefined) conditions.serving = serving;
    if (terminating !== undefined) conditions.terminating = terminating;
    const out: Endpoint = { addresses: strs(q.addresses), conditions };
    if (typeof q.nodeName === 'string') out.nodeName = q.nodeName;
    if (typeof q.zone === 'string') out.zone = q.zone;
    if (q.hints !== undefined) {
      const h = obj(q.hints);
      out.hints = { forZones: arr(h.forZones).map((z) => str(obj(z).name)), forNodes: arr(h.forNodes).map((n) => str(obj(n).name)) };
    }
    return out;
  });
  const ports: EndpointPort[] = arr(o.ports).map((p) => {
    const q = obj(p);
    const out: EndpointPort = { name: str(q.name), protocol: str(q.protocol, 'TCP') as Protocol };
    if (typeof q.port === 'number') out.port = q.port;
    return out;
  });
  return { kind: 'EndpointSlice', metadata: meta(o, true), addressType: str(o.addressType) as EndpointSlice['addressType'], endpoints, ports };
}

function toNode(o: Obj): Node {
  const spec = obj(o.spec);
  const node: Node = {
    kind: 'Node',
    metadata: meta(o, false),
    spec: { podCIDRs: strs(spec.podCIDRs) },
    status: { addresses: arr(obj(o.status).addresses).map((a) => ({ type: str(obj(a).type) as Node['status']['addresses'][number]['type'], address: str(obj(a).address) })) },
  };
  if (typeof spec.podCIDR === 'string') node.spec.podCIDR = spec.podCIDR;
  return node;
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...files(full));
    else if (/\.(ya?ml|json)$/.test(name)) out.push(full);
  }
  return out;
}

export interface Manifests {
  services: Service[];
  slices: EndpointSlice[];
  nodes: Node[];
}

export function readManifests(dir: string): Manifests {
  const out: Manifests = { services: [], slices: [], nodes: [] };
  const visit = (o: Obj) => {
    const kind = str(o.kind);
    if (kind.endsWith('List') && Array.isArray(o.items)) o.items.forEach((i) => visit(obj(i)));
    else if (kind === 'Service') out.services.push(toService(o));
    else if (kind === 'EndpointSlice') out.slices.push(toSlice(o));
    else if (kind === 'Node') out.nodes.push(toNode(o));
  };
  for (const f of files(dir)) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8')) as unknown as { toJS(): unknown }[]) {
      const v = doc.toJS();
      if (v !== null && typeof v === 'object') visit(v as Obj);
    }
  }
  return out;
}

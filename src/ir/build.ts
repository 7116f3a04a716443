/**
 * Build the IR for one node and one IP family from validated Kubernetes objects.
 *
 * This mirrors what kube-proxy's change trackers hold before a sync: the service map
 * (pkg/proxy/servicechangetracker.go, serviceport.go) and the endpoints map
 * (pkg/proxy/endpointslicecache.go). Where kube-proxy iterates a Go map, kpc sorts.
 */

import { SERVICE_NAME_LABEL } from '../parser/k8s/model/endpoint-slice.js';
import type { EndpointSlice, Service } from '../parser/k8s/types.js';
import { formatCIDR, formatIP, isCanonicalIPv4, parseCIDR, parseIP, type IPFamily } from '../net/ip.js';
import type { Endpoint, NodeFacts, ProxyIR, ProxyKnobs, ServicePort } from './model.js';
import { compareStrings } from '../go/strings.js';
import { goTrimSpace } from '../go/strings.js';
import type { ReleaseBehaviour } from '../releases/index.js';

export interface ClusterObjects {
  services: readonly Service[];
  /** EndpointSlices, including those mirrored from legacy Endpoints. */
  slices: readonly EndpointSlice[];
}

export interface IRContext {
  family: IPFamily;
  node: NodeFacts;
  knobs: ProxyKnobs;
  /** How the release's kube-proxy reads the objects (which it ignores, duplicate endpoints). */
  behaviour: ReleaseBehaviour;
  /** The AllowServiceExternalIPs gate (v1.36+; always on before): off, externalIPs are ignored. */
  serviceExternalIPs: boolean;
}

export function buildIR(objects: ClusterObjects, ctx: IRContext): ProxyIR {
  const endpointsByPort = buildEndpointsMap(objects.slices, ctx);
  const keyed: Array<{ key: string; sp: ServicePort }> = [];
  for (const svc of objects.services) {
    for (const sp of serviceToServicePorts(svc, ctx)) {
      const key = portKey(sp.namespace, sp.name, sp.portName, sp.protocol);
      sp.endpoints = endpointsByPort.get(key) ?? [];
      keyed.push({ key, sp });
    }
  }
  // One string comparison per step (see portKey), not three strings built per comparison.
  keyed.sort((a, b) => compareStrings(a.key, b.key));
  return { family: ctx.family, node: ctx.node, knobs: ctx.knobs, servicePorts: keyed.map((k) => k.sp) };
}

/**
 * The identity of a service port, and its sort key: kpc's fixed order for what kube-proxy
 * visits in map order. By the `ns/name` string (the key kube-proxy's own test normaliser
 * sorts by), then port name, then protocol, joined by NUL (which no Kubernetes name contains
 * and which sorts first, so comparing keys compares the parts in turn).
 */
export function portKey(namespace: string, name: string, portName: string, protocol: string): string {
  return `${namespace}/${name}\u0000${portName}\u0000${protocol}`;
}

export function servicePortName(namespace: string, name: string, portName: string): string {
  return portName === '' ? `${namespace}/${name}` : `${namespace}/${name}:${portName}`;
}

// ---------------------------------------------------------------------------------------
// Services → service ports (serviceToServiceMap / newBaseServiceInfo)

/** The canonical text of an address of this family; undefined for another family or no address. */
function ipOfFamily(text: string, family: IPFamily): string | undefined {
  // A canonical dotted quad is its own canonical text: no parse into bytes and print back.
  if (isCanonicalIPv4(text)) return family === 'IPv4' ? text : undefined;
  const p = parseIP(text);
  return p && p.ip.family === family ? formatIP(p.ip) : undefined;
}

function clusterIPOfFamily(svc: Service, family: IPFamily): string | undefined {
  if (svc.spec.clusterIPs.length === 0) return ipOfFamily(svc.spec.clusterIP, family);
  for (const text of svc.spec.clusterIPs) {
    const ip = ipOfFamily(text, family);
    if (ip !== undefined) return ip;
  }
  return undefined;
}

function ipsOfFamily(texts: readonly string[], family: IPFamily): string[] {
  const out: string[] = [];
  for (const t of texts) {
    const ip = ipOfFamily(t, family);
    if (ip !== undefined) out.push(ip);
  }
  return out;
}

function sourceRangesOfFamily(texts: readonly string[], family: IPFamily): string[] {
  const out: string[] = [];
  let hasZeroPrefix = false;
  for (const t of texts) {
    // kube-proxy trims each entry (the API server accepted it with spaces, a historical accident).
    const text = goTrimSpace(t);
    const p = parseCIDR(text);
    // Validation accepted every range (after the same trim), so a range that does not parse
    // here is kpc's bug; dropping it would silently open the firewall, so stop instead.
    if (!p && text !== '') throw new Error(`internal: source range ${JSON.stringify(t)} passed validation but does not parse`);
    if (!p || p.cidr.ip.family !== family) continue;
    if (p.cidr.prefix === 0) hasZeroPrefix = true;
    out.push(formatCIDR(p.cidr));
  }
  // v1.34+ (kubernetes#132722): a /0 range allows everything, so no firewall at all.
  return hasZeroPrefix ? [] : out;
}

/** type LoadBalancer or NodePort, or ClusterIP with externalIPs (apiservice.ExternallyAccessible). */
function serviceExternallyAccessible(svc: Service): boolean {
  const t = svc.spec.type;
  return t === 'LoadBalancer' || t === 'NodePort' || (t === 'ClusterIP' && svc.spec.externalIPs.length > 0);
}

/** The service ports kube-proxy's service map holds for this Service and family (maybe none). */
function serviceToServicePorts(svc: Service, ctx: IRContext): ServicePort[] {
  const family = ctx.family;
  // Labels that hide a Service from kube-proxy's informer (its label selector).
  for (const label of ctx.behaviour.serviceSkipLabels) if (label in svc.metadata.labels) return [];
  if (svc.spec.type === 'ExternalName') return [];
  if (svc.spec.clusterIP === '' || svc.spec.clusterIP === 'None') return [];
  const clusterIP = clusterIPOfFamily(svc, family);
  if (clusterIP === undefined) return [];

  const externalPolicyLocal = serviceExternallyAccessible(svc) && svc.spec.externalTrafficPolicy === 'Local';
  const loadBalancerVIPs = svc.status.loadBalancerIngress
    .filter((ing) => ing.ip !== undefined && ing.ip !== '' && ing.ipMode !== 'Proxy')
    .map((ing) => ing.ip as string);
  const common = {
    namespace: svc.metadata.namespace,
    name: svc.metadata.name,
    clusterIP,
    externalIPs: ctx.serviceExternalIPs ? ipsOfFamily(svc.spec.externalIPs, family) : [],
    loadBalancerVIPs: ipsOfFamily(loadBalancerVIPs, family),
    loadBalancerSourceRanges: sourceRangesOfFamily(svc.spec.loadBalancerSourceRanges, family),
    stickySeconds: svc.spec.sessionAffinity === 'ClientIP' ? svc.spec.sessionAffinityTimeoutSeconds ?? 10800 : undefined,
    externalPolicyLocal,
    internalPolicyLocal: svc.spec.internalTrafficPolicy === 'Local',
    healthCheckNodePort: svc.spec.type === 'LoadBalancer' && externalPolicyLocal ? svc.spec.healthCheckNodePort : 0,
  };
  // Spelled out field by field (not spread): one object shape for all service ports.
  return svc.spec.ports.map((p) => ({
    namespace: common.namespace,
    name: common.name,
    portName: p.name,
    protocol: p.protocol,
    spn: servicePortName(svc.metadata.namespace, svc.metadata.name, p.name),
    clusterIP: common.clusterIP,
    port: p.port,
    nodePort: p.nodePort,
    externalIPs: common.externalIPs,
    loadBalancerVIPs: common.loadBalancerVIPs,
    loadBalancerSourceRanges: common.loadBalancerSourceRanges,
    stickySeconds: common.stickySeconds,
    externalPolicyLocal: common.externalPolicyLocal,
    internalPolicyLocal: common.internalPolicyLocal,
    healthCheckNodePort: common.healthCheckNodePort,
    endpoints: [],
  }));
}

// ---------------------------------------------------------------------------------------
// EndpointSlices → endpoints per service port (EndpointSliceCache)

function sliceIsUsed(slice: EndpointSlice, ctx: IRContext): boolean {
  const labels = slice.metadata.labels;
  for (const label of ctx.behaviour.sliceSkipLabels) if (label in labels) return false;
  if (!labels[SERVICE_NAME_LABEL]) return false;
  return slice.addressType === ctx.family;
}

/**
 * The canonical text of an endpoint's address (its first), or undefined when it does not
 * parse. Canonical IPv6 text always has a ':' and IPv4 text never does, so the text also tells
 * the family.
 */
function endpointIP(ep: EndpointSlice['endpoints'][number]): string | undefined {
  const first = ep.addresses[0];
  if (first === undefined) return undefined;
  // The everyday address (one per Pod) is a canonical dotted quad, its own canonical text; only
  // the others are parsed into bytes.
  if (isCanonicalIPv4(first)) return first;
  const parsed = parseIP(first);
  if (!parsed) return undefined;
  // Text that parsed without remarks is already canonical (parseIP checks it).
  return parsed.sloppy === undefined ? first : formatIP(parsed.ip);
}

/** What an endpoint is apart from its port, shared by the entries of its ports. */
interface EndpointFacts {
  ep: EndpointSlice['endpoints'][number];
  ip: string;
  zoneHints: ReadonlySet<string> | undefined;
  nodeHints: ReadonlySet<string> | undefined;
}

function toEndpoint(facts: EndpointFacts, port: number, ctx: IRContext): Endpoint {
  const { ep, ip } = facts;
  const endpoint: Endpoint = {
    ip,
    port,
    address: ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`,
    ready: ep.conditions.ready ?? true,
    serving: ep.conditions.serving ?? true,
    terminating: ep.conditions.terminating ?? false,
    isLocal: ctx.node.name !== '' && ep.nodeName === ctx.node.name,
  };
  // Optional fields stay absent (not undefined) when unknown: the IR is compared structurally.
  if (facts.zoneHints) endpoint.zoneHints = facts.zoneHints;
  if (facts.nodeHints) endpoint.nodeHints = facts.nodeHints;
  if (ep.nodeName !== undefined) endpoint.nodeName = ep.nodeName;
  if (ep.zone !== undefined) endpoint.zone = ep.zone;
  return endpoint;
}

/** Endpoints keyed by (namespace, service, port name, protocol), deduplicated and sorted. */
export function buildEndpointsMap(slices: readonly EndpointSlice[], ctx: IRContext): Map<string, Endpoint[]> {
  const lists = new Map<string, Endpoint[]>();
  // kube-proxy visits a Service's slices in map order; kpc visits them by name.
  const used = slices
    .filter((s) => sliceIsUsed(s, ctx))
    .map((slice) => ({ key: `${slice.metadata.namespace}\u0000${slice.metadata.name}`, slice }))
    .sort((a, b) => compareStrings(a.key, b.key));
  for (const { slice } of used) {
    const serviceName = slice.metadata.labels[SERVICE_NAME_LABEL] as string;
    // The list each port's endpoints go to; none for a port kube-proxy ignores (no number).
    const portLists = slice.ports.map((port) => {
      if (port.port === undefined || port.port === 0) return undefined;
      const key = portKey(slice.metadata.namespace, serviceName, port.name, port.protocol);
      let list = lists.get(key);
      if (!list) lists.set(key, (list = []));
      return list;
    });
    // Endpoint by endpoint, each port's entry in turn: every list still gets the slice's
    // endpoints in slice order, and what an endpoint is apart from its port is worked out once.
    for (const ep of slice.endpoints) {
      const ip = endpointIP(ep);
      if (ip === undefined) continue;
      const facts: EndpointFacts = {
        ep,
        ip,
        zoneHints: ep.hints && ep.hints.forZones.length > 0 ? new Set(ep.hints.forZones) : undefined,
        nodeHints: ctx.knobs.nodeHints && ep.hints && ep.hints.forNodes.length > 0 ? new Set(ep.hints.forNodes) : undefined,
      };
      for (let k = 0; k < slice.ports.length; k++) portLists[k]?.push(toEndpoint(facts, slice.ports[k]!.port!, ctx));
    }
  }
  const wins = ctx.behaviour.duplicateEndpointWins;
  for (const list of lists.values()) sortUnique(list, wins);
  return lists;
}

/**
 * Sorted by address, one endpoint per address. When an address comes twice, a later
 * endpoint replaces an earlier one when it is local (up to v1.35) or when it is not
 * terminating (v1.36+: prefer the running pod when a pod IP was reused) — EndpointSliceCache's
 * merge. The sort is stable, so among equal addresses the visiting order survives and the rule
 * can be applied after sorting.
 */
function sortUnique(list: Endpoint[], wins: ReleaseBehaviour['duplicateEndpointWins']): void {
  sortByAddress(list);
  // Compacted in place: `kept` endpoints stay at the front.
  let kept = 0;
  for (const ep of list) {
    if (kept === 0 || list[kept - 1]!.address !== ep.address) list[kept++] = ep;
    else if (wins === 'running' ? !ep.terminating : ep.isLocal) list[kept - 1] = ep;
  }
  list.length = kept;
}

/** Lists up to this long are insertion-sorted (see sortByAddress); it is quadratic. */
const INSERTION_SORT_MAX = 16;

/**
 * A stable sort by address, in place. There is one list per service port, most of them short,
 * and Array.prototype.sort sets up its working state (a few hundred bytes) on every call: about
 * 20 MB for a 20k-Service cluster. Short lists are insertion-sorted instead, which is stable
 * too (an endpoint moves only past strictly greater addresses).
 */
function sortByAddress(list: Endpoint[]): void {
  if (list.length > INSERTION_SORT_MAX) {
    list.sort((a, b) => compareStrings(a.address, b.address));
    return;
  }
  for (let i = 1; i < list.length; i++) {
    const ep = list[i]!;
    let j = i;
    for (; j > 0 && list[j - 1]!.address > ep.address; j--) list[j] = list[j - 1]!;
    list[j] = ep;
  }
}

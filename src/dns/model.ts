/**
 * The cluster as CoreDNS's kubernetes plugin holds it: its `object.Service` and
 * `object.Endpoints` views (plugin/kubernetes/object/service.go, endpoint.go), built from the
 * Services and EndpointSlices kpc read, plus the answers to questions the plugin asks its
 * environment (which namespaces exist, which Services front its own pod).
 *
 * Conversions follow the plugin's:
 * - A Service keeps its type, its `spec.clusterIPs` as written, its ExternalName and its ports;
 *   a Service without ports gets one sentinel port -1 (object.ToService).
 * - Each EndpointSlice becomes one Endpoints with one subset: its ports (a missing port number
 *   is -1; no ports at all gives the sentinel port -1) and the addresses of the endpoints whose
 *   `ready` condition is true or unset (object.EndpointSliceToEndpoints, endpointsliceReady).
 *   Not-ready endpoints are simply absent; the plugin never reads `serving`, `terminating`
 *   or the Service's `publishNotReadyAddresses` (the EndpointSlice controller folds that
 *   into `ready`).
 * - A slice is filed under `<kubernetes.io/service-name label>.<namespace>`.
 */

import type { IP } from '../net/ip.js';
import { CONTROLLER_NAME as ENDPOINTSLICE_CONTROLLER } from '../controllers/endpointslice/model.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../parser/k8s/model/endpoint-slice.js';
import type { EndpointSlice, Service, ServiceType } from '../parser/k8s/types.js';
import { goIPString, goParseIP, joinName } from './names.js';

export const DNS_SCHEMA_VERSION = '1.1.0';
/** The TTL CoreDNS gives the dns-version TXT record (kubernetes.go, Services). */
export const DNS_VERSION_TTL = 28800;
/** The kubernetes plugin's `ttl` default (kubernetes.go defaultTTL). */
export const DEFAULT_TTL = 5;


export type PodMode = 'insecure' | 'disabled';

export interface DnsOptions {
  /** The cluster domain, absolute presentation form (`cluster.local.`). */
  zone: string;
  ttl: number;
  /** The SOA serial to write (CoreDNS uses the Unix time of the last change it saw). */
  serial: number;
  /** The plugin's `pods` mode (kubeadm's Corefile: insecure). */
  pods: PodMode;
  /** The Service whose endpoints are taken for CoreDNS's own pods (for NS records). */
  dnsService: { namespace: string; name: string };
  /** CoreDNS's own pod addresses (the plugin's localIPs), when known. */
  dnsPodIPs?: readonly string[];
}

export interface DnsPort {
  /** '' when unnamed. */
  name: string;
  /** As the API writes it (TCP, UDP, SCTP); '' for the sentinel. */
  protocol: string;
  /** -1: no port (the sentinel, or a slice port without a number). */
  port: number;
}

export interface DnsService {
  namespace: string;
  name: string;
  type: ServiceType;
  /** spec.clusterIPs as written ([clusterIP] when empty, as object.ToService does). */
  clusterIPs: string[];
  headless: boolean;
  /** spec.externalName as written; '' unless ExternalName. */
  externalName: string;
  ports: DnsPort[];
  publishNotReadyAddresses: boolean;
}

export interface DnsAddress {
  /** The address as the slice writes it (CoreDNS indexes and dashes this text). */
  ip: string;
  /** The endpoint's hostname, '' when unset. */
  hostname: string;
}

/** One EndpointSlice as the plugin's object.Endpoints (one subset). */
export interface DnsEndpoints {
  slice: string;
  namespace: string;
  /** The kubernetes.io/service-name label. */
  service: string;
  /** Ready (or readiness-unknown) endpoints' addresses. */
  addresses: DnsAddress[];
  ports: DnsPort[];
  /** Addresses left out because their endpoint is not ready. */
  notReady: DnsAddress[];
}

export interface NsAddr {
  /** Owner name of the address record (the NS target). */
  name: string;
  ip: IP;
}

export interface DnsCluster {
  options: DnsOptions;
  /** Sorted by namespace, then name. */
  services: DnsService[];
  /** Sorted by namespace, service, slice name. */
  endpoints: DnsEndpoints[];
  namespaces: ReadonlySet<string>;
  serviceByKey: ReadonlyMap<string, DnsService>;
  /** `service.namespace` → its slices (the plugin's EpIndex). */
  endpointsByIndex: ReadonlyMap<string, DnsEndpoints[]>;
  /** Address text → slices holding it ready (EpIndexReverse, keyed by the text as written). */
  endpointsByIP: ReadonlyMap<string, DnsEndpoints[]>;
  /** Cluster IP text → Services (SvcIndexReverse, keyed by the text as written). */
  servicesByClusterIP: ReadonlyMap<string, DnsService[]>;
  /**
   * The name servers' address records (ns.go nsAddrs); empty when CoreDNS's own address cannot
   * be known offline (no --dns-pod-ip and no DNS Service in the input).
   */
  nsAddrs: NsAddr[];
  /** How nsAddrs was found, said in the zone header. */
  nsSource: string;
  /** Problems of the input for cluster DNS (printed as warnings). */
  warnings: string[];
  /** What kpc did (printed as notes). */
  notes: string[];
}

export function serviceKey(name: string, namespace: string): string {
  return `${name}.${namespace}`;
}

/**
 * kubernetes.go endpointHostname (default mode; `endpoint_pod_names` would use the Pod's name):
 * the endpoint's hostname, else its address with `.` or `:` replaced by `-`
 * (`10-244-1-5`, `fd00-10-244--5`). An IPv6 address ending in `::` would end in `--`,
 * which is no valid hostname; CoreDNS appends a `0` (coredns/coredns#7431).
 */
export function endpointHostname(addr: DnsAddress): string {
  if (addr.hostname !== '') return addr.hostname;
  if (addr.ip.includes('.')) return addr.ip.replaceAll('.', '-');
  if (addr.ip.includes(':')) {
    const h = addr.ip.replaceAll(':', '-');
    return h.endsWith('-') ? `${h}0` : h;
  }
  return '';
}

/** `<service>.<namespace>.svc.<zone>` */
export function serviceName(svc: { name: string; namespace: string }, zone: string): string {
  return joinName([svc.name, svc.namespace, 'svc'], zone);
}

function toDnsService(s: Service): DnsService {
  const clusterIPs = s.spec.clusterIPs.length > 0 ? [...s.spec.clusterIPs] : [s.spec.clusterIP];
  return {
    namespace: s.metadata.namespace,
    name: s.metadata.name,
    type: s.spec.type,
    clusterIPs,
    headless: clusterIPs[0] === 'None',
    externalName: s.spec.type === 'ExternalName' ? (s.spec.externalName ?? '') : '',
    ports: s.spec.ports.length > 0 ? s.spec.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port })) : [{ name: '', protocol: '', port: -1 }],
    publishNotReadyAddresses: s.spec.publishNotReadyAddresses === true,
  };
}

function byNamespaceName(a: { namespace: string; name: string }, b: { namespace: string; name: string }): number {
  return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export interface DnsInput {
  services: readonly Service[];
  slices: readonly EndpointSlice[];
  /** Namespaces that exist (the plugin answers NXDOMAIN below one that does not). */
  namespaces: Iterable<string>;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** Build the plugin's view of the cluster (pure: no I/O). */
export function buildDnsCluster(input: DnsInput, options: DnsOptions): DnsCluster {
  const warnings: string[] = [];
  const notes: string[] = [];
  const services = input.services.map(toDnsService).sort(byNamespaceName);
  const serviceByKey = new Map(services.map((s) => [serviceKey(s.name, s.namespace), s]));

  const endpoints: DnsEndpoints[] = [];
  const fqdn: string[] = [];
  const unlabelled: string[] = [];
  const orphans: string[] = [];
  const notReadyPublished = new Map<string, string[]>();
  for (const slice of input.slices) {
    const id = `${slice.metadata.namespace}/${slice.metadata.name}`;
    if (slice.addressType === 'FQDN') {
      fqdn.push(id);
      continue;
    }
    const svcName = slice.metadata.labels[SERVICE_NAME_LABEL];
    if (svcName === undefined || svcName === '') {
      unlabelled.push(id);
      continue;
    }
    const ports: DnsPort[] = slice.ports.length > 0 ? slice.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port ?? -1 })) : [{ name: '', protocol: '', port: -1 }];
    const ep: DnsEndpoints = { slice: slice.metadata.name, namespace: slice.metadata.namespace, service: svcName, addresses: [], ports, notReady: [] };
    const svc = serviceByKey.get(serviceKey(svcName, slice.metadata.namespace));
    for (const e of slice.endpoints) {
      const ready = e.conditions.ready !== false;
      for (const ip of e.addresses) {
        const addr = { ip, hostname: e.hostname ?? '' };
        if (goParseIP(ip) === undefined) {
          warnings.push(
            `EndpointSlice ${id}: address "${ip}" is not an IP address to CoreDNS (Go's net.ParseIP rejects leading zeros): it would answer a CNAME to "${ip}." for it; kpc leaves it out`,
          );
          continue;
        }
        if (ready) ep.addresses.push(addr);
        else {
          ep.notReady.push(addr);
          if (svc?.publishNotReadyAddresses) push(notReadyPublished, `${svc.namespace}/${svc.name}`, `${ip} (${id}${slice.metadata.labels[MANAGED_BY_LABEL] === ENDPOINTSLICE_CONTROLLER ? '' : ', not managed by the EndpointSlice controller'})`);
        }
      }
    }
    if (!svc) orphans.push(id);
    endpoints.push(ep);
  }
  endpoints.sort((a, b) => byNamespaceName({ namespace: a.namespace, name: `${a.service}/${a.slice}` }, { namespace: b.namespace, name: `${b.service}/${b.slice}` }));

  for (const [svc, list] of notReadyPublished) {
    warnings.push(
      `Service ${svc} has publishNotReadyAddresses: true, but ${list.length} endpoint address(es) of its EndpointSlices are ready: false: ${list.join(', ')}. ` +
        'CoreDNS publishes only endpoints whose ready condition is true (it never reads publishNotReadyAddresses) and leaves these out; ' +
        'the EndpointSlice controller writes ready: true for every endpoint of such a Service, so slices it manages would not say this',
    );
  }
  if (fqdn.length > 0) notes.push(`EndpointSlices of addressType FQDN are not modelled (CoreDNS would take their addresses for CNAME targets): ${fqdn.join(', ')}`);
  if (unlabelled.length > 0) notes.push(`EndpointSlices without a kubernetes.io/service-name label belong to no Service's name: ${unlabelled.join(', ')}`);
  if (orphans.length > 0) notes.push(`EndpointSlices of Services not in the input give PTR records only (CoreDNS indexes every slice): ${orphans.join(', ')}`);

  for (const s of services) {
    if (s.type !== 'ExternalName') continue;
    const host = s.externalName;
    if (goParseIP(host) !== undefined) warnings.push(`Service ${s.namespace}/${s.name}: externalName "${host}" is an IP address; CoreDNS serves no record for it (NXDOMAIN)`);
  }
  for (const s of services) {
    if (s.type === 'ExternalName' || s.headless) continue;
    for (const ip of s.clusterIPs) {
      if (goParseIP(ip) === undefined) warnings.push(`Service ${s.namespace}/${s.name}: cluster IP "${ip}" is not an IP address to CoreDNS (Go's net.ParseIP rejects leading zeros): it would answer a CNAME to "${ip}."; kpc leaves it out`);
    }
  }

  const endpointsByIndex = new Map<string, DnsEndpoints[]>();
  const endpointsByIP = new Map<string, DnsEndpoints[]>();
  for (const ep of endpoints) {
    push(endpointsByIndex, serviceKey(ep.service, ep.namespace), ep);
    for (const ip of new Set(ep.addresses.map((a) => a.ip))) push(endpointsByIP, ip, ep);
  }
  const servicesByClusterIP = new Map<string, DnsService[]>();
  for (const s of services) for (const ip of s.clusterIPs) if (s.type !== 'ExternalName' && !s.headless) push(servicesByClusterIP, ip, s);

  const namespaces = new Set(input.namespaces);
  const partial: Omit<DnsCluster, 'nsAddrs' | 'nsSource'> = {
    options,
    services,
    endpoints,
    namespaces,
    serviceByKey,
    endpointsByIndex,
    endpointsByIP,
    servicesByClusterIP,
    warnings,
    notes,
  };
  const ns = nameServers(partial);
  return { ...partial, nsAddrs: ns.addrs, nsSource: ns.source };
}

/**
 * ns.go nsAddrs (not external): for each of CoreDNS's own addresses, every slice holding it,
 * and for each slice's Service its name with each cluster IP (headless: each endpoint's name
 * and address). Found nowhere: `ns.dns.<zone>` with the pod's own address.
 *
 * CoreDNS knows its own address; kpc does not. It takes --dns-pod-ip when given, else the
 * ready endpoints of --dns-service (kube-system/kube-dns): in a working cluster CoreDNS's pods
 * are that Service's endpoints. Without endpoints the Service's own name and cluster IPs are
 * what its pods would find; without the Service there is no address to give.
 */
function nameServers(c: Omit<DnsCluster, 'nsAddrs' | 'nsSource'>): { addrs: NsAddr[]; source: string } {
  const zone = c.options.zone;
  const dnsSvc = c.serviceByKey.get(serviceKey(c.options.dnsService.name, c.options.dnsService.namespace));
  const dnsSvcId = `${c.options.dnsService.namespace}/${c.options.dnsService.name}`;
  let localIPs: string[];
  let source: string;
  if (c.options.dnsPodIPs && c.options.dnsPodIPs.length > 0) {
    localIPs = [...c.options.dnsPodIPs];
    source = `CoreDNS's own address --dns-pod-ip ${localIPs.join(', ')}`;
  } else {
    const eps = c.endpointsByIndex.get(serviceKey(c.options.dnsService.name, c.options.dnsService.namespace)) ?? [];
    localIPs = [...new Set(eps.flatMap((e) => e.addresses.map((a) => a.ip)))];
    source = `CoreDNS's own addresses taken to be the ready endpoints of ${dnsSvcId}`;
    if (localIPs.length === 0) {
      if (dnsSvc && !dnsSvc.headless && dnsSvc.type !== 'ExternalName') {
        const name = serviceName(dnsSvc, zone);
        const addrs = dnsSvc.clusterIPs.map((t) => goParseIP(t)).filter((ip): ip is IP => ip !== undefined).map((ip) => ({ name, ip }));
        return { addrs, source: `${dnsSvcId} has no ready endpoints in the input; CoreDNS's pods are assumed to be behind it` };
      }
      return { addrs: [], source: `not known offline: no --dns-pod-ip, and ${dnsSvcId} is not in the input` };
    }
  }
  const out: NsAddr[] = [];
  let found = false;
  for (const local of localIPs) {
    const key = goIPString(local);
    for (const ep of key ? (c.endpointsByIP.get(key) ?? []) : []) {
      found = true;
      const svc = c.serviceByKey.get(serviceKey(ep.service, ep.namespace));
      if (!svc) continue;
      const name = serviceName(svc, zone);
      if (svc.headless) {
        for (const a of ep.addresses) {
          const ip = goParseIP(a.ip);
          if (ip) out.push({ name: joinName([endpointHostname(a)], name), ip });
        }
      } else {
        for (const t of svc.clusterIPs) {
          const ip = goParseIP(t);
          if (ip) out.push({ name, ip });
        }
      }
    }
  }
  if (!found) {
    for (const local of localIPs) {
      const ip = goParseIP(local);
      if (ip) out.push({ name: joinName(['ns', 'dns'], zone), ip });
    }
  }
  // Several replicas' addresses give the same names again: keep each name and address once.
  const seen = new Set<string>();
  const addrs = out.filter((a) => {
    const k = `${a.name} ${[...a.ip.bytes].join('.')}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { addrs, source };
}

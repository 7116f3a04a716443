/**
 * One query, answered the way CoreDNS's kubernetes plugin answers it: a transcription of the
 * query path (plugin/kubernetes handler.go ServeDNS → plugin/backend_lookup.go A, AAAA, SRV,
 * TXT, CNAME, PTR, NS, SOA → kubernetes.go Services, Records, findServices, findPods →
 * parse.go parseRequest; reverse.go Reverse; ns.go nsAddrs) over the DnsCluster.
 *
 * The server configuration is kubeadm's Corefile:
 *
 *     kubernetes <cluster-domain> in-addr.arpa ip6.arpa {
 *        pods insecure
 *        fallthrough in-addr.arpa ip6.arpa
 *        ttl <ttl>
 *     }
 *     forward . /etc/resolv.conf
 *
 * so names outside the three zones, and reverse names the plugin does not know, go to the
 * upstream resolver, which kpc cannot know: such answers are marked `forwarded`.
 *
 * This is kpc's model of a DNS server, independent of the zone files (zone.ts): the tests
 * compare the two, through a real server loaded with the zone files, and compare this model
 * with CoreDNS v1.15.0 itself (test/dns/coredns.test.ts).
 */

import { formatIP } from '../net/ip.js';
import { DNS_SCHEMA_VERSION, DNS_VERSION_TTL, endpointHostname, serviceKey, type DnsCluster } from './model.js';
import { addressFromReverse, goIPString, goParseIP, IN_ADDR_ARPA, IP6_ARPA, isSubdomain, joinName, labelsBelow } from './names.js';
import { compareRData, dedupRRs, type RR, type RRType } from './rr.js';

export type Rcode = 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL';

export interface Served {
  /** The question, lower-cased and absolute. */
  name: string;
  type: RRType;
  /** The zone of the plugin that answered; undefined when the query left cluster DNS. */
  zone?: string;
  rcode: Rcode;
  answer: RR[];
  extra: RR[];
  /** The SOA CoreDNS puts in the authority section of a negative answer. */
  authority: RR[];
  /**
   * The query (or the CNAME target lookups it made) went to the upstream resolver: the answer
   * is only what cluster DNS adds, the rest is not known offline.
   */
  forwarded?: { name: string; type: RRType; why: string }[];
  /** Parts of the answer that depend on what cannot be known offline. */
  unknown?: string;
  /** Why, in words (for kpc dns resolve). */
  why: string[];
}

/** The plugin's errors: errNoItems, errNsNotExposed, errInvalidRequest (all NXDOMAIN). */
type PluginError = 'no-items' | 'namespace-not-exposed' | 'invalid-request';

/** A msg.Service: what the backend found, before it becomes records. */
interface Found {
  /** An address, a name (CNAME target) or '' with text. */
  host: string;
  port: number;
  ttl: number;
  /** msg.Domain(Key): the name this entry lives at (an SRV target). */
  key: string;
  text?: string;
}

interface Lookup {
  found: Found[];
  err?: PluginError;
}

interface Ctx {
  c: DnsCluster;
  why: string[];
  forwarded: { name: string; type: RRType; why: string }[];
  unknown?: string;
}

interface Request {
  port: string;
  protocol: string;
  endpoint: string;
  service: string;
  namespace: string;
  podOrSvc: string;
}

const FORWARD_WHY = 'outside the cluster zones: CoreDNS forwards it (forward . /etc/resolv.conf); the answer is not known offline';

/** The zones the plugin serves, longest match first (plugin.Zones.Matches). */
function matchZone(c: DnsCluster, name: string): string | undefined {
  const zones = [c.options.zone, IN_ADDR_ARPA, IP6_ARPA].filter((z) => isSubdomain(name, z));
  zones.sort((a, b) => b.length - a.length);
  return zones[0];
}

function isReverse(name: string): boolean {
  return isSubdomain(name, IN_ADDR_ARPA) || isSubdomain(name, IP6_ARPA);
}

function stripUnderscore(s: string): string {
  return s.startsWith('_') ? s.slice(1) : s;
}

const eqFold = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function matchPortAndProtocol(aPort: string, bPort: string, aProto: string, bProto: string): boolean {
  return (eqFold(aPort, bPort) || aPort === '') && (eqFold(aProto, bProto) || aProto === '');
}

/** parse.go parseRequest (not multicluster, not zonal). */
function parseRequest(name: string, zone: string): { r: Request; err?: PluginError } {
  const r: Request = { port: '', protocol: '', endpoint: '', service: '', namespace: '', podOrSvc: '' };
  const segs = labelsBelow(name, zone) ?? [];
  if (segs.length === 0 || (segs.length === 1 && (segs[0] === 'svc' || segs[0] === 'pod'))) return { r };
  let last = segs.length - 1;
  r.podOrSvc = segs[last]!;
  if (r.podOrSvc !== 'pod' && r.podOrSvc !== 'svc') return { r, err: 'invalid-request' };
  last--;
  if (last < 0) return { r };
  r.namespace = segs[last]!;
  last--;
  if (last < 0) return { r };
  r.service = segs[last]!;
  last--;
  if (last < 0) return { r };
  if (last === 0) r.endpoint = segs[0]!;
  else if (last === 1) {
    r.protocol = stripUnderscore(segs[1]!);
    r.port = stripUnderscore(segs[0]!);
  } else return { r, err: 'invalid-request' };
  return { r };
}

function namespaceExposed(x: Ctx, ns: string): boolean {
  return x.c.namespaces.has(ns);
}

/** kubernetes.go findPods. */
function findPods(x: Ctx, r: Request, zone: string): Lookup {
  if (x.c.options.pods === 'disabled') {
    x.why.push('pod names are not served (pods disabled)');
    return { found: [], err: 'no-items' };
  }
  const podname = r.service;
  if (podname === '') return { found: [] };
  const dashes = podname.split('-').length - 1;
  const ip = dashes === 3 && !podname.includes('--') ? podname.replaceAll('-', '.') : podname.replaceAll('-', ':');
  if (goParseIP(ip) === undefined) {
    x.why.push(`${podname} is not a dashed IP address`);
    return { found: [], err: 'no-items' };
  }
  x.why.push(`pods insecure: ${podname}.${r.namespace}.pod answers ${ip} without checking that such a Pod exists`);
  return { found: [{ host: ip, port: 0, ttl: x.c.options.ttl, key: joinName([podname, r.namespace, 'pod'], zone) }] };
}

/** kubernetes.go findServices. */
function findServices(x: Ctx, r: Request, zone: string): Lookup {
  const c = x.c;
  const found: Found[] = [];
  let err: PluginError | undefined = 'no-items';
  const svc = c.serviceByKey.get(serviceKey(r.service, r.namespace));
  if (!svc) {
    x.why.push(`no Service ${r.service} in namespace ${r.namespace}`);
    return { found, err };
  }
  const base = joinName([svc.name, svc.namespace, 'svc'], zone);
  const ttl = c.options.ttl;
  if (svc.type === 'ExternalName') {
    if (r.endpoint !== '') {
      x.why.push(`${svc.namespace}/${svc.name} is an ExternalName Service: it has no endpoint names`);
      return { found, err };
    }
    if (goParseIP(svc.externalName) !== undefined) {
      x.why.push(`${svc.namespace}/${svc.name}: externalName ${svc.externalName} is an IP address, for which CoreDNS serves nothing`);
      return { found, err };
    }
    x.why.push(`${svc.namespace}/${svc.name} is an ExternalName Service: a CNAME to ${svc.externalName}`);
    return { found: [{ host: svc.externalName, port: 0, ttl, key: base }] };
  }
  if (svc.headless || r.endpoint !== '') {
    const eps = c.endpointsByIndex.get(serviceKey(svc.name, svc.namespace)) ?? [];
    let notReady = 0;
    for (const ep of eps) {
      notReady += ep.notReady.length;
      for (const addr of ep.addresses) {
        const host = endpointHostname(addr);
        if (r.endpoint !== '' && !eqFold(r.endpoint, host)) continue;
        for (const p of ep.ports) {
          if (!matchPortAndProtocol(r.port, p.name, r.protocol, p.protocol)) continue;
          found.push({ host: addr.ip, port: p.port, ttl, key: joinName([host], base) });
          err = undefined;
        }
      }
    }
    const what = r.endpoint !== '' ? `endpoint ${r.endpoint} of ${svc.namespace}/${svc.name}` : `headless Service ${svc.namespace}/${svc.name}`;
    if (err) {
      const ready = eps.reduce((n, e) => n + e.addresses.length, 0);
      if (ready === 0) x.why.push(`${what}: no ready endpoints${notReady > 0 ? ` (${notReady} not ready${svc.publishNotReadyAddresses ? '' : '; publishNotReadyAddresses: true would have the EndpointSlice controller publish them'})` : eps.length === 0 ? ' (no EndpointSlices in the input)' : ''}`);
      else if (r.endpoint !== '') x.why.push(`${what}: no ready endpoint has that name`);
      else x.why.push(`${what}: no endpoint port named ${r.port}/${r.protocol}`);
    } else x.why.push(`${what}: the ready endpoints' addresses`);
    return { found, err };
  }
  for (const p of svc.ports) {
    if (!matchPortAndProtocol(r.port, p.name, r.protocol, p.protocol)) continue;
    err = undefined;
    for (const ip of svc.clusterIPs) found.push({ host: ip, port: p.port, ttl, key: base });
  }
  if (err) x.why.push(`${svc.namespace}/${svc.name} has no port named ${r.port}/${r.protocol}`);
  else x.why.push(`${svc.namespace}/${svc.name}: its cluster IP${svc.clusterIPs.length > 1 ? 's' : ''}`);
  return { found, err };
}

/** kubernetes.go Records. */
function records(x: Ctx, name: string, zone: string): Lookup {
  const { r, err } = parseRequest(name, zone);
  if (err) {
    x.why.push(`${name} is not a name the plugin serves (names below ${zone} end in svc or pod)`);
    return { found: [], err };
  }
  if (r.podOrSvc === '') return { found: [] };
  if (isReverse(name)) return { found: [], err: 'no-items' };
  if (!namespaceExposed(x, r.namespace)) {
    x.why.push(`namespace ${r.namespace} does not exist (no object of the input is in it)`);
    return { found: [], err: 'namespace-not-exposed' };
  }
  if (r.service === '') {
    x.why.push(`${name} is a namespace: it exists but holds no records (NODATA)`);
    return { found: [] };
  }
  return r.podOrSvc === 'pod' ? findPods(x, r, zone) : findServices(x, r, zone);
}

/** kubernetes.go Services: the special names first, then Records; SRV drops CNAME targets. */
function services(x: Ctx, name: string, zone: string, type: RRType): Lookup {
  const c = x.c;
  if (type === 'TXT') {
    const t = labelsBelow(name, zone) ?? [];
    if (t.length === 1 && t[0] === 'dns-version') return { found: [{ host: '', port: 0, ttl: DNS_VERSION_TTL, key: name, text: DNS_SCHEMA_VERSION }] };
    // coredns/coredns#5737 (1.10.1): NODATA where the name has records of another type, else
    // NXDOMAIN (even at the apex or a namespace).
    x.why.push('the plugin serves TXT only at dns-version.<zone>');
    return records(x, name, zone).found.length > 0 ? { found: [] } : { found: [], err: 'no-items' };
  }
  if (type === 'NS') return { found: nsFound(x, zone) };
  if (name === `ns.dns.${zone}`) {
    const want = type === 'A' ? 'IPv4' : type === 'AAAA' ? 'IPv6' : undefined;
    if (c.nsAddrs.length === 0) x.unknown = `the address of ${name} is CoreDNS's own pod address, not known offline`;
    return { found: c.nsAddrs.filter((a) => a.ip.family === want).map((a) => ({ host: formatIP(a.ip), port: 0, ttl: c.options.ttl, key: name })) };
  }
  const l = records(x, name, zone);
  if (type !== 'SRV') return l;
  return { found: l.found.filter((f) => hostType(f) !== 'CNAME'), ...(l.err ? { err: l.err } : {}) };
}

function nsFound(x: Ctx, zone: string): Found[] {
  const c = x.c;
  if (c.nsAddrs.length === 0) {
    x.unknown = `CoreDNS names itself ns.dns.${zone} with its own pod address, not known offline`;
    return [];
  }
  return c.nsAddrs.map((a) => ({ host: formatIP(a.ip), port: 0, ttl: c.options.ttl, key: a.name }));
}

/** msg.Service.HostType. */
function hostType(f: Found): 'A' | 'AAAA' | 'CNAME' | 'TXT' {
  const ip = goParseIP(f.host);
  if (!ip) return f.text !== undefined && f.text !== '' ? 'TXT' : 'CNAME';
  return ip.family === 'IPv4' ? 'A' : 'AAAA';
}

function fqdn(host: string): string {
  return host.endsWith('.') ? host : `${host}.`;
}

/** plugin.A / plugin.AAAA (one function: `want` is the address type asked for). */
function address(x: Ctx, zone: string, name: string, want: 'A' | 'AAAA', previous: RR[]): { records: RR[]; err?: PluginError } {
  // checkForApex: `apex.dns.<zone>` is never a Service name, so the apex falls through to Records.
  const l = services(x, name, zone, want);
  if (l.err) return { records: [], err: l.err };
  const out: RR[] = [];
  const dup = new Set<string>();
  for (const f of l.found) {
    const t = hostType(f);
    if (t === 'CNAME') {
      const target = fqdn(f.host);
      if (isSubdomain(target, name)) continue; // x CNAME x: a loop
      const rec: RR = { name, ttl: f.ttl, data: { type: 'CNAME', target } };
      if (previous.length > 7) continue;
      if (previous.some((p) => p.data.type === 'CNAME' && p.data.target === target)) continue;
      if (isSubdomain(target, zone)) {
        const next = address(x, zone, target, want, [...previous, rec]);
        if (!next.err && next.records.length > 0) out.push(rec, ...next.records);
        else x.why.push(`the CNAME target ${target} has no ${want} records in cluster DNS, so CoreDNS drops the CNAME too`);
        continue;
      }
      out.push(rec);
      x.forwarded.push({ name: target, type: want, why: `CoreDNS resolves the CNAME target ${target} through its upstream (not known offline)` });
      continue;
    }
    if (t !== want) continue;
    const ip = goParseIP(f.host)!;
    const k = formatIP(ip);
    if (dup.has(k)) continue;
    dup.add(k);
    out.push({ name, ttl: f.ttl, data: { type: want, ip } });
  }
  return { records: out };
}

/** plugin.SRV: weights 100 split over every entry found, targets from the entries' keys. */
function srv(x: Ctx, zone: string, name: string): { records: RR[]; extra: RR[]; err?: PluginError } {
  const l = services(x, name, zone, 'SRV');
  if (l.err) return { records: [], extra: [], err: l.err };
  const total = 100 * l.found.length;
  const records: RR[] = [];
  const extra: RR[] = [];
  const dup = new Set<string>();
  for (const f of l.found) {
    if (f.port === -1) continue;
    let weight = Math.floor((100 / total) * 100);
    if (weight === 0) weight = 1;
    const t = hostType(f);
    if (t !== 'A' && t !== 'AAAA') continue;
    const k = `${f.key} ${f.port}`;
    if (!dup.has(k)) {
      dup.add(k);
      records.push({ name, ttl: f.ttl, data: { type: 'SRV', priority: 0, weight, port: f.port, target: f.key } });
    }
    const ip = goParseIP(f.host)!;
    const a = `${f.key} ${formatIP(ip)}`;
    if (!dup.has(a)) {
      dup.add(a);
      extra.push({ name: f.key, ttl: f.ttl, data: { type: t, ip } });
    }
  }
  if (l.found.length > 0 && records.length === 0) x.why.push('no port numbers to give (the Service or its slices have no ports)');
  return { records, extra };
}

/** reverse.go Reverse / serviceRecordForIP, then plugin.PTR. */
function ptr(x: Ctx, zone: string, name: string): { records: RR[]; err?: PluginError } {
  const c = x.c;
  const ip = addressFromReverse(name);
  if (ip === undefined) {
    const l = records(x, name, zone);
    return { records: [], ...(l.err ? { err: l.err } : {}) };
  }
  const hosts: string[] = [];
  const svcs = c.servicesByClusterIP.get(ip) ?? [];
  if (svcs.length > 0) {
    const s = svcs[0]!;
    x.why.push(`${ip} is the cluster IP of ${s.namespace}/${s.name}`);
    hosts.push(joinName([s.name, s.namespace, 'svc'], c.options.zone));
  } else {
    for (const ep of c.endpointsByIP.get(ip) ?? []) {
      for (const a of ep.addresses) {
        if (a.ip !== ip) continue;
        hosts.push(joinName([endpointHostname(a), ep.service, ep.namespace, 'svc'], c.options.zone));
      }
      x.why.push(`${ip} is a ready endpoint of ${ep.namespace}/${ep.service} (EndpointSlice ${ep.slice})`);
    }
  }
  if (hosts.length === 0) {
    const written = goIPString(ip);
    x.why.push(`${written ?? ip} is no cluster IP and no ready endpoint address (as written in the objects)`);
    return { records: [], err: 'no-items' };
  }
  const out = [...new Set(hosts)].map((h): RR => ({ name, ttl: c.options.ttl, data: { type: 'PTR', target: h } }));
  return { records: out };
}

function soa(c: DnsCluster, zone: string): RR {
  const ttl = c.options.ttl;
  return {
    name: zone,
    ttl: Math.min(ttl, 300),
    data: { type: 'SOA', mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: c.options.serial, refresh: 7200, retry: 1800, expire: 86400, minimum: ttl },
  };
}

/** Answer one query as CoreDNS would (handler.go ServeDNS). */
export function serve(c: DnsCluster, qname: string, type: RRType): Served {
  const name = fqdn(qname.toLowerCase());
  const x: Ctx = { c, why: [], forwarded: [] };
  const zone = matchZone(c, name);
  const base = { name, type, answer: [] as RR[], extra: [] as RR[], authority: [] as RR[] };
  if (zone === undefined) {
    return { ...base, rcode: 'NOERROR', forwarded: [{ name, type, why: FORWARD_WHY }], why: [FORWARD_WHY] };
  }
  let recs: RR[] = [];
  let extra: RR[] = [];
  let err: PluginError | undefined;
  switch (type) {
    case 'A':
    case 'AAAA':
      ({ records: recs, err } = address(x, zone, name, type, []));
      break;
    case 'TXT': {
      const l = services(x, name, zone, 'TXT');
      err = l.err;
      recs = l.found.filter((f) => f.text !== undefined).map((f) => ({ name, ttl: f.ttl, data: { type: 'TXT', text: f.text! } }));
      break;
    }
    case 'CNAME': {
      const l = services(x, name, zone, 'CNAME');
      err = l.err;
      const first = l.found[0];
      if (first && goParseIP(first.host) === undefined && first.text === undefined) recs = [{ name, ttl: first.ttl, data: { type: 'CNAME', target: fqdn(first.host) } }];
      break;
    }
    case 'PTR':
      ({ records: recs, err } = ptr(x, zone, name));
      break;
    case 'SRV':
      ({ records: recs, extra, err } = srv(x, zone, name));
      break;
    case 'SOA':
      recs = [soa(c, zone)];
      break;
    case 'NS':
      // NS below the apex is answered like any other type (a fake A lookup: NXDOMAIN or NODATA).
      if (name !== zone) {
        err = address(x, zone, name, 'A', []).err;
        break;
      }
      {
        const found = services(x, name, zone, 'NS').found;
        // CoreDNS always knows its own address; kpc may not: the name is still ns.dns.<zone>.
        if (found.length === 0) recs.push({ name, ttl: c.options.ttl, data: { type: 'NS', target: `ns.dns.${zone}` } });
        const seen = new Set<string>();
        for (const f of found) {
          const ip = goParseIP(f.host)!;
          extra.push({ name: f.key, ttl: f.ttl, data: { type: ip.family === 'IPv4' ? 'A' : 'AAAA', ip } });
          if (seen.has(f.key)) continue;
          seen.add(f.key);
          recs.push({ name, ttl: f.ttl, data: { type: 'NS', target: f.key } });
        }
      }
      break;
    default:
      err = address(x, zone, name, 'A', []).err;
  }
  const result = (rcode: Rcode, answer: RR[], authority: RR[]): Served => ({
    ...base,
    zone,
    rcode,
    answer,
    extra: dedupRRs(extra),
    authority,
    ...(x.forwarded.length > 0 ? { forwarded: x.forwarded } : {}),
    ...(x.unknown ? { unknown: x.unknown } : {}),
    why: x.why,
  });
  if (err) {
    if (zone === IN_ADDR_ARPA || zone === IP6_ARPA) {
      const why = `not known to the plugin; fallthrough in-addr.arpa ip6.arpa hands it to the upstream resolver (not known offline)`;
      x.forwarded.push({ name, type, why });
      x.why.push(why);
      return result('NXDOMAIN', [], [soa(c, zone)]);
    }
    return result('NXDOMAIN', [], [soa(c, zone)]);
  }
  if (recs.length === 0) return result('NOERROR', [], [soa(c, zone)]);
  // CoreDNS's order is its indexes' (and the loadbalance plugin shuffles it); kpc sorts, but
  // keeps a CNAME chain in the order it was followed.
  if (!recs.some((r) => r.data.type === 'CNAME')) recs = [...recs].sort((a, b) => compareRData(a.data, b.data));
  return result('NOERROR', recs, []);
}

/**
 * The zone files: every record cluster DNS serves for the input, name by name, in RFC 1035
 * master format.
 *
 * CoreDNS has no zone file; it computes answers per query. kpc enumerates the names that have
 * answers, as the plugin's zone transfer does (plugin/kubernetes/transfer.go: Services in
 * turn, their cluster IPs, ports and endpoints, ExternalName CNAMEs), and gives each name the
 * records a query for it returns (not the transfer's shortcuts: it writes SRV weight 100 for
 * every cluster-IP port and per-slice weights for headless Services, while queries split 100
 * over every entry found, plugin/backend_lookup.go SRV). In particular:
 *
 * - `<svc>.<ns>.svc.<zone>`: A/AAAA for each cluster IP (dual-stack: both); headless: each
 *   ready endpoint's address. SRV: one per port number (all ports, named or not), target the
 *   Service (headless: each endpoint's name).
 * - `_<port>._<proto>.<svc>.<ns>.svc.<zone>` for each named port (headless: named ports of
 *   the EndpointSlices): SRV, and the same A/AAAA as the Service name.
 * - `<hostname>.<svc>.<ns>.svc.<zone>` for each ready endpoint, headless or not: A/AAAA and
 *   SRV for its slice's ports. The hostname is the endpoint's `hostname`, else its dashed
 *   address (model.ts endpointHostname).
 * - ExternalName: a CNAME at the Service's name.
 * - PTR: each cluster IP → the Service's name; each ready endpoint address that is no cluster
 *   IP → its endpoint name, once per Service whose slices hold it.
 * - The apex SOA and NS, the name servers' address records at ns.dns.<zone>, and
 *   dns-version.<zone> TXT "1.1.0".
 *
 * Written independently of coredns.ts (the query model); the tests hold the two against each
 * other through a DNS server loaded with these files.
 */

import { compareStrings } from '../go/strings.js';
import { formatIP, type IP } from '../net/ip.js';
import { DNS_SCHEMA_VERSION, DNS_VERSION_TTL, endpointHostname, serviceKey, serviceName, type DnsAddress, type DnsCluster, type DnsEndpoints, type DnsService } from './model.js';
import { goIPString, goParseIP, isSubdomain, joinName, relativeName, reverseName, reverseZone } from './names.js';
import { compareRData, rdataText, type RR } from './rr.js';

export interface ZoneGroup {
  /** A comment line above the group (`; shop/db: headless`). */
  comment?: string;
  records: RR[];
  /** Trailing comments per record (same index), e.g. the address a PTR owner stands for. */
  trailing?: (string | undefined)[];
}

export interface Zone {
  origin: string;
  /** Comment lines at the top of the file. */
  header: string[];
  groups: ZoneGroup[];
}

/** SRV weight as plugin.SRV computes it for `n` entries of priority 0 and no weight. */
export function srvWeight(n: number): number {
  const w = Math.floor((100 / (100 * n)) * 100);
  return w === 0 ? 1 : w;
}

function addressRR(name: string, ttl: number, ip: IP): RR {
  return { name, ttl, data: { type: ip.family === 'IPv4' ? 'A' : 'AAAA', ip } };
}

function sortRecords(rrs: RR[]): RR[] {
  const seen = new Set<string>();
  return rrs
    .filter((r) => {
      const k = `${r.name} ${r.data.type} ${rdataText(r.data)}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => compareRData(a.data, b.data));
}

/** A name's records: its addresses, then one SRV per (target, port) of the entries. */
function nameRecords(name: string, ttl: number, addrs: IP[], entries: { target: string; port: number }[]): RR[] {
  const out: RR[] = addrs.map((ip) => addressRR(name, ttl, ip));
  const weight = srvWeight(entries.length);
  for (const e of entries) {
    if (e.port === -1) continue;
    out.push({ name, ttl, data: { type: 'SRV', priority: 0, weight, port: e.port, target: e.target } });
  }
  return sortRecords(out);
}

interface Pair {
  addr: DnsAddress;
  ip: IP;
  host: string;
  port: { name: string; protocol: string; port: number };
}

/** Every (ready address, slice port) of a Service's slices, as findServices walks them. */
function pairs(eps: readonly DnsEndpoints[]): Pair[] {
  const out: Pair[] = [];
  for (const ep of eps) {
    for (const addr of ep.addresses) {
      const ip = goParseIP(addr.ip);
      if (!ip) continue;
      for (const port of ep.ports) out.push({ addr, ip, host: endpointHostname(addr), port });
    }
  }
  return out;
}

/** The endpoint names of a Service (headless or not): one per hostname. */
function endpointGroups(base: string, ttl: number, ps: Pair[]): RR[][] {
  const byHost = new Map<string, Pair[]>();
  for (const p of ps) {
    const list = byHost.get(p.host);
    if (list) list.push(p);
    else byHost.set(p.host, [p]);
  }
  return [...byHost.keys()].sort(compareStrings).map((host) => {
    const name = joinName([host], base);
    const list = byHost.get(host)!;
    return nameRecords(
      name,
      ttl,
      list.map((p) => p.ip),
      list.map((p) => ({ target: name, port: p.port.port })),
    );
  });
}

function serviceGroup(c: DnsCluster, svc: DnsService): ZoneGroup | undefined {
  const zone = c.options.zone;
  const ttl = c.options.ttl;
  const base = serviceName(svc, zone);
  const id = `${svc.namespace}/${svc.name}`;
  if (svc.type === 'ExternalName') {
    const host = svc.externalName;
    if (goParseIP(host) !== undefined) return { comment: `${id}: ExternalName ${host} is an IP address; CoreDNS serves nothing for it`, records: [] };
    const target = host.endsWith('.') ? host : `${host}.`;
    if (isSubdomain(target, base)) return { comment: `${id}: ExternalName ${host} points at or below its own name; CoreDNS drops such a CNAME`, records: [] };
    return { comment: `${id}: ExternalName`, records: [{ name: base, ttl, data: { type: 'CNAME', target: joinName(target.slice(0, -1).split('.'), '.') } }] };
  }
  const eps = c.endpointsByIndex.get(serviceKey(svc.name, svc.namespace)) ?? [];
  const ps = pairs(eps);
  const notReady = eps.reduce((n, e) => n + e.notReady.length, 0);
  const left = notReady > 0 ? `; ${notReady} not-ready endpoint address${notReady > 1 ? 'es' : ''} left out` : '';
  const records: RR[] = [];
  if (svc.headless) {
    if (ps.length === 0) return { comment: `${id}: headless, no ready endpoints (NXDOMAIN)${left}`, records: [] };
    const ips = ps.map((p) => p.ip);
    records.push(...nameRecords(base, ttl, ips, ps.map((p) => ({ target: joinName([p.host], base), port: p.port.port }))));
    const named = new Map<string, Pair[]>();
    for (const p of ps) {
      if (p.port.name === '') continue;
      const key = `_${p.port.name.toLowerCase()}._${p.port.protocol.toLowerCase()}`;
      const list = named.get(key);
      if (list) list.push(p);
      else named.set(key, [p]);
    }
    for (const key of [...named.keys()].sort(compareStrings)) {
      const list = named.get(key)!;
      const [port, proto] = key.split('.') as [string, string];
      records.push(...nameRecords(joinName([port, proto], base), ttl, list.map((p) => p.ip), list.map((p) => ({ target: joinName([p.host], base), port: p.port.port }))));
    }
    for (const g of endpointGroups(base, ttl, ps)) records.push(...g);
    return { comment: `${id}: headless${left}`, records };
  }
  const ips = svc.clusterIPs.map(goParseIP).filter((ip): ip is IP => ip !== undefined);
  const entries = svc.ports.flatMap((p) => ips.map(() => ({ target: base, port: p.port })));
  records.push(...nameRecords(base, ttl, ips, entries));
  const named = svc.ports.filter((p) => p.name !== '').map((p) => ({ p, labels: [`_${p.name.toLowerCase()}`, `_${p.protocol.toLowerCase()}`] }));
  named.sort((a, b) => compareStrings(a.labels.join('.'), b.labels.join('.')));
  for (const { p, labels } of named) {
    records.push(...nameRecords(joinName(labels, base), ttl, ips, ips.map(() => ({ target: base, port: p.port }))));
  }
  for (const g of endpointGroups(base, ttl, ps)) records.push(...g);
  return { comment: `${id}: ${svc.type}${left}`, records };
}

function nsTargets(c: DnsCluster): string[] {
  const names = [...new Set(c.nsAddrs.map((a) => a.name))].sort(compareStrings);
  return names.length > 0 ? names : [`ns.dns.${c.options.zone}`];
}

function soaRR(c: DnsCluster, origin: string): RR {
  const zone = c.options.zone;
  return {
    name: origin,
    ttl: Math.min(c.options.ttl, 300),
    data: { type: 'SOA', mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: c.options.serial, refresh: 7200, retry: 1800, expire: 86400, minimum: c.options.ttl },
  };
}

function forwardZone(c: DnsCluster): Zone {
  const zone = c.options.zone;
  const ttl = c.options.ttl;
  const apex: RR[] = [soaRR(c, zone), ...nsTargets(c).map((t): RR => ({ name: zone, ttl, data: { type: 'NS', target: t } }))];
  const nsdns = `ns.dns.${zone}`;
  const nsAddrs = c.nsAddrs.map((a) => addressRR(nsdns, ttl, a.ip));
  const groups: ZoneGroup[] = [
    { records: apex },
    { records: [...sortRecords(nsAddrs), { name: `dns-version.${zone}`, ttl: DNS_VERSION_TTL, data: { type: 'TXT', text: DNS_SCHEMA_VERSION } }] },
  ];
  for (const svc of c.services) {
    if (!c.namespaces.has(svc.namespace)) continue;
    const g = serviceGroup(c, svc);
    if (g) groups.push(g);
  }
  const header = [
    `; zone ${zone.slice(0, -1)}: the records CoreDNS's kubernetes plugin serves for the input (kpc dns)`,
    `; SOA serial ${c.options.serial} is kpc's (--serial): CoreDNS uses the Unix time of the last change it saw`,
    `; NS: ${c.nsSource}`,
  ];
  if (c.nsAddrs.length === 0) header.push(`; ns.dns.${zone.slice(0, -1)} has no address here: CoreDNS answers its own pod address, which kpc cannot know (--dns-pod-ip)`);
  return { origin: zone, header, groups };
}

function reverseZones(c: DnsCluster): Zone[] {
  const zone = c.options.zone;
  const ttl = c.options.ttl;
  const ptrs = new Map<string, { ip: IP; targets: string[] }>();
  const add = (ip: IP, target: string) => {
    const key = formatIP(ip);
    const e = ptrs.get(key);
    if (e) {
      if (!e.targets.includes(target)) e.targets.push(target);
    } else ptrs.set(key, { ip, targets: [target] });
  };
  // CoreDNS's indexes hold addresses as the objects write them and are asked with the address
  // as Go prints it: only canonically written addresses have PTR records.
  const clusterIPs = new Set<string>();
  for (const svc of c.services) {
    if (svc.type === 'ExternalName' || svc.headless) continue;
    for (const t of svc.clusterIPs) {
      if (goIPString(t) !== t || clusterIPs.has(t)) continue;
      clusterIPs.add(t);
      add(goParseIP(t)!, serviceName(svc, zone));
    }
  }
  for (const ep of c.endpoints) {
    for (const a of ep.addresses) {
      if (goIPString(a.ip) !== a.ip || clusterIPs.has(a.ip)) continue;
      add(goParseIP(a.ip)!, joinName([endpointHostname(a), ep.service, ep.namespace, 'svc'], zone));
    }
  }
  const byZone = new Map<string, { ip: IP; targets: string[] }[]>();
  for (const e of ptrs.values()) {
    const z = reverseZone(e.ip);
    const list = byZone.get(z);
    if (list) list.push(e);
    else byZone.set(z, [e]);
  }
  const zoneKey = (list: { ip: IP }[]) => {
    const ip = list[0]!.ip;
    return ip.family === 'IPv4' ? ip.bytes[0]! : 256 + ((ip.bytes[0]! << 8) | ip.bytes[1]!);
  };
  const out: Zone[] = [];
  for (const [origin, list] of [...byZone].sort((a, b) => zoneKey(a[1]) - zoneKey(b[1]))) {
    list.sort((a, b) => {
      for (let i = 0; i < a.ip.bytes.length; i++) if (a.ip.bytes[i] !== b.ip.bytes[i]) return a.ip.bytes[i]! - b.ip.bytes[i]!;
      return 0;
    });
    const records: RR[] = [];
    const trailing: (string | undefined)[] = [];
    for (const e of list) {
      for (const t of [...e.targets].sort(compareStrings)) {
        records.push({ name: reverseName(e.ip), ttl, data: { type: 'PTR', target: t } });
        trailing.push(formatIP(e.ip));
      }
    }
    out.push({
      origin,
      header: [
        `; zone ${origin.slice(0, -1)}: PTR records CoreDNS's kubernetes plugin serves for the input (kpc dns)`,
        `; CoreDNS serves ${origin.endsWith('.in-addr.arpa.') ? 'in-addr.arpa' : 'ip6.arpa'} whole; kpc cuts a zone per ${origin.endsWith('.in-addr.arpa.') ? 'first octet' : 'first 16 bits'}, with SOA and NS of its own`,
      ],
      groups: [{ records: [soaRR(c, origin), ...nsTargets(c).map((t): RR => ({ name: origin, ttl, data: { type: 'NS', target: t } }))] }, { records, trailing }],
    });
  }
  return out;
}

/** The forward zone, then the reverse zones (IPv4 by first octet, then IPv6). */
export function buildZones(c: DnsCluster): Zone[] {
  return [forwardZone(c), ...reverseZones(c)];
}

/** The zone file's text: header comments, $ORIGIN, $TTL, then each group. */
export function renderZone(z: Zone, defaultTTL: number): string {
  const lines: string[] = [...z.header, `$ORIGIN ${z.origin}`, `$TTL ${defaultTTL}`];
  for (const g of z.groups) {
    if (g.records.length === 0 && g.comment === undefined) continue;
    if (g.comment !== undefined) lines.push('', `; ${g.comment}`);
    g.records.forEach((rr, i) => {
      const tail = g.trailing?.[i];
      lines.push(`${relativeName(rr.name, z.origin)} ${rr.ttl} IN ${rr.data.type} ${rdataText(rr.data)}${tail ? ` ; ${tail}` : ''}`);
    });
  }
  return `${lines.join('\n')}\n`;
}

/** The file name `-o DIR` writes a zone to: `cluster.local.zone`, `10.in-addr.arpa.zone`. */
export function zoneFileName(z: Zone): string {
  return `${z.origin.slice(0, -1)}.zone`;
}

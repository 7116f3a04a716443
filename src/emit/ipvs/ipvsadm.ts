/**
 * `ipvs.rules`: the virtual servers as `ipvsadm -R` input, written exactly as
 * `ipvsadm-save -n` (ipvsadm -S -n) prints the same table, so the two can be compared.
 *
 *   [--set <tcp> <tcpfin> <udp>]                       (only when an IPVS timeout is configured)
 *   -A -t|-u|--sctp-service <vip>:<port> -s <sched>[ -p <timeout>][ -b mh-port]
 *   -a -t|-u|--sctp-service <vip>:<port> -r <ip>:<port> -m -w 1      (per real server)
 *
 * IPv6 addresses are bracketed. kube-proxy's netmask is always full, so `-M` never appears;
 * thresholds are never printed by ipvsadm.
 *
 * Order: ipvsadm sorts services with ipvs_cmp_services and destinations with ipvs_cmp_dests
 * (libipvs), via glibc qsort. Both subtract two unsigned 32-bit address words into an `int`,
 * so addresses that differ by 2^31 or more compare "the wrong way round": 192.168.1.10 sorts
 * BEFORE 10.96.0.10. kpc reproduces that comparison and glibc's merge sort; when all the
 * addresses fit in half the address circle (the usual case) the result does not depend on the
 * kernel's listing order, otherwise ipvsadm's own output can vary with it.
 */

import type { Protocol, ProxyKnobs } from '../../ir/model.js';
import { compareIPs, formatHostPort, type IP, type IPFamily } from '../../net/ip.js';
import { glibcMergeSort } from './order.js';
import { canonicalIPValue, safeIP, safePort, safeScheduler, safeSeconds, unsafeOutput } from './safe-text.js';
import type { IpvsState, RealServer, VirtualServer } from './state.js';

const PROTOCOL_NUMBER: Record<Protocol, number> = { TCP: 6, UDP: 17, SCTP: 132 };
const SERVICE_OPTION: Record<Protocol, string> = { TCP: '-t', UDP: '-u', SCTP: '--sctp-service' };
const AF: Record<IPFamily, number> = { IPv4: 2, IPv6: 10 };

/** The address as libipvs' host-order 32-bit words (1 for IPv4, 4 for IPv6). */
function words(ip: IP): number[] {
  const b = ip.bytes;
  const out: number[] = [];
  for (let i = 0; i < b.length; i += 4) out.push(((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!);
  return out;
}

/** C's `int r = ntohl(a) - ntohl(b)`: the unsigned difference read as a signed int. */
function cIntDiff(a: number, b: number): number {
  return (a - b) | 0;
}

function compareAddressWords(a: number[], b: number[]): number {
  let r = 0;
  for (let i = 0; r === 0 && i < a.length; i++) r = cIntDiff(a[i]!, b[i]!);
  return r;
}

interface SortableService {
  vs: VirtualServer;
  af: number;
  proto: number;
  addr: number[];
}

/** libipvs ipvs_cmp_services: fwmark (always 0 here), af, protocol, address, port. */
function cmpServices(a: SortableService, b: SortableService): number {
  return a.af - b.af || a.proto - b.proto || compareAddressWords(a.addr, b.addr) || a.vs.port - b.vs.port;
}

/** libipvs ipvs_cmp_dests: address, port. */
function cmpDests(a: { rs: RealServer; addr: number[] }, b: { rs: RealServer; addr: number[] }): number {
  return compareAddressWords(a.addr, b.addr) || a.rs.port - b.rs.port;
}

/** The services in `ipvsadm -S` order (see the file comment). Each address is parsed once. */
export function sortVirtualServers(list: readonly VirtualServer[], family: IPFamily): VirtualServer[] {
  const items = list.map((vs) => {
    const ip = canonicalIPValue(vs.ip);
    return { vs, ip, af: AF[family], proto: PROTOCOL_NUMBER[vs.protocol], addr: words(ip) };
  });
  // A fixed input order, so that even an inconsistent comparison gives one answer.
  items.sort((a, b) => a.proto - b.proto || compareIPs(a.ip, b.ip) || a.vs.port - b.vs.port);
  return glibcMergeSort(items, cmpServices).map((i) => i.vs);
}

export function sortRealServers(list: readonly RealServer[]): RealServer[] {
  const items = list.map((rs) => {
    const ip = canonicalIPValue(rs.ip);
    return { rs, ip, addr: words(ip) };
  });
  items.sort((a, b) => compareIPs(a.ip, b.ip) || a.rs.port - b.rs.port);
  return glibcMergeSort(items, cmpDests).map((i) => i.rs);
}

function hostPort(ip: string, port: number, family: IPFamily): string {
  safeIP(ip, family);
  safePort(port);
  return formatHostPort(ip, port);
}

/** `-t 10.96.0.1:443`, `-u [fd00::a]:53`, `--sctp-service 10.96.0.5:80`. */
export function serviceArgs(vs: Pick<VirtualServer, 'protocol' | 'ip' | 'port'>, family: IPFamily): string {
  return `${SERVICE_OPTION[vs.protocol]} ${hostPort(vs.ip, vs.port, family)}`;
}

export function serviceLine(vs: VirtualServer, family: IPFamily): string {
  let line = `-A ${serviceArgs(vs, family)} -s ${safeScheduler(vs.scheduler)}`;
  if (vs.persistenceTimeout !== undefined) line += ` -p ${safeSeconds(vs.persistenceTimeout)}`;
  if (vs.schedFlags !== undefined) {
    if (vs.schedFlags !== 'mh-port') throw unsafeOutput('scheduler flags', vs.schedFlags);
    line += ` -b ${vs.schedFlags}`;
  }
  return line;
}

export function realServerLine(vs: VirtualServer, rs: RealServer, family: IPFamily, args = serviceArgs(vs, family)): string {
  return `-a ${args} -r ${hostPort(rs.ip, rs.port, family)} -m -w 1`;
}

/** `--set tcp tcpfin udp` when any IPVS timeout is set (kube-proxy's ConfigureTimeouts). */
export function timeoutLine(knobs: ProxyKnobs): string | undefined {
  const { tcpTimeout: tcp, tcpFinTimeout: fin, udpTimeout: udp } = knobs.ipvs;
  if (!(tcp > 0 || fin > 0 || udp > 0)) return undefined;
  return `--set ${safeSeconds(tcp)} ${safeSeconds(fin)} ${safeSeconds(udp)}`;
}

export function renderIpvsRules(state: IpvsState, knobs: ProxyKnobs): string {
  const lines: string[] = [];
  const timeouts = timeoutLine(knobs);
  if (timeouts !== undefined) lines.push(timeouts);
  for (const vs of sortVirtualServers(state.virtualServers, state.family)) {
    lines.push(serviceLine(vs, state.family));
    const args = serviceArgs(vs, state.family); // checked once, not per real server
    for (const rs of sortRealServers(vs.realServers)) lines.push(realServerLine(vs, rs, state.family, args));
  }
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/**
 * Guards for everything the IPVS bundle writes (defence in depth behind validation and the
 * IR's canonical values). Each check whitelists the characters its value can have, so no
 * newline, quote, backslash, `$` or other shell or parser metacharacter can reach
 * ipvsadm -R, ipset restore, iptables-restore or apply.sh. A failure is an internal error.
 */

import { formatIP, parseCIDR, parseIP, type IP, type IPFamily } from '../../net/ip.js';
import { unsafeOutput } from '../../lang/iptables/safe-text.js';
import { isKnownScheduler } from './scheduler.js';

export { unsafeOutput };

/** The parsed form of a canonical address (any family); anything else is an internal error. */
export function canonicalIPValue(text: string): IP {
  const p = parseIP(text);
  if (!p || formatIP(p.ip) !== text) throw unsafeOutput('address', text);
  return p.ip;
}

/** A canonical IP of the expected family, exactly as kpc prints it. */
export function safeIP(text: string, family: IPFamily): string {
  const p = parseIP(text);
  if (!p || p.ip.family !== family || formatIP(p.ip) !== text) throw unsafeOutput('address', text);
  return text;
}

/** A canonical CIDR (network address) of the expected family. */
export function safeCIDR(text: string, family: IPFamily): string {
  const p = parseCIDR(text);
  if (!p || p.sloppy !== undefined || p.cidr.ip.family !== family || `${formatIP(p.cidr.ip)}/${p.cidr.prefix}` !== text) {
    throw unsafeOutput('CIDR', text);
  }
  return text;
}

export function safePort(port: number, min = 0): number {
  if (!Number.isInteger(port) || port < min || port > 65535) throw unsafeOutput('port', String(port));
  return port;
}

export function safeProtocol(proto: string): 'tcp' | 'udp' | 'sctp' {
  if (proto !== 'tcp' && proto !== 'udp' && proto !== 'sctp') throw unsafeOutput('protocol', proto);
  return proto;
}

export function safeScheduler(name: string): string {
  if (!isKnownScheduler(name)) throw unsafeOutput('IPVS scheduler', name);
  return name;
}

/** ipset names: kube-proxy's fixed names, `KUBE-` upper case, at most 31 characters. */
export function safeSetName(name: string): string {
  if (!/^KUBE-[A-Z0-9-]{1,26}$/.test(name)) throw unsafeOutput('ipset name', name);
  return name;
}

/** An ipset entry: addresses, `proto:port`, CIDRs and commas only. */
export function safeSetEntry(entry: string): string {
  if (!/^[0-9a-f.:,/a-z]{1,120}$/.test(entry)) throw unsafeOutput('ipset entry', entry);
  return entry;
}

/**
 * kube-proxy's fixed `-m comment` texts for the ipsets and jumps. Unlike the iptables-mode
 * guard this allows `+`, `=` and `'`, which these constants contain; never `"` or `\`.
 */
export function fixedComment(text: string): string {
  if (!/^[A-Za-z0-9 .:+=',_-]{1,255}$/.test(text)) throw unsafeOutput('comment', text);
  return `"${text}"`;
}

export function safeSeconds(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 2 ** 31 - 1) throw unsafeOutput('timeout', String(value));
  return value;
}

/**
 * One line of a file that apply.sh embeds in a quoted here-document: printable ASCII only, and
 * never the terminator line (the caller checks that too).
 */
export function safeHeredocLine(line: string): string {
  if (!/^[\x20-\x7e]*$/.test(line)) throw unsafeOutput('line', line);
  return line;
}

/**
 * A rule's canonical form: one string that is the same for every spelling of the same
 * kernel rule. kpc's (= kube-proxy's) restore text and a node's `iptables-save` differ in
 * argument order (`-d … -p tcp` first), quoting, `/32` suffixes, `--set-xmark` for
 * `--or-mark`, 11-digit probabilities, `--reject-with` defaults and `recent`'s defaults;
 * comparing canonical forms shows no false changes between them.
 *
 * The form follows iptables-save's own order, which is the kernel's: the core matches
 * (-s -d -i -o -p -f) first, then the match modules in the order the rule loads them, then
 * the target. Values are printed from parsed numbers and addresses, never copied.
 */

import { formatIP, type IP } from '../../net/ip.js';
import type { AddressMatchSpec, Match, Rule, Target } from './model.js';

function prefixLength(mask: Uint8Array): number | undefined {
  let n = 0;
  let k = 0;
  for (; k < mask.length && mask[k] === 0xff; k++) n += 8;
  if (k < mask.length) {
    let b = mask[k]!;
    while (b & 0x80) {
      n++;
      b = (b << 1) & 0xff;
    }
    if (b !== 0) return undefined;
    for (k++; k < mask.length; k++) if (mask[k] !== 0) return undefined;
  }
  return n;
}

function address(a: AddressMatchSpec): string {
  const ip: IP = { family: a.family, bytes: a.bytes };
  const prefix = prefixLength(a.mask);
  return `${formatIP(ip)}/${prefix ?? formatIP({ family: a.family, bytes: a.mask })}`;
}

const not = (negated: boolean) => (negated ? '! ' : '');

function isCore(m: Match): boolean {
  return m.kind === 'address' || m.kind === 'protocol' || m.kind === 'interface' || m.kind === 'fragment';
}

const CORE_ORDER: Record<string, number> = { 'address:source': 0, 'address:destination': 1, 'interface:in': 2, 'interface:out': 3, protocol: 4, fragment: 5 };

function coreRank(m: Match): number {
  if (m.kind === 'address' || m.kind === 'interface') return CORE_ORDER[`${m.kind}:${m.which}`]!;
  return CORE_ORDER[m.kind]!;
}

/** The kernel keeps statistic's probability as a 32-bit fraction of 2^31. */
function probabilityUnits(p: number): number {
  return Math.round(p * 0x80000000);
}

function match(m: Match): string {
  switch (m.kind) {
    case 'address':
      return `${not(m.negated)}-${m.which === 'source' ? 's' : 'd'} ${m.addresses.map(address).join(',')}`;
    case 'protocol':
      return `${not(m.negated)}-p ${m.protocol}`;
    case 'interface':
      return `${not(m.negated)}-${m.which === 'in' ? 'i' : 'o'} ${m.name}`;
    case 'fragment':
      return `${not(m.negated)}-f`;
    case 'port':
      return `-m ${m.module} ${not(m.negated)}--${m.which === 'source' ? 's' : m.which === 'destination' ? 'd' : ''}port ${m.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}:${b}`)).join(',')}`;
    case 'tcp-flags':
      return `-m tcp ${not(m.negated)}--tcp-flags ${[...m.mask].sort().join(',')} ${[...m.comp].sort().join(',')}`;
    case 'addrtype':
      return `-m addrtype ${not(m.negated)}--${m.which === 'source' ? 'src' : 'dst'}-type ${[...m.types].sort().join(',')}`;
    case 'ctstate':
      return `-m conntrack ${not(m.negated)}--ctstate ${[...m.states].sort().join(',')}`;
    case 'mark':
      return `-m ${m.on === 'packet' ? 'mark' : 'connmark'} ${not(m.negated)}--mark 0x${m.value.toString(16)}/0x${m.mask.toString(16)}`;
    case 'random':
      return `-m statistic --mode random ${not(m.negated)}--probability ${probabilityUnits(m.probability)}`;
    case 'recent':
      return `-m recent ${not(m.negated)}--${m.action}${m.seconds !== undefined ? ` --seconds ${m.seconds}` : ''}${m.reap ? ' --reap' : ''} --name ${m.name}`;
    case 'comment':
      return `-m comment --comment ${JSON.stringify(m.text)}`;
    case 'nfacct':
      return `-m nfacct --nfacct-name ${m.name}`;
    case 'iprange':
      return `-m iprange ${not(m.negated)}--${m.which === 'source' ? 'src' : 'dst'}-range ${address(m.from)}-${address(m.to)}`;
    case 'neutral':
    case 'unsupported':
      if (m.module === 'ipvs') return ipvsMatch(m.text);
      return `-m ${m.module} ${m.text}`;
  }
}

const IPVS_PROTOCOLS: Readonly<Record<string, string>> = { tcp: '6', udp: '17', sctp: '132' };
const IPVS_OPTION_ORDER = ['ipvs', 'vproto', 'vaddr', 'vport', 'vdir', 'vmethod', 'vportctl'];

/**
 * The `ipvs` match (IPVS mode's KUBE-IPVS-OUT-FILTER) as iptables-save prints it: options in
 * libxt_ipvs' order, `--vproto` as a number, a host `--vaddr` without its prefix. kube-proxy
 * writes `--vaddr A --vproto tcp --vport P`.
 */
function ipvsMatch(text: string): string {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const opts: { name: string; negated: boolean; value?: string }[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-m') {
      i++;
      continue;
    }
    const negated = w === '!';
    const name = (negated ? words[++i] : w)?.replace(/^--/, '') ?? '';
    const value = name === 'ipvs' ? undefined : words[++i];
    opts.push({ name, negated, ...(value !== undefined ? { value } : {}) });
  }
  const rank = (n: string) => (IPVS_OPTION_ORDER.indexOf(n) + 1 || IPVS_OPTION_ORDER.length + 1);
  opts.sort((a, b) => rank(a.name) - rank(b.name));
  const out = opts.map((o) => {
    let value = o.value;
    if (value !== undefined && o.name === 'vproto') value = IPVS_PROTOCOLS[value.toLowerCase()] ?? value;
    if (value !== undefined && o.name === 'vaddr') value = value.replace(/\/(32|128)$/, '');
    return `${o.negated ? '! ' : ''}--${o.name}${value !== undefined ? ` ${value}` : ''}`;
  });
  return ['-m ipvs', ...out].join(' ');
}

function target(t: Target | undefined, family: 'IPv4' | 'IPv6'): string {
  if (!t) return '';
  switch (t.kind) {
    case 'chain':
      return `${t.goto ? '-g' : '-j'} ${t.chain}`;
    case 'ACCEPT':
    case 'DROP':
    case 'RETURN':
      return `-j ${t.kind}`;
    case 'REJECT': {
      // iptables-save prints the default the restore input left out.
      const dflt = family === 'IPv4' ? 'icmp-port-unreachable' : 'icmp6-port-unreachable';
      return `-j REJECT --reject-with ${t.rejectWith ?? dflt}`;
    }
    case 'DNAT':
      return `-j DNAT --to-destination ${t.to}`;
    case 'SNAT':
      return `-j SNAT --to-source ${t.to}`;
    case 'MASQUERADE':
      return `-j MASQUERADE${t.options.length > 0 ? ` ${[...t.options].sort().join(' ')}` : ''}`;
    case 'MARK':
      return `-j MARK --set-xmark 0x${t.value.toString(16)}/0x${t.mask.toString(16)}`;
    case 'CONNMARK':
      return `-j CONNMARK ${t.text}`;
    case 'other':
      return `-j ${t.name}${t.options.length > 0 ? ` ${t.options.join(' ')}` : ''}`;
  }
}

/** The canonical text of a rule (without its chain). */
export function canonicalRule(rule: Pick<Rule, 'matches' | 'target'>, family: 'IPv4' | 'IPv6'): string {
  const core = rule.matches.filter(isCore).sort((a, b) => coreRank(a) - coreRank(b));
  const modules = rule.matches.filter((m) => !isCore(m));
  return [...core.map(match), ...modules.map(match), target(rule.target, family)].filter((s) => s !== '').join(' ');
}

/**
 * normalise.ts — turn what kpc writes (restore inputs) and what the real tools print back
 * (`ipvsadm-save -n`, `ipset save`, `iptables-save`, `ip -o addr show`) into ONE canonical text
 * each, so a VM test can assert "the kernel reads back what kpc wrote":
 *
 *   expect(normaliseIpvs(out.stdout)).toBe(normaliseIpvs(files['ipvs.rules']));
 *
 * Each function accepts both sides (a restore file is replayed onto an empty state; a save dump
 * is the same grammar) and applies the rewrites the tools are known to make. Observed with
 * ipvsadm 1.31, ipset 7.17, iptables 1.8.9 (nf_tables and legacy), iproute2 6.1 on Debian's
 * 6.1 cloud kernel; see shared/spec/ipvs-real-kernel.md §4-5 and test/vm/README.md.
 *
 * ipvsadm (`-S` vs `-R` input):
 *   - services and real servers are SORTED by ipvsadm -S, with a comparator that is not numeric
 *     for addresses > 2^31 apart: both sides are re-sorted here (fwmark last, IPv4 before IPv6,
 *     tcp < udp < sctp, address numerically, port);
 *   - defaults become explicit: -s wlc, -w 1, forwarding -g, -p alone = -p 360,
 *     -i gets --tun-type ipip; -M is printed only when not the full mask (IPv6 as a length);
 *   - -x/-y thresholds are never printed (dropped); names (:http) and IPv6 text canonicalised;
 *   - for -g/-i the real-server port is forced to the service port (a missing one too).
 * ipset (`save` vs `restore` input):
 *   - `bucketsize N initval 0x...` added to hash sets (dropped unless keepInitval);
 *   - hash sets always print family/hashsize/maxelem (defaults inet/1024/65536 filled in; no
 *     family for hash:mac), hashsize rounded up to a power of two (min 64);
 *   - host-length CIDRs print without the prefix (1.2.3.4/32 -> 1.2.3.4); port names -> numbers;
 *   - member order is hash order (or -sorted): members sorted; sets sorted by name;
 *   - -exist, flush, destroy, del are replayed.
 * iptables (`iptables-save` vs `iptables-restore --noflush` input):
 *   - comments (# Generated/Completed) and counters dropped; user chains listed sorted, rules
 *     grouped per chain (builtin chains first, in hook order; then user chains sorted), rule
 *     order within a chain kept;
 *   - builtin chains with policy ACCEPT and no rules, and tables left empty, are dropped (a
 *     fresh table shows them; a --noflush input does not declare them);
 *   - `[!] -s/-d/-i/-o/-p` move to the front in that order; bare -s/-d addresses get /32 (/128);
 *   - `-p tcp|udp|sctp --dport/--sport...` gets `-m tcp|udp|sctp`;
 *   - MARK: --or-mark X -> --set-xmark X/X, --xor-mark X -> --set-xmark X/0x0, --and-mark X ->
 *     --set-xmark 0x0/~X, --set-mark X[/M] -> --set-xmark X/M (M default 0xffffffff); -m mark
 *     --mark X[/M] printed in shortest hex, mask omitted when 0xffffffff;
 *   - -j REJECT gets --reject-with icmp-port-unreachable (icmp6-port-unreachable for ipv6);
 *   - -m ipvs options in the order --vproto --vaddr --vport --vdir --vmethod --vportctl, /32
 *     dropped from --vaddr;
 *   - quoting: a --comment value is quoted unless it is only [A-Za-z0-9_-] (xtables_save_string);
 *     other arguments are quoted iff they hold whitespace or a quote.
 * kube-ipvs0: `ip -o addr show dev kube-ipvs0` or an address-per-line file -> sorted "addr/len".
 */
import { existsSync, readFileSync } from 'node:fs';

// ---------------------------------------------------------------------------------------------
// Addresses, ports, tokens
// ---------------------------------------------------------------------------------------------

/** Canonical IPv4 (dotted, no leading zeros) or IPv6 (RFC 5952) text; other text unchanged. */
export function canonicalIp(ip: string): string {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) return ip.split('.').map((o) => String(Number(o))).join('.');
  if (!ip.includes(':')) return ip;
  const words = ipv6Words(ip);
  if (!words) return ip;
  // longest run (>= 2) of zero words becomes "::"
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function ipv6Words(ip: string): number[] | undefined {
  let s = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const o = v4.slice(1, 5).map(Number);
    s = s.slice(0, v4.index) + `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => (/^[0-9a-f]{1,4}$/.test(h) ? parseInt(h, 16) : NaN)));
  let words: number[];
  if (s.includes('::')) {
    const halves = s.split('::');
    if (halves.length !== 2) return undefined;
    const left = parse(halves[0]!);
    const right = parse(halves[1]!);
    const fill = 8 - left.length - right.length;
    if (fill < 1) return undefined;
    words = [...left, ...new Array<number>(fill).fill(0), ...right];
  } else {
    words = parse(s);
  }
  if (words.length !== 8 || words.some((w) => !Number.isInteger(w))) return undefined;
  return words;
}

/** Sort key of an address: family, then numeric value (as a zero-padded hex string). */
function ipSortKey(ip: string): string {
  if (/^\d+(\.\d+){3}$/.test(ip)) return '4' + ip.split('.').map((o) => Number(o).toString(16).padStart(2, '0')).join('');
  const w = ipv6Words(ip);
  return w ? '6' + w.map((x) => x.toString(16).padStart(4, '0')).join('') : '9' + ip;
}

let servicesCache: Map<string, number> | undefined;
/** Port numbers of /etc/services names ("http/tcp" -> 80), as the tools resolve them. */
function serviceNames(): Map<string, number> {
  if (servicesCache) return servicesCache;
  servicesCache = new Map();
  const path = '/etc/services';
  if (existsSync(path)) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const m = /^([A-Za-z0-9][\w.+-]*)\s+(\d+)\/(\w+)((?:\s+[^\s#]+)*)/.exec(line);
      if (!m) continue;
      for (const name of [m[1]!, ...m[4]!.trim().split(/\s+/).filter(Boolean)]) {
        const k = `${name}/${m[3]}`;
        if (!servicesCache.has(k)) servicesCache.set(k, Number(m[2]));
      }
    }
  }
  return servicesCache;
}

function portNumber(port: string, proto: string): string {
  if (/^\d+$/.test(port)) return String(Number(port));
  const n = serviceNames().get(`${port}/${proto}`) ?? serviceNames().get(`${port}/tcp`);
  return n === undefined ? port : String(n);
}

/** Split a line into words like a shell would for these files: "..." and '...' group words. */
export function tokenize(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inTok = false;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === '\\' && quote === '"' && (line[i + 1] === '"' || line[i + 1] === '\\')) {
        cur += line[++i];
      } else if (ch === quote) {
        quote = undefined;
      } else {
        cur += ch;
      }
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inTok = true;
    } else if (/\s/.test(ch)) {
      if (inTok) out.push(cur);
      cur = '';
      inTok = false;
    } else {
      cur += ch;
      inTok = true;
    }
  }
  if (inTok) out.push(cur);
  return out;
}

function quoteWord(w: string): string {
  if (w === '' || /[\s"']/.test(w)) return `"${w.replace(/(["\\])/g, '\\$1')}"`;
  return w;
}

/** iptables' xtables_save_string(): quoted unless only [A-Za-z0-9_-]. */
function xtQuote(w: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(w)) return w;
  return `"${w.replace(/(["\\'])/g, '\\$1')}"`;
}

/** Rule words as iptables-save prints them: --comment values xtables-quoted, others quoted
 * only when they hold whitespace or quotes. */
function renderRule(words: string[]): string {
  return words.map((w, i) => (words[i - 1] === '--comment' ? xtQuote(w) : quoteWord(w))).join(' ');
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/\r$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

// ---------------------------------------------------------------------------------------------
// ipvsadm
// ---------------------------------------------------------------------------------------------

export interface IpvsDest {
  addr: string;
  port: number;
  fwd: 'm' | 'g' | 'i';
  weight: number;
  tunType?: string;
}

export interface IpvsService {
  /** 'tcp' | 'udp' | 'sctp' | 'fwmark' */
  proto: string;
  /** Address (canonical) or, for fwmark services, the mark. */
  addr: string;
  port: number;
  family: 4 | 6;
  sched: string;
  persistent?: number;
  netmask?: string;
  pe?: string;
  ops?: boolean;
  flags?: string;
  dests: IpvsDest[];
}

const IPVS_PROTO_ORDER: Record<string, number> = { tcp: 6, udp: 17, sctp: 132, fwmark: 1000 };

function splitHostPort(s: string, proto: string): { addr: string; port: number | undefined } {
  let m = /^\[([^\]]+)\](?::([^:]+))?$/.exec(s);
  if (m) return { addr: canonicalIp(m[1]!), port: m[2] === undefined ? undefined : Number(portNumber(m[2], proto)) };
  m = /^([^:]+)(?::(.+))?$/.exec(s);
  if (m) return { addr: canonicalIp(m[1]!), port: m[2] === undefined ? undefined : Number(portNumber(m[2], proto)) };
  return { addr: canonicalIp(s), port: undefined };
}

function svcKey(proto: string, addr: string, port: number): string {
  return `${proto} ${addr} ${port}`;
}

/** Replay ipvsadm -R lines (or `ipvsadm -S` output) onto an empty table. Throws on syntax
 * ipvsadm would reject. */
export function parseIpvs(text: string): IpvsService[] {
  const services = new Map<string, IpvsService>();
  for (const line of lines(text)) {
    const t = tokenize(line);
    let cmd = '';
    let proto = '';
    let target = '';
    const o: Record<string, string | true> = {};
    for (let i = 0; i < t.length; i++) {
      const w = t[i]!;
      const next = () => {
        const v = t[++i];
        if (v === undefined) throw new Error(`ipvsadm: ${w} needs a value: ${line}`);
        return v;
      };
      switch (w) {
        case '-A': case '--add-service': cmd = 'A'; break;
        case '-E': case '--edit-service': cmd = 'E'; break;
        case '-D': case '--delete-service': cmd = 'D'; break;
        case '-C': case '--clear': cmd = 'C'; break;
        case '-a': case '--add-server': cmd = 'a'; break;
        case '-e': case '--edit-server': cmd = 'e'; break;
        case '-d': case '--delete-server': cmd = 'd'; break;
        case '-t': case '--tcp-service': proto = 'tcp'; target = next(); break;
        case '-u': case '--udp-service': proto = 'udp'; target = next(); break;
        case '--sctp-service': proto = 'sctp'; target = next(); break;
        case '-f': case '--fwmark-service': proto = 'fwmark'; target = next(); break;
        case '-s': case '--scheduler': o.s = next(); break;
        case '-p': case '--persistent':
          o.p = t[i + 1] !== undefined && !t[i + 1]!.startsWith('-') ? t[++i]! : '360';
          break;
        case '-M': case '--netmask': o.M = next(); break;
        case '-b': case '--sched-flags': o.b = next(); break;
        case '--pe': o.pe = next(); break;
        case '-o': case '--ops': o.o = true; break;
        case '-r': case '--real-server': o.r = next(); break;
        case '-g': case '--gatewaying': o.fwd = 'g'; break;
        case '-i': case '--ipip': o.fwd = 'i'; break;
        case '-m': case '--masquerading': o.fwd = 'm'; break;
        case '-w': case '--weight': o.w = next(); break;
        case '-x': case '--u-threshold': next(); break;
        case '-y': case '--l-threshold': next(); break;
        case '--tun-type': o.tun = next(); break;
        case '--tun-port': next(); break;
        case '--tun-nocsum': case '--tun-csum': case '--tun-remcsum': break;
        case '-n': case '--numeric': break;
        default: throw new Error(`ipvsadm: unknown word ${JSON.stringify(w)} in: ${line}`);
      }
    }
    if (cmd === 'C') {
      services.clear();
      continue;
    }
    if (!cmd || !proto) throw new Error(`ipvsadm: no command or service in: ${line}`);
    let addr: string;
    let port: number;
    let family: 4 | 6;
    if (proto === 'fwmark') {
      addr = String(Number(target));
      port = 0;
      family = 4; // -6 would say otherwise; kube-proxy never uses fwmark services
    } else {
      const hp = splitHostPort(target, proto);
      addr = hp.addr;
      port = hp.port ?? 0;
      family = addr.includes(':') ? 6 : 4;
    }
    const key = svcKey(proto, addr, port);
    const svc = services.get(key);
    if (cmd === 'A' || cmd === 'E') {
      if (cmd === 'A' && svc) throw new Error(`ipvsadm: service exists: ${line}`);
      if (cmd === 'E' && !svc) throw new Error(`ipvsadm: no such service: ${line}`);
      const s: IpvsService = { proto, addr, port, family, sched: String(o.s ?? (cmd === 'E' ? svc!.sched : 'wlc')), dests: svc?.dests ?? [] };
      if (o.p !== undefined) s.persistent = Number(o.p);
      if (o.M !== undefined) {
        const full = family === 4 ? '255.255.255.255' : '128';
        const mask = String(o.M).replace(/^\//, '');
        if (mask !== full) s.netmask = mask;
      }
      if (o.pe !== undefined) s.pe = String(o.pe);
      if (o.o) s.ops = true;
      if (o.b !== undefined) s.flags = String(o.b);
      services.set(key, s);
      continue;
    }
    if (cmd === 'D') {
      if (!services.delete(key)) throw new Error(`ipvsadm: no such service: ${line}`);
      continue;
    }
    if (!svc) throw new Error(`ipvsadm: service not defined: ${line}`);
    if (typeof o.r !== 'string') throw new Error(`ipvsadm: no -r in: ${line}`);
    const r = splitHostPort(o.r, proto);
    const fwd = (o.fwd ?? 'g') as 'm' | 'g' | 'i';
    const rport = fwd === 'm' ? (r.port ?? port) : port;
    const idx = svc.dests.findIndex((d) => d.addr === r.addr && d.port === rport);
    if (cmd === 'd') {
      if (idx < 0) throw new Error(`ipvsadm: no such destination: ${line}`);
      svc.dests.splice(idx, 1);
      continue;
    }
    if (cmd === 'a' && idx >= 0) throw new Error(`ipvsadm: destination exists: ${line}`);
    if (cmd === 'e' && idx < 0) throw new Error(`ipvsadm: no such destination: ${line}`);
    const dest: IpvsDest = { addr: r.addr, port: rport, fwd, weight: o.w === undefined ? (cmd === 'e' ? svc.dests[idx]!.weight : 1) : Number(o.w) };
    if (fwd === 'i') dest.tunType = String(o.tun ?? 'ipip');
    if (idx >= 0) svc.dests[idx] = dest;
    else svc.dests.push(dest);
  }
  const list = [...services.values()];
  for (const s of list) s.dests.sort((a, b) => cmp(ipSortKey(a.addr), ipSortKey(b.addr)) || a.port - b.port);
  list.sort(
    (a, b) =>
      (IPVS_PROTO_ORDER[a.proto] === 1000 ? 1 : 0) - (IPVS_PROTO_ORDER[b.proto] === 1000 ? 1 : 0) ||
      a.family - b.family ||
      (IPVS_PROTO_ORDER[a.proto] ?? 999) - (IPVS_PROTO_ORDER[b.proto] ?? 999) ||
      (a.proto === 'fwmark' ? Number(a.addr) - Number(b.addr) : cmp(ipSortKey(a.addr), ipSortKey(b.addr))) ||
      a.port - b.port,
  );
  return list;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function ipvsSvcText(s: IpvsService): string {
  if (s.proto === 'fwmark') return `-f ${s.addr}`;
  const flag = s.proto === 'tcp' ? '-t' : s.proto === 'udp' ? '-u' : '--sctp-service';
  const a = s.family === 6 ? `[${s.addr}]` : s.addr;
  return `${flag} ${a}:${s.port}`;
}

/** Canonical `ipvsadm -S -n` text of an ipvsadm -R input or an ipvsadm-save dump. */
export function normaliseIpvs(text: string): string {
  const out: string[] = [];
  for (const s of parseIpvs(text)) {
    let l = `-A ${ipvsSvcText(s)} -s ${s.sched}`;
    if (s.persistent !== undefined) l += ` -p ${s.persistent}`;
    if (s.netmask !== undefined) l += ` -M ${s.netmask}`;
    if (s.pe !== undefined) l += ` --pe ${s.pe}`;
    if (s.ops) l += ' -o';
    if (s.flags !== undefined) l += ` -b ${s.flags}`;
    out.push(l);
    for (const d of s.dests) {
      const a = d.addr.includes(':') ? `[${d.addr}]` : d.addr;
      out.push(`-a ${ipvsSvcText(s)} -r ${a}:${d.port} -${d.fwd} -w ${d.weight}${d.tunType ? ` --tun-type ${d.tunType}` : ''}`);
    }
  }
  return out.length ? out.join('\n') + '\n' : '';
}

// ---------------------------------------------------------------------------------------------
// ipset
// ---------------------------------------------------------------------------------------------

export interface IpsetSet {
  name: string;
  type: string;
  /** Canonical create options, e.g. ['family', 'inet', 'hashsize', '1024', ...]. */
  options: string[];
  /** Canonical member lines (entry + its options), sorted. */
  members: Set<string>;
}

/** Create options in the order `ipset save` prints them. */
const CREATE_ORDER = ['family', 'range', 'netmask', 'bitmask', 'hashsize', 'maxelem', 'size', 'timeout', 'counters', 'comment', 'skbinfo', 'forceadd', 'bucketsize', 'initval', 'markmask'];
const CREATE_FLAGS = new Set(['counters', 'comment', 'skbinfo', 'forceadd']);

const SET_PROTOS = /^(tcp|udp|sctp|udplite|icmp|icmpv6|ipv6-icmp)$/i;

function canonicalEntry(entry: string): string {
  return entry
    .split(',')
    .map((part) => {
      // proto:port (port may be a name or a range)
      const pp = /^([a-z0-9-]+):(.+)$/i.exec(part);
      if (pp && SET_PROTOS.test(pp[1]!)) {
        const proto = pp[1]!.toLowerCase();
        return `${proto}:${pp[2]!.split('-').map((p) => portNumber(p, proto)).join('-')}`;
      }
      // address or CIDR: host-length prefixes are not printed
      const m = /^([0-9a-fA-F:.]+)(?:\/(\d+))?$/.exec(part);
      if (m && (m[1]!.includes('.') || m[1]!.includes(':'))) {
        const ip = canonicalIp(m[1]!);
        const host = ip.includes(':') ? 128 : 32;
        if (m[2] === undefined || Number(m[2]) === host) return ip;
        return `${ip}/${Number(m[2])}`;
      }
      if (/^\d+$/.test(part)) return String(Number(part));
      return part;
    })
    .join(',');
}

function nextPow2(n: number): number {
  let p = 64;
  while (p < n) p *= 2;
  return p;
}

/** Replay `ipset restore` input (or `ipset save` output) onto an empty state. */
export function parseIpset(text: string, opts: { keepInitval?: boolean } = {}): Map<string, IpsetSet> {
  const sets = new Map<string, IpsetSet>();
  for (const line of lines(text)) {
    const t = tokenize(line).filter((w) => w !== '-exist' && w !== '-!' && w !== '--exist');
    const [cmd, name, ...rest] = t;
    switch (cmd) {
      case 'create':
      case 'n':
      case '-N': {
        if (!name || !rest[0]) throw new Error(`ipset: bad create: ${line}`);
        const type = rest[0];
        const given = new Map<string, string | true>();
        for (let i = 1; i < rest.length; i++) {
          const k = rest[i]!;
          if (CREATE_FLAGS.has(k)) given.set(k, true);
          else given.set(k, rest[++i] ?? '');
        }
        if (type.startsWith('hash:')) {
          if (type !== 'hash:mac' && !given.has('family')) given.set('family', 'inet');
          if (given.get('family') === 'ipv4') given.set('family', 'inet');
          if (given.get('family') === 'ipv6') given.set('family', 'inet6');
          given.set('hashsize', String(nextPow2(Number(given.get('hashsize') ?? 1024))));
          if (!given.has('maxelem')) given.set('maxelem', '65536');
          if (!given.has('bucketsize') || !opts.keepInitval) given.delete('bucketsize');
          if (!opts.keepInitval) given.delete('initval');
        }
        if (type === 'list:set' && !given.has('size')) given.set('size', '8');
        const options: string[] = [];
        for (const k of CREATE_ORDER) {
          const v = given.get(k);
          if (v === undefined) continue;
          options.push(k);
          if (v !== true) options.push(v);
        }
        for (const [k, v] of given) if (!CREATE_ORDER.includes(k)) options.push(k, ...(v === true ? [] : [v]));
        const old = sets.get(name);
        if (old) {
          if (old.type !== type || old.options.join(' ') !== options.join(' ')) throw new Error(`ipset: set ${name} exists with other options: ${line}`);
          break; // -exist
        }
        sets.set(name, { name, type, options, members: new Set() });
        break;
      }
      case 'add':
      case 'del':
      case '-A':
      case '-D': {
        const set = name ? sets.get(name) : undefined;
        if (!set || !rest[0]) throw new Error(`ipset: ${cmd} to unknown set or without entry: ${line}`);
        const entry = canonicalEntry(rest[0]);
        // ipset save always double-quotes comments
        const extra = rest.slice(1).map((w, i, all) => (all[i - 1] === 'comment' ? `"${w}"` : w));
        const key = [entry, ...extra].join(' ');
        if (cmd === 'add' || cmd === '-A') {
          for (const m of set.members) if (m === entry || m.startsWith(entry + ' ')) set.members.delete(m);
          set.members.add(key);
        } else {
          for (const m of set.members) if (m === entry || m.startsWith(entry + ' ')) set.members.delete(m);
        }
        break;
      }
      case 'flush':
      case '-F':
        if (name) sets.get(name)?.members.clear();
        else for (const s of sets.values()) s.members.clear();
        break;
      case 'destroy':
      case 'x':
      case '-X':
        if (name) sets.delete(name);
        else sets.clear();
        break;
      case 'swap': {
        const a = name ? sets.get(name) : undefined;
        const b = rest[0] ? sets.get(rest[0]) : undefined;
        if (!a || !b) throw new Error(`ipset: swap of unknown sets: ${line}`);
        sets.set(a.name, { ...b, name: a.name });
        sets.set(b.name, { ...a, name: b.name });
        break;
      }
      case 'rename': {
        const a = name ? sets.get(name) : undefined;
        if (!a || !rest[0]) throw new Error(`ipset: bad rename: ${line}`);
        sets.delete(a.name);
        sets.set(rest[0], { ...a, name: rest[0] });
        break;
      }
      default:
        throw new Error(`ipset: unknown command in: ${line}`);
    }
  }
  return sets;
}

/** Canonical `ipset save` text: sets by name, each `create` then its sorted `add` lines. */
export function normaliseIpset(text: string, opts: { keepInitval?: boolean } = {}): string {
  const out: string[] = [];
  for (const s of [...parseIpset(text, opts).values()].sort((a, b) => cmp(a.name, b.name))) {
    out.push(['create', s.name, s.type, ...s.options].join(' '));
    const members = [...s.members].sort((a, b) => cmp(memberKey(a), memberKey(b)));
    for (const m of members) out.push(`add ${s.name} ${m}`);
  }
  return out.length ? out.join('\n') + '\n' : '';
}

function memberKey(m: string): string {
  const entry = m.split(' ')[0]!;
  return entry
    .split(',')
    .map((p) => {
      const a = /^([0-9a-fA-F:.]+)(\/\d+)?$/.exec(p);
      if (a && (a[1]!.includes('.') || a[1]!.includes(':'))) return ipSortKey(a[1]!) + (a[2] ?? '');
      const pp = /^([a-z]+):(\d+)$/.exec(p);
      if (pp) return `${pp[1]}:${pp[2]!.padStart(5, '0')}`;
      if (/^\d+$/.test(p)) return p.padStart(10, '0');
      return p;
    })
    .join(',') + m.slice(entry.length);
}

// ---------------------------------------------------------------------------------------------
// iptables
// ---------------------------------------------------------------------------------------------

const BUILTIN: Record<string, string[]> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

export interface IptablesTable {
  /** chain -> policy ('-' for user chains) */
  chains: Map<string, string>;
  rules: Map<string, string[]>;
}

export interface IptablesOptions {
  family?: 'ipv4' | 'ipv6';
  /** Keep builtin chains that have policy ACCEPT and no rules (and tables left empty). */
  keepEmptyBuiltins?: boolean;
}

function hexMark(v: string): string {
  const n = Number(v);
  if (!Number.isFinite(n)) return v;
  return '0x' + (n >>> 0).toString(16);
}

/** Options of the implicit protocol matches (libxt_tcp/udp/sctp/icmp). */
const PROTO_OPTS: Record<string, string[]> = {
  tcp: ['--dport', '--sport', '--destination-port', '--source-port', '--tcp-flags', '--syn', '--tcp-option'],
  udp: ['--dport', '--sport', '--destination-port', '--source-port'],
  udplite: ['--dport', '--sport', '--destination-port', '--source-port'],
  sctp: ['--dport', '--sport', '--destination-port', '--source-port', '--chunk-types'],
  dccp: ['--dport', '--sport', '--destination-port', '--source-port', '--dccp-types', '--dccp-option'],
  icmp: ['--icmp-type'],
  icmpv6: ['--icmpv6-type'],
  'ipv6-icmp': ['--icmpv6-type'],
};

/** Canonical words of one rule's arguments (everything after `-A CHAIN`). */
export function canonicalRule(words: string[], family: 'ipv4' | 'ipv6' = 'ipv4'): string[] {
  const host = family === 'ipv6' ? 128 : 32;
  const front: Record<string, string[]> = {};
  const rest: string[] = [];
  let proto: string | undefined;
  for (let i = 0; i < words.length; i++) {
    let neg = false;
    let w = words[i]!;
    if (w === '!' && /^(-s|-d|-i|-o|-p|--source|--destination|--in-interface|--out-interface|--protocol)$/.test(words[i + 1] ?? '')) {
      neg = true;
      w = words[++i]!;
    }
    const long: Record<string, string> = { '--source': '-s', '--src': '-s', '--destination': '-d', '--dst': '-d', '--in-interface': '-i', '--out-interface': '-o', '--protocol': '-p' };
    const short = long[w] ?? w;
    if (['-s', '-d', '-i', '-o', '-p'].includes(short)) {
      let v = words[++i] ?? '';
      if (short === '-s' || short === '-d') {
        const m = /^([0-9a-fA-F:.]+)(?:\/(\d+))?$/.exec(v);
        if (m) v = `${canonicalIp(m[1]!)}/${m[2] ?? host}`;
      }
      if (short === '-p') {
        v = v.toLowerCase();
        proto = v;
      }
      front[short] = [...(neg ? ['!'] : []), short, v];
      continue;
    }
    if (w === '!' && words[i + 1] === '-f') {
      front['-f'] = ['!', '-f'];
      i++;
      continue;
    }
    if (w === '-f' || w === '--fragment') {
      front['-f'] = ['-f'];
      continue;
    }
    rest.push(w);
  }
  // split the rest into modules (-m NAME ...) and the target (-j/-g NAME ...)
  // Protocol options given without "-m PROTO" (iptables loads that match implicitly, where the
  // option appears, and saves it as "-m PROTO ...").
  const protoMatch = proto && PROTO_OPTS[proto] ? proto : undefined;
  const groups: string[][] = [];
  let cur: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    const opt = w === '!' ? rest[i + 1] : w;
    if ((w === '-m' || w === '--match' || w === '-j' || w === '--jump' || w === '-g' || w === '--goto') && cur.length) {
      groups.push(cur);
      cur = [];
    } else if (protoMatch && opt && PROTO_OPTS[protoMatch]!.includes(opt) && !(cur[0] === '-m' && cur[1] === protoMatch)) {
      if (cur.length) groups.push(cur);
      cur = ['-m', protoMatch];
    }
    cur.push(w === '--match' ? '-m' : w === '--jump' ? '-j' : w === '--goto' ? '-g' : w);
  }
  if (cur.length) groups.push(cur);
  const out: string[] = [];
  for (const k of ['-s', '-d', '-i', '-o', '-p', '-f']) if (front[k]) out.push(...front[k]!);
  for (const g of groups) out.push(...canonicalModule(g, family));
  return out;
}

function canonicalModule(g: string[], family: 'ipv4' | 'ipv6'): string[] {
  const [kind, name] = g;
  const args = g.slice(2);
  if (kind === '-j' && name === 'MARK') {
    const [opt, val] = args;
    const [v, m] = (val ?? '').split('/');
    switch (opt) {
      case '--or-mark':
        return ['-j', 'MARK', '--set-xmark', `${hexMark(v!)}/${hexMark(v!)}`];
      case '--xor-mark':
        return ['-j', 'MARK', '--set-xmark', `${hexMark(v!)}/0x0`];
      case '--and-mark':
        return ['-j', 'MARK', '--set-xmark', `0x0/${hexMark(String(~Number(v) >>> 0))}`];
      case '--set-mark':
      case '--set-xmark':
        return ['-j', 'MARK', '--set-xmark', `${hexMark(v!)}/${m === undefined ? '0xffffffff' : hexMark(m)}`];
    }
  }
  if (kind === '-m' && (name === 'mark' || name === 'connmark')) {
    const out = ['-m', name];
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '--mark') {
        const [v, m] = (args[++i] ?? '').split('/');
        out.push(a, m === undefined || hexMark(m) === '0xffffffff' ? hexMark(v!) : `${hexMark(v!)}/${hexMark(m)}`);
      } else out.push(a);
    }
    return out;
  }
  if (kind === '-j' && name === 'REJECT' && !args.includes('--reject-with')) {
    return ['-j', 'REJECT', ...args, '--reject-with', family === 'ipv6' ? 'icmp6-port-unreachable' : 'icmp-port-unreachable'];
  }
  if (kind === '-m' && name === 'ipvs') {
    const order = ['--vproto', '--vaddr', '--vport', '--vdir', '--vmethod', '--vportctl', '--ipvs'];
    const opts: Array<{ key: string; words: string[] }> = [];
    for (let i = 0; i < args.length; i++) {
      const neg = args[i] === '!';
      if (neg) i++;
      const key = args[i]!;
      const words = [...(neg ? ['!'] : []), key];
      if (key !== '--ipvs' && key !== '--vdir' ? args[i + 1] !== undefined : key === '--vdir') {
        let v = args[++i]!;
        if (key === '--vaddr') {
          const m = /^([0-9a-fA-F:.]+)(?:\/(\d+))?$/.exec(v);
          if (m) {
            const ip = canonicalIp(m[1]!);
            v = m[2] === undefined || Number(m[2]) === (ip.includes(':') ? 128 : 32) ? ip : `${ip}/${m[2]}`;
          }
        }
        words.push(v);
      }
      opts.push({ key, words });
    }
    opts.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
    return ['-m', 'ipvs', ...opts.flatMap((o) => o.words)];
  }
  return g;
}

/** Replay iptables-restore input (or iptables-save output) onto empty tables. */
export function parseIptables(text: string, opts: IptablesOptions = {}): Map<string, IptablesTable> {
  const family = opts.family ?? 'ipv4';
  const tables = new Map<string, IptablesTable>();
  let table: IptablesTable | undefined;
  let tableName = '';
  const ensure = (chain: string) => {
    if (!table) throw new Error(`iptables: rule outside a table: ${chain}`);
    if (!table.chains.has(chain)) {
      if (!(BUILTIN[tableName] ?? []).includes(chain)) throw new Error(`iptables: chain ${chain} not declared in *${tableName}`);
      table.chains.set(chain, 'ACCEPT');
    }
    if (!table.rules.has(chain)) table.rules.set(chain, []);
    return table.rules.get(chain)!;
  };
  for (const raw of lines(text)) {
    const line = raw.replace(/^\[\d+:\d+\]\s+/, '');
    if (line.startsWith('*')) {
      tableName = line.slice(1).trim();
      table = tables.get(tableName) ?? { chains: new Map(), rules: new Map() };
      tables.set(tableName, table);
      for (const b of BUILTIN[tableName] ?? []) if (!table.chains.has(b)) table.chains.set(b, 'ACCEPT');
      continue;
    }
    if (line === 'COMMIT') {
      table = undefined;
      continue;
    }
    if (!table) throw new Error(`iptables: line outside a table: ${line}`);
    if (line.startsWith(':')) {
      const [name, policy] = line.slice(1).split(/\s+/) as [string, string | undefined];
      const builtin = (BUILTIN[tableName] ?? []).includes(name);
      table.chains.set(name, builtin ? (policy && policy !== '-' ? policy : 'ACCEPT') : '-');
      table.rules.set(name, []); // a declared chain is flushed (--noflush flushes declared chains too)
      continue;
    }
    const t = tokenize(line);
    const op = t[0];
    const chain = t[1] ?? '';
    if (op === '-A' || op === '--append') {
      ensure(chain).push(renderRule(canonicalRule(t.slice(2), family)));
    } else if (op === '-I' || op === '--insert') {
      const rules = ensure(chain);
      let args = t.slice(2);
      let pos = 1;
      if (/^\d+$/.test(args[0] ?? '')) {
        pos = Number(args[0]);
        args = args.slice(1);
      }
      rules.splice(pos - 1, 0, renderRule(canonicalRule(args, family)));
    } else if (op === '-N' || op === '--new-chain') {
      table.chains.set(chain, '-');
      table.rules.set(chain, []);
    } else if (op === '-F' || op === '--flush') {
      if (t[1]) table.rules.set(chain, []);
      else for (const k of table.rules.keys()) table.rules.set(k, []);
    } else if (op === '-X' || op === '--delete-chain') {
      if (t[1]) {
        table.chains.delete(chain);
        table.rules.delete(chain);
      } else {
        for (const k of [...table.chains.keys()]) {
          if (!(BUILTIN[tableName] ?? []).includes(k)) {
            table.chains.delete(k);
            table.rules.delete(k);
          }
        }
      }
    } else if (op === '-D' || op === '--delete') {
      const rules = ensure(chain);
      const r = renderRule(canonicalRule(t.slice(2), family));
      const i = /^\d+$/.test(t[2] ?? '') ? Number(t[2]) - 1 : rules.indexOf(r);
      if (i < 0 || i >= rules.length) throw new Error(`iptables: -D of a missing rule: ${line}`);
      rules.splice(i, 1);
    } else if (op === '-P' || op === '--policy') {
      ensure(chain);
      table.chains.set(chain, t[2] ?? 'ACCEPT');
    } else {
      throw new Error(`iptables: unsupported line: ${line}`);
    }
  }
  if (!opts.keepEmptyBuiltins) {
    for (const [name, tb] of tables) {
      for (const b of BUILTIN[name] ?? []) {
        if (tb.chains.get(b) === 'ACCEPT' && !(tb.rules.get(b)?.length)) {
          tb.chains.delete(b);
          tb.rules.delete(b);
        }
      }
      if (!tb.chains.size) tables.delete(name);
    }
  }
  return tables;
}

/** Canonical iptables-save text (tables by name; see the module header for the rewrites). */
export function normaliseIptables(text: string, opts: IptablesOptions = {}): string {
  const out: string[] = [];
  const tables = parseIptables(text, opts);
  for (const name of [...tables.keys()].sort()) {
    const tb = tables.get(name)!;
    const builtins = (BUILTIN[name] ?? []).filter((b) => tb.chains.has(b));
    const users = [...tb.chains.keys()].filter((c) => !builtins.includes(c)).sort();
    out.push(`*${name}`);
    for (const c of [...builtins, ...users]) out.push(`:${c} ${tb.chains.get(c)}`);
    for (const c of [...builtins, ...users]) for (const r of tb.rules.get(c) ?? []) out.push(`-A ${c} ${r}`);
    out.push('COMMIT');
  }
  return out.length ? out.join('\n') + '\n' : '';
}

// ---------------------------------------------------------------------------------------------
// kube-ipvs0 addresses
// ---------------------------------------------------------------------------------------------

/** Sorted "addr/len" lines from `ip -o addr show dev kube-ipvs0` output, or from a file with one
 * address per line (kube-ipvs0.addrs; a missing length means /32 or /128). */
export function normaliseAddrs(text: string): string {
  const addrs = new Set<string>();
  for (const line of lines(text)) {
    const m = /\binet6?\s+([0-9a-fA-F:.]+)(?:\/(\d+))?/.exec(line) ?? /^(?:(?:ip\s+)?addr\s+add\s+)?([0-9a-fA-F:.]+)(?:\/(\d+))?/.exec(line);
    if (!m) throw new Error(`addresses: cannot read line: ${line}`);
    const ip = canonicalIp(m[1]!);
    addrs.add(`${ip}/${m[2] ?? (ip.includes(':') ? 128 : 32)}`);
  }
  return [...addrs]
    .sort((a, b) => cmp(ipSortKey(a.split('/')[0]!), ipSortKey(b.split('/')[0]!)))
    .map((a) => a + '\n')
    .join('');
}

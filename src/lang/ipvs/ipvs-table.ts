/**
 * The IPVS table kpc compares: virtual servers with their real servers, read from `ipvsadm -R`
 * text — kpc's own ipvs.rules, or a node's `ipvsadm-save -n` (= `ipvsadm -S -n`).
 *
 * The reader replays the commands the way the kernel would (`-A/-E/-D`, `-a/-e/-d`, `-C`),
 * filling in ipvsadm's defaults so that two spellings of the same table read the same:
 * scheduler `wlc`, weight 1, forwarding `-g`; `-p` without a value is 360 s; a full `-M` mask
 * is no mask; the real-server port of `-g`/`-i` is the virtual server's (the kernel forces it).
 * Addresses are canonicalised (`[FD00:0::10]` → `[fd00::10]`). Thresholds (`-x`/`-y`) and
 * tunnel options are read and ignored: ipvsadm-save never prints the former, kube-proxy never
 * sets either.
 *
 * Keys are kube-proxy's VirtualServer.String(): `10.96.0.1:443/TCP`, `[fd00::1]:53/UDP`;
 * fwmark services `fwmark:100` (kube-proxy never makes them; they are read and left alone).
 */

import { compareIPs, formatHostPort, formatIP, parseIP, type IP, type IPFamily } from '../../net/ip.js';
import { lineError } from '../line-error.js';

export type IpvsProtocol = 'TCP' | 'UDP' | 'SCTP';
export type ForwardingMethod = 'm' | 'g' | 'i';

export interface IpvsRealServer {
  /** `ip:port` / `[ip]:port`, canonical: the key within its virtual server. */
  address: string;
  ip: string;
  port: number;
  method: ForwardingMethod;
  weight: number;
}

export interface IpvsVirtualServer {
  /** `ip:port/PROTO`, or `fwmark:N`. */
  key: string;
  /** The service option as ipvsadm -S -n prints it: `-t 10.96.0.1:443`, `--sctp-service …`, `-f 100`. */
  args: string;
  protocol?: IpvsProtocol;
  ip?: string;
  port?: number;
  family?: IPFamily;
  fwmark?: number;
  scheduler: string;
  /** Persistence timeout in seconds; undefined = not persistent. */
  persistence?: number;
  /** `-M` when not the full mask (IPv4 dotted, IPv6 prefix length). */
  netmask?: string;
  /** `-b` flags, sorted, comma-separated. */
  schedFlags?: string;
  pe?: string;
  onePacket: boolean;
  realServers: Map<string, IpvsRealServer>;
}

export interface IpvsTable {
  virtualServers: Map<string, IpvsVirtualServer>;
  /** The `--set tcp tcpfin udp` line's values, if the text had one (ipvsadm-save never does). */
  timeouts?: string;
}


const SERVICE_OPTIONS: Readonly<Record<string, IpvsProtocol | 'FWM'>> = {
  '-t': 'TCP',
  '--tcp-service': 'TCP',
  '-u': 'UDP',
  '--udp-service': 'UDP',
  '--sctp-service': 'SCTP',
  '-f': 'FWM',
  '--fwmark-service': 'FWM',
};
const SERVICE_FLAG: Readonly<Record<IpvsProtocol, string>> = { TCP: '-t', UDP: '-u', SCTP: '--sctp-service' };

const COMMANDS: Readonly<Record<string, string>> = {
  '-A': 'A',
  '--add-service': 'A',
  '-E': 'E',
  '--edit-service': 'E',
  '-D': 'D',
  '--delete-service': 'D',
  '-a': 'a',
  '--add-server': 'a',
  '-e': 'e',
  '--edit-server': 'e',
  '-d': 'd',
  '--delete-server': 'd',
  '-C': 'C',
  '--clear': 'C',
  '--set': 'set',
};

/** Options that take a value (besides the service and -p's optional one). */
const VALUE_OPTIONS = new Set(['-s', '--scheduler', '-M', '--netmask', '-b', '--sched-flags', '--pe', '-r', '--real-server', '-w', '--weight', '-x', '--u-threshold', '-y', '--l-threshold', '--tun-type', '--tun-port']);
const FLAG_OPTIONS = new Set(['-m', '--masquerading', '-g', '--gatewaying', '-i', '--ipip', '-o', '--ops', '--tun-nocsum', '--tun-csum', '--tun-remcsum', '-n', '--numeric']);

/** `10.0.0.1:80` / `[fd00::1]:80` (port optional) → canonical parts. */
function hostPort(text: string, lineNo: number, what: string): { ip: string; port?: number; family: IPFamily } {
  const m = /^\[([^\]]+)\](?::(.*))?$/.exec(text) ?? /^([^:]+)(?::(.*))?$/.exec(text);
  const parsed = m ? parseIP(m[1]!) : undefined;
  if (!m || !parsed) throw lineError(lineNo, `${what} ${JSON.stringify(text)} is not ADDRESS:PORT (IPv6 as [ADDRESS]:PORT)`);
  if (m[2] === undefined) return { ip: formatIP(parsed.ip), family: parsed.ip.family };
  if (!/^\d{1,5}$/.test(m[2]) || Number(m[2]) > 65535) {
    throw lineError(lineNo, `${what} ${JSON.stringify(text)}: the port must be a number (use ipvsadm-save -n)`);
  }
  return { ip: formatIP(parsed.ip), port: Number(m[2]), family: parsed.ip.family };
}

/** kube-proxy's VirtualServer.String(). */
export function virtualServerKeyOf(protocol: IpvsProtocol, ip: string, port: number): string {
  return `${formatHostPort(ip, port)}/${protocol}`;
}

export function serviceArgsOf(protocol: IpvsProtocol, ip: string, port: number): string {
  return `${SERVICE_FLAG[protocol]} ${formatHostPort(ip, port)}`;
}

function fullMask(mask: string, family: IPFamily | undefined): boolean {
  return family === 'IPv6' ? mask === '128' : mask === '255.255.255.255' || mask === '32';
}

interface Parsed {
  command: string;
  service?: { key: string; args: string; protocol?: IpvsProtocol; ip?: string; port?: number; family?: IPFamily; fwmark?: number };
  options: Map<string, string | true>;
}

function parseLine(words: string[], lineNo: number): Parsed {
  const command = COMMANDS[words[0]!];
  if (command === undefined) throw lineError(lineNo, `unknown command ${JSON.stringify(words[0])} (expected -A, -E, -D, -a, -e, -d, -C or --set)`);
  const out: Parsed = { command, options: new Map() };
  if (command === 'set') {
    out.options.set('--set', words.slice(1).join(' '));
    return out;
  }
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const svc = SERVICE_OPTIONS[w];
    if (svc !== undefined) {
      const v = words[++i];
      if (v === undefined) throw lineError(lineNo, `${w} needs a value`);
      if (svc === 'FWM') {
        if (!/^\d+$/.test(v)) throw lineError(lineNo, `fwmark ${JSON.stringify(v)} is not a number`);
        out.service = { key: `fwmark:${Number(v)}`, args: `-f ${Number(v)}`, fwmark: Number(v) };
      } else {
        const hp = hostPort(v, lineNo, 'virtual server');
        if (hp.port === undefined) throw lineError(lineNo, `virtual server ${JSON.stringify(v)} has no port`);
        out.service = { key: virtualServerKeyOf(svc, hp.ip, hp.port), args: serviceArgsOf(svc, hp.ip, hp.port), protocol: svc, ip: hp.ip, port: hp.port, family: hp.family };
      }
      continue;
    }
    if (w === '-p' || w === '--persistent') {
      const next = words[i + 1];
      if (next !== undefined && /^\d+$/.test(next)) {
        out.options.set('-p', next);
        i++;
      } else {
        out.options.set('-p', '360');
      }
      continue;
    }
    if (VALUE_OPTIONS.has(w)) {
      const v = words[++i];
      if (v === undefined) throw lineError(lineNo, `${w} needs a value`);
      out.options.set(canonicalOption(w), v);
      continue;
    }
    if (FLAG_OPTIONS.has(w)) {
      out.options.set(canonicalOption(w), true);
      continue;
    }
    throw lineError(lineNo, `unknown option ${JSON.stringify(w)}`);
  }
  if (command !== 'C' && !out.service) throw lineError(lineNo, 'no virtual service (-t, -u, --sctp-service or -f)');
  return out;
}

const LONG_TO_SHORT: Readonly<Record<string, string>> = {
  '--scheduler': '-s',
  '--netmask': '-M',
  '--sched-flags': '-b',
  '--real-server': '-r',
  '--weight': '-w',
  '--u-threshold': '-x',
  '--l-threshold': '-y',
  '--masquerading': '-m',
  '--gatewaying': '-g',
  '--ipip': '-i',
  '--ops': '-o',
};

function canonicalOption(o: string): string {
  return LONG_TO_SHORT[o] ?? o;
}

function method(options: Map<string, string | true>): ForwardingMethod {
  if (options.has('-m')) return 'm';
  if (options.has('-i')) return 'i';
  return 'g';
}

function buildVirtualServer(p: Parsed): IpvsVirtualServer {
  const s = p.service!;
  const o = p.options;
  const vs: IpvsVirtualServer = {
    key: s.key,
    args: s.args,
    scheduler: (o.get('-s') as string | undefined) ?? 'wlc',
    onePacket: o.has('-o'),
    realServers: new Map(),
  };
  if (s.protocol !== undefined) vs.protocol = s.protocol;
  if (s.ip !== undefined) vs.ip = s.ip;
  if (s.port !== undefined) vs.port = s.port;
  if (s.family !== undefined) vs.family = s.family;
  if (s.fwmark !== undefined) vs.fwmark = s.fwmark;
  const p2 = o.get('-p');
  if (typeof p2 === 'string') vs.persistence = Number(p2);
  const mask = o.get('-M');
  if (typeof mask === 'string' && !fullMask(mask, s.family)) vs.netmask = mask;
  const flags = o.get('-b');
  if (typeof flags === 'string') vs.schedFlags = flags.split(',').sort().join(',');
  const pe = o.get('--pe');
  if (typeof pe === 'string') vs.pe = pe;
  return vs;
}

function buildRealServer(p: Parsed, vs: IpvsVirtualServer, lineNo: number): IpvsRealServer {
  const r = p.options.get('-r');
  if (typeof r !== 'string') throw lineError(lineNo, 'no real server (-r)');
  const hp = hostPort(r, lineNo, 'real server');
  const m = method(p.options);
  // ipvsadm forces the virtual server's port on -a/-e for direct routing and tunnels (and when
  // none is given); -d names the real server as it is.
  const forced = p.command !== 'd' && m !== 'm';
  const port = !forced && hp.port !== undefined ? hp.port : (vs.port ?? hp.port ?? 0);
  const w = p.options.get('-w');
  if (w !== undefined && (typeof w !== 'string' || !/^\d+$/.test(w))) throw lineError(lineNo, `weight ${JSON.stringify(w)} is not a number`);
  return { address: formatHostPort(hp.ip, port), ip: hp.ip, port, method: m, weight: w === undefined ? 1 : Number(w) };
}

/** The digits from `from` to `to` without a leading zero, at most `max`: the value, or -1. */
function canonicalNumber(text: string, from: number, to: number, max: number): number {
  const n = to - from;
  if (n < 1 || n > 5 || (n > 1 && text.charCodeAt(from) === 48)) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v <= max ? v : -1;
}

/** Digits from `from` to `to` (leading zeros allowed, as /^\d+$/ then Number): the value, or -1. */
function digits(text: string, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * An IPv4 `a.b.c.d:port` from `from` to `to`, as formatHostPort prints it (no leading zero
 * anywhere): the end of the address (the colon) and the port, or undefined.
 */
function canonicalIPv4Port(text: string, from: number, to: number): { colon: number; port: number } | undefined {
  let at = from;
  for (let octet = 0; octet < 4; octet++) {
    const end = text.indexOf(octet < 3 ? '.' : ':', at);
    if (end < 0 || end >= to || canonicalNumber(text, at, end, 255) < 0) return undefined;
    at = end + 1;
  }
  const port = canonicalNumber(text, at, to, 65535);
  return port < 0 ? undefined : { colon: at - 1, port };
}

const FAST_SERVICE_FLAGS: Readonly<Record<string, IpvsProtocol>> = { '-t': 'TCP', '-u': 'UDP', '--sctp-service': 'SCTP' };

type Service = NonNullable<Parsed['service']>;

/**
 * The lines kpc writes and ipvsadm-save prints for IPv4, read without the general parser
 * (which splits, builds an option map and parses each address: 5 µs a line, 300,000 lines at
 * 20,000 Services):
 *
 *   -A <svc> -s <scheduler>[ -p <seconds>]
 *   -a <svc> -r <a.b.c.d:port> -m -w <weight>
 *
 * with <svc> `-t|-u|--sctp-service a.b.c.d:port`, single spaces, no leading zero in an
 * address or port. They mean what the general parser makes of them; any other line (IPv6,
 * other options, other spacing) is left to it. A line is the text from `from` to `to` (its
 * end, without the newline); the service of the line before is kept, as a virtual server's
 * real servers follow it.
 */
class FastLines {
  private last: Service | undefined;

  constructor(private readonly text: string) {}

  /** `<svc> ` from `from`: the service and where the space after it is, or undefined. */
  private service(from: number, to: number): { service: Service; end: number } | undefined {
    const text = this.text;
    const last = this.last;
    if (last && text.startsWith(last.args, from) && text.charCodeAt(from + last.args.length) === 32) return { service: last, end: from + last.args.length };
    const flagEnd = text.indexOf(' ', from);
    if (flagEnd < 0 || flagEnd >= to) return undefined;
    const protocol = FAST_SERVICE_FLAGS[text.slice(from, flagEnd)];
    if (protocol === undefined) return undefined;
    const end = text.indexOf(' ', flagEnd + 1);
    if (end < 0 || end >= to) return undefined;
    const hp = canonicalIPv4Port(text, flagEnd + 1, end);
    if (!hp) return undefined;
    const ip = text.slice(flagEnd + 1, hp.colon);
    const address = text.slice(flagEnd + 1, end);
    const service: Service = { key: `${address}/${protocol}`, args: text.slice(from, end), protocol, ip, port: hp.port, family: 'IPv4' };
    this.last = service;
    return { service, end };
  }

  /** `-A <svc> -s <scheduler>[ -p <seconds>]`. */
  virtualServer(from: number, to: number): IpvsVirtualServer | undefined {
    const text = this.text;
    if (!text.startsWith('-A ', from)) return undefined;
    const svc = this.service(from + 3, to);
    if (!svc || !text.startsWith(' -s ', svc.end)) return undefined;
    const m = /^([a-z]+)(?: -p (\d+))?$/.exec(text.slice(svc.end + 4, to));
    if (!m) return undefined;
    const { key, args, protocol, ip, port, family } = svc.service;
    const vs: IpvsVirtualServer = { key, args, scheduler: m[1]!, onePacket: false, realServers: new Map(), protocol, ip, port, family };
    if (m[2] !== undefined) vs.persistence = Number(m[2]);
    return vs;
  }

  /** `-a <svc> -r <a.b.c.d:port> -m -w <weight>`: the service and the real server. */
  realServer(from: number, to: number): { service: Service; rs: IpvsRealServer } | undefined {
    const text = this.text;
    if (!text.startsWith('-a ', from)) return undefined;
    const svc = this.service(from + 3, to);
    if (!svc || !text.startsWith(' -r ', svc.end)) return undefined;
    const at = svc.end + 4;
    const end = text.indexOf(' ', at);
    if (end < 0 || end >= to || !text.startsWith(' -m -w ', end)) return undefined;
    const hp = canonicalIPv4Port(text, at, end);
    const weight = digits(text, end + 7, to);
    if (!hp || weight < 0) return undefined;
    return { service: svc.service, rs: { address: text.slice(at, end), ip: text.slice(at, hp.colon), port: hp.port, method: 'm', weight } };
  }
}

/**
 * Read `ipvsadm -R` / `ipvsadm-save -n` text; commands are replayed in order. `firstLine` is
 * the text's first line number in its file (for a part of a file). `general` reads every line
 * with the general parser (the tests' definition of what the fast lines mean).
 */
export function readIpvsTable(text: string, options: { firstLine?: number; general?: boolean } = {}): IpvsTable {
  const table: IpvsTable = { virtualServers: new Map() };
  const vsMap = table.virtualServers;
  const fast = options.general ? undefined : new FastLines(text);
  let lineNo = (options.firstLine ?? 1) - 1;
  for (let from = 0; from <= text.length; ) {
    const nl = text.indexOf('\n', from);
    const to = nl < 0 ? text.length : nl;
    const start = from;
    from = to + 1;
    lineNo++;
    if (fast) {
      const added = fast.virtualServer(start, to);
      if (added) {
        if (vsMap.has(added.key)) throw lineError(lineNo, `virtual server ${added.args} is added twice`);
        vsMap.set(added.key, added);
        continue;
      }
      const real = fast.realServer(start, to);
      if (real) {
        const vs = vsMap.get(real.service.key);
        if (!vs) throw lineError(lineNo, `real server of a virtual server that does not exist (${real.service.args})`);
        if (vs.realServers.has(real.rs.address)) throw lineError(lineNo, `real server ${real.rs.address} of ${vs.args} is added twice`);
        vs.realServers.set(real.rs.address, real.rs);
        continue;
      }
    }
    const line = text.slice(start, to).trim();
    if (line === '' || line.startsWith('#')) continue;
    const p = parseLine(line.split(/\s+/), lineNo);
    switch (p.command) {
      case 'set':
        table.timeouts = p.options.get('--set') as string;
        break;
      case 'C':
        vsMap.clear();
        break;
      case 'A': {
        if (vsMap.has(p.service!.key)) throw lineError(lineNo, `virtual server ${p.service!.args} is added twice`);
        vsMap.set(p.service!.key, buildVirtualServer(p));
        break;
      }
      case 'E': {
        const old = vsMap.get(p.service!.key);
        if (!old) throw lineError(lineNo, `-E of a virtual server that does not exist (${p.service!.args})`);
        vsMap.set(p.service!.key, { ...buildVirtualServer(p), realServers: old.realServers });
        break;
      }
      case 'D':
        if (!vsMap.delete(p.service!.key)) throw lineError(lineNo, `-D of a virtual server that does not exist (${p.service!.args})`);
        break;
      case 'a':
      case 'e':
      case 'd': {
        const vs = vsMap.get(p.service!.key);
        if (!vs) throw lineError(lineNo, `real server of a virtual server that does not exist (${p.service!.args})`);
        const rs = buildRealServer(p, vs, lineNo);
        const exists = vs.realServers.has(rs.address);
        if (p.command === 'a' && exists) throw lineError(lineNo, `real server ${rs.address} of ${vs.args} is added twice`);
        if (p.command !== 'a' && !exists) throw lineError(lineNo, `real server ${rs.address} of ${vs.args} does not exist`);
        if (p.command === 'd') vs.realServers.delete(rs.address);
        else vs.realServers.set(rs.address, rs);
        break;
      }
    }
  }
  return table;
}

/** The `-A`/`-E` options of a virtual server: ` -s S[ -p T][ -M M][ --pe P][ -o][ -b F]`, as ipvsadm -S prints them. */
export function serviceOptions(vs: Pick<IpvsVirtualServer, 'scheduler' | 'persistence' | 'netmask' | 'pe' | 'onePacket' | 'schedFlags'>): string {
  let s = ` -s ${vs.scheduler}`;
  if (vs.persistence !== undefined) s += ` -p ${vs.persistence}`;
  if (vs.netmask !== undefined) s += ` -M ${vs.netmask}`;
  if (vs.pe !== undefined) s += ` --pe ${vs.pe}`;
  if (vs.onePacket) s += ' -o';
  if (vs.schedFlags !== undefined) s += ` -b ${vs.schedFlags}`;
  return s;
}

/** Numeric address order (IPv4 before IPv6), then port: kpc's order for texts it writes itself. */
const parsedIPs = new Map<string, IP | undefined>();
function parsedIP(text: string | undefined): IP | undefined {
  if (text === undefined) return undefined;
  let ip = parsedIPs.get(text);
  if (ip === undefined && !parsedIPs.has(text)) {
    if (parsedIPs.size > 1_000_000) parsedIPs.clear();
    ip = parseIP(text)?.ip;
    parsedIPs.set(text, ip);
  }
  return ip;
}

export function compareAddresses(a: { ip?: string; port?: number }, b: { ip?: string; port?: number }): number {
  const pa = parsedIP(a.ip);
  const pb = parsedIP(b.ip);
  if (!pa || !pb) return pa ? -1 : pb ? 1 : 0;
  return compareIPs(pa, pb) || (a.port ?? 0) - (b.port ?? 0);
}

const PROTOCOL_RANK: Readonly<Record<IpvsProtocol, number>> = { TCP: 0, UDP: 1, SCTP: 2 };

/** Virtual servers by protocol, address, port; fwmark services last. */
export function compareVirtualServers(a: IpvsVirtualServer, b: IpvsVirtualServer): number {
  if ((a.fwmark !== undefined) !== (b.fwmark !== undefined)) return a.fwmark !== undefined ? 1 : -1;
  if (a.fwmark !== undefined) return a.fwmark - b.fwmark!;
  return PROTOCOL_RANK[a.protocol!] - PROTOCOL_RANK[b.protocol!] || compareAddresses(a, b);
}

/** The table as `ipvsadm -R` text in kpc's order (a readable form for tests and reports). */
export function renderIpvsTable(table: IpvsTable): string {
  const out: string[] = [];
  if (table.timeouts !== undefined) out.push(`--set ${table.timeouts}`);
  for (const vs of [...table.virtualServers.values()].sort(compareVirtualServers)) {
    out.push(`-A ${vs.args}${serviceOptions(vs)}`);
    for (const rs of [...vs.realServers.values()].sort(compareAddresses)) out.push(`-a ${vs.args} -r ${rs.address} -${rs.method} -w ${rs.weight}`);
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

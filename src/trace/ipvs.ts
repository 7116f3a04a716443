/**
 * `kpc trace` for IPVS mode: a new connection through an IPVS bundle (ipvs.rules, ipset.rules,
 * iptables.rules, kube-ipvs0.addrs — kpc's -o DIR or a node's captures under those names).
 *
 * The iptables rules are followed by the iptables tracer (tracer.ts) with a TraceExtension:
 *   - `-m set --match-set NAME FLAGS` is evaluated against the bundle's ipsets (hash:ip,
 *     hash:ip,port, hash:ip,port,ip, hash:ip,port,net, hash:net, bitmap:port), the packet's
 *     source/destination picked per FLAGS (src,dst,...) as the kernel does;
 *   - `-m ipvs --vaddr/--vport/--vproto/--ipvs` is true after the IPVS stage for its virtual server;
 *   - `-m physdev --physdev-is-in` is false (the packet is taken as not bridged; a note says so);
 *   - the built-in chains' assumed jumps are IPVS mode's (proxier.go iptablesJumpChain);
 *   - the kube-ipvs0 addresses are the node's own (addrtype LOCAL: the kernel routes them locally).
 * The IPVS stage sits where the kernel has it: LOCAL_IN after filter INPUT (from the network),
 * LOCAL_OUT after nat OUTPUT (from the node). The virtual server matching (address, port,
 * protocol) picks a real server: rr shares the connections equally among real servers of
 * weight > 0, wrr by weight; other schedulers depend on live load, and are shown by weight
 * with a note. Weight 0 gets no new connection; no real server of weight > 0 means IPVS
 * answers ICMP port unreachable (REJECT, ip_vs_leave). Persistence (-p) is session affinity.
 * A balanced packet goes on through filter OUTPUT and nat POSTROUTING, where KUBE-POSTROUTING
 * masquerades what KUBE-MARK-MASQ marked (and hairpin connections via KUBE-LOOP-BACK).
 *
 * Pure: no I/O.
 */

import { formatHostPort, formatIP, parseCIDR, parseIP, type IP } from '../net/ip.js';
import { compareIP } from '../lang/iptables/address.js';
import { IPVS_BUILTIN_JUMPS } from '../lang/iptables/chains.js';
import { readRules } from '../lang/iptables/read.js';
import { readIpvsTable, type IpvsVirtualServer } from '../lang/ipvs/ipvs-table.js';
import { readIpsetState, type IpsetSet } from '../lang/ipvs/ipset-state.js';
import { readAddresses } from '../lang/ipvs/addresses.js';
import type { IpvsBundle } from '../emit/ipvs/bundle.js';
import { roundProbability, type NodeSpec, type PacketSpec, type Protocol, type TraceResult } from './result.js';
import { traceRuleSet, type BalanceOutcome, type PacketView } from './tracer.js';

export interface IpvsRealServerShare {
  address: string;
  weight: number;
  /** The share of new connections this real server gets. */
  probability: number;
}

/** The IPVS stage of a trace (TraceResult.ipvs). */
export interface IpvsStage {
  /** kube-proxy's VirtualServer.String(): `10.96.0.1:443/TCP`. */
  virtualServer: string;
  scheduler: string;
  /** Seconds of persistence (-p): a returning client goes to the same real server. */
  persistence?: number;
  realServers: IpvsRealServerShare[];
  /** REJECT when there is no real server of weight > 0. */
  verdict?: 'REJECT';
  /** The probability a connection reaches the stage (the rest was dropped or rejected before it). */
  reached: number;
}

export type IpvsTraceResult = TraceResult & { ipvs?: IpvsStage };

interface SetEntry {
  parts: string[];
}

interface ParsedSet {
  type: string;
  entries: SetEntry[];
  /**
   * A hash set whose first part is an IP: its entries by that IP's canonical text, made on
   * first use. KUBE-LOOP-BACK holds an entry per local endpoint and is looked up once per
   * endpoint a trace balances to (100,000 of each for one large Service).
   */
  byFirstIP?: Map<string, SetEntry[]>;
}

function ipOf(text: string): IP | undefined {
  return parseIP(text)?.ip;
}

function ipEquals(a: IP, text: string): boolean {
  const b = ipOf(text);
  return b !== undefined && b.family === a.family && compareIP(a, b) === 0;
}

function netContains(text: string, ip: IP): boolean {
  if (text.includes('/')) {
    const c = parseCIDR(text)?.cidr;
    if (!c || c.ip.family !== ip.family) return false;
    for (let k = 0, left = c.prefix; k < ip.bytes.length && left > 0; k++, left -= 8) {
      const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
      if ((ip.bytes[k]! & mask) !== (c.ip.bytes[k]! & mask)) return false;
    }
    return true;
  }
  return ipEquals(ip, text);
}

/** `tcp:80` / `80` (tcp) / `sctp:3001` → does the packet's protocol and port match? */
function portMatches(part: string, proto: Protocol, port: number | undefined): boolean {
  if (port === undefined) return false;
  const m = /^(?:([a-z]+):)?(\d+)$/i.exec(part);
  if (!m) return false;
  return (m[1] ?? 'tcp').toLowerCase() === proto && Number(m[2]) === port;
}

function parseSets(text: string): Map<string, ParsedSet> {
  const out = new Map<string, ParsedSet>();
  for (const [name, set] of readIpsetState(text) as Map<string, IpsetSet>) {
    out.set(name, { type: set.type, entries: [...set.entries.values()].map((e) => ({ parts: e.split(',') })) });
  }
  return out;
}

function inSet(set: ParsedSet, flags: string[], p: PacketView): boolean | undefined {
  const addr = (i: number) => (flags[i] === 'src' ? p.src : p.dst);
  const port = (i: number) => (flags[i] === 'src' ? p.sport : p.dport);
  const kinds = set.type.replace(/^(hash|bitmap):/, '').split(',');
  if (!/^(hash|bitmap):/.test(set.type) || kinds.some((k) => !['ip', 'port', 'net'].includes(k))) return undefined;
  if (set.type === 'bitmap:port') {
    if (!['tcp', 'udp', 'sctp'].includes(p.proto)) return false;
    const pt = port(0);
    return pt !== undefined && set.entries.some((e) => {
      const [lo, hi] = e.parts[0]!.split('-').map(Number);
      return pt >= lo! && pt <= (hi ?? lo)!;
    });
  }
  // Fewer flags than dimensions: the kernel matches only the first ones given (never used by kube-proxy).
  if (flags.length < kinds.length) return undefined;
  const candidates = kinds[0] === 'ip' ? (entriesByFirstIP(set).get(formatIP(addr(0))) ?? []) : set.entries;
  return candidates.some((e) =>
    kinds.every((k, i) => {
      const part = e.parts[i];
      if (part === undefined) return false;
      if (k === 'ip') return ipEquals(addr(i), part);
      if (k === 'net') return netContains(part, addr(i));
      return portMatches(part, p.proto, port(i));
    }),
  );
}

/** The set's entries by their first part's IP (an entry whose first part is no IP matches nothing). */
function entriesByFirstIP(set: ParsedSet): Map<string, SetEntry[]> {
  if (set.byFirstIP) return set.byFirstIP;
  const index = new Map<string, SetEntry[]>();
  for (const e of set.entries) {
    const ip = ipOf(e.parts[0]!);
    if (ip === undefined) continue;
    const key = formatIP(ip);
    const list = index.get(key);
    if (list) list.push(e);
    else index.set(key, [e]);
  }
  return (set.byFirstIP = index);
}

/** `-m set [!] --match-set NAME FLAGS` / `-m ipvs ...` as the tracer gives it (blockText). */
function optionsOf(text: string): Array<{ negated: boolean; name: string; values: string[] }> {
  const words = text.split(/\s+/).slice(2);
  const out: Array<{ negated: boolean; name: string; values: string[] }> = [];
  let negated = false;
  for (const w of words) {
    if (w === '!') negated = true;
    else if (w.startsWith('--')) {
      out.push({ negated, name: w.slice(2), values: [] });
      negated = false;
    } else out[out.length - 1]?.values.push(w);
  }
  return out;
}

function protoNumber(proto: Protocol): string {
  return proto === 'tcp' ? '6' : proto === 'udp' ? '17' : '132';
}

function ipvsMatch(text: string, p: PacketView): boolean | undefined {
  for (const o of optionsOf(text)) {
    let hit: boolean;
    const v = o.values[0];
    switch (o.name) {
      case 'ipvs':
        hit = p.vip !== undefined;
        break;
      case 'vaddr':
        hit = p.vip !== undefined && v !== undefined && netContains(v, p.vip.ip);
        break;
      case 'vport':
        hit = p.vip !== undefined && Number(v) === p.vip.port;
        break;
      case 'vproto':
        hit = p.vip !== undefined && v !== undefined && (v.toLowerCase() === p.vip.proto || v === protoNumber(p.vip.proto));
        break;
      default:
        return undefined;
    }
    if (hit === o.negated) return false;
  }
  return true;
}

const PHYSDEV_NOTE = "-m physdev --physdev-is-in: the packet is taken as not arriving through a bridge port";

const PROTO: Record<Protocol, 'TCP' | 'UDP' | 'SCTP'> = { tcp: 'TCP', udp: 'UDP', sctp: 'SCTP' };


/** The real servers' shares under the virtual server's scheduler. */
export function realServerShares(vs: IpvsVirtualServer): { shares: IpvsRealServerShare[]; note?: string } {
  const rs = [...vs.realServers.values()];
  const live = rs.filter((r) => r.weight > 0);
  const equal = vs.scheduler === 'rr';
  const total = equal ? live.length : live.reduce((a, r) => a + r.weight, 0);
  const shares = rs.map((r) => ({ address: r.address, weight: r.weight, probability: r.weight > 0 && total > 0 ? roundProbability((equal ? 1 : r.weight) / total) : 0 }));
  const note =
    vs.scheduler === 'rr' || vs.scheduler === 'wrr'
      ? undefined
      : `${vs.key}: scheduler ${vs.scheduler} picks by the real servers' current load; the shares shown are by weight`;
  return { shares, ...(note ? { note } : {}) };
}

/** Trace a connection through an IPVS bundle. */
export function traceIpvsBundle(bundle: IpvsBundle, packet: PacketSpec, node: NodeSpec): IpvsTraceResult {
  const family = (ipOf(packet.destination)?.family ?? 'IPv4');
  const table = readIpvsTable(bundle.ipvsRules);
  const sets = parseSets(bundle.ipsetRules);
  const local = [...readAddresses(bundle.addresses, family).keys()];
  const notes: string[] = [];
  let stage: IpvsStage | undefined;

  // From the node to an address of kube-ipvs0: the kernel's local route has that address as its
  // source (`local VIP dev kube-ipvs0 ... src VIP`), which is what KUBE-CLUSTER-IP src,dst is for.
  if (packet.source === undefined) {
    const dst = ipOf(packet.destination);
    if (dst && local.some((a) => ipEquals(dst, a))) {
      packet = { ...packet, source: formatIP(dst), origin: packet.origin ?? 'node' };
      notes.push(`from the node to ${formatIP(dst)}, an address of kube-ipvs0: the source is that address (the kernel's local route), as when a process on the node connects`);
    }
  }
  const result = traceRuleSet(readRules(bundle.iptablesRules, { lazy: true }), packet, node, {
    builtinJumps: IPVS_BUILTIN_JUMPS,
    localIPs: local,
    match(m, p) {
      if (m.module === 'ipvs') return ipvsMatch(m.text, p);
      if (m.module === 'physdev') {
        // kube-proxy's `! --physdev-is-in`: the packet did not come in through a bridge port.
        const o = optionsOf(m.text);
        if (o.length !== 1 || o[0]!.name !== 'physdev-is-in') return undefined;
        if (!notes.includes(PHYSDEV_NOTE)) notes.push(PHYSDEV_NOTE);
        return o[0]!.negated;
      }
      if (m.module !== 'set') return undefined;
      const o = optionsOf(m.text);
      const ms = o.find((x) => x.name === 'match-set' || x.name === 'set');
      if (!ms || o.length !== 1 || ms.values.length !== 2) return undefined;
      const set = sets.get(ms.values[0]!);
      if (!set) {
        notes.push(`${m.text}: no set ${ms.values[0]} in ipset.rules; taken as empty`);
        return ms.negated;
      }
      const hit = inSet(set, ms.values[1]!.split(','), p);
      return hit === undefined ? undefined : hit !== ms.negated;
    },
    balance(p) {
      const vs = table.virtualServers.get(`${formatHostPort(formatIP(p.dst), p.dport)}/${PROTO[p.proto]}`);
      if (!vs) return undefined;
      const { shares, note } = realServerShares(vs);
      if (note) notes.push(note);
      const outcomes: BalanceOutcome[] = [];
      const reals = [...vs.realServers.values()];
      for (const [i, r] of shares.entries()) {
        if (r.probability <= 0) continue;
        const real = reals[i]!;
        outcomes.push({ probability: r.probability, to: { ip: ipOf(real.ip)!, port: real.port }, action: `DNAT to ${r.address} (${vs.scheduler}, weight ${r.weight})` });
      }
      if (outcomes.length === 0) {
        outcomes.push({ probability: 1, verdict: 'REJECT', action: `no real server of weight > 0: REJECT (ICMP port unreachable)` });
      }
      if (!stage) {
        stage = { virtualServer: vs.key, scheduler: vs.scheduler, ...(vs.persistence !== undefined ? { persistence: vs.persistence } : {}), realServers: shares, ...(outcomes[0]!.verdict ? { verdict: 'REJECT' as const } : {}), reached: 0 };
      }
      return { name: vs.key, outcomes };
    },
  });
  if (stage) {
    // The probability the stage was reached: the branches that went through it.
    stage.reached = roundProbability(result.branches.filter((b) => b.chains.includes(`ipvs/${stage!.virtualServer}`)).reduce((a, b) => a + b.probability, 0));
    if (stage.persistence !== undefined) {
      result.affinity.push({ name: stage.virtualServer, seconds: stage.persistence, rule: `ipvs/${stage.virtualServer} -p ${stage.persistence}` });
    }
  }
  for (const n of notes) if (!result.notes.includes(n)) result.notes.push(n);
  return stage ? { ...result, ipvs: stage } : result;
}

/** The IPVS stage in the text view (after renderTrace's lines). */
export function renderIpvsStage(stage: IpvsStage): string {
  const head = `ipvs: virtual server ${stage.virtualServer}, scheduler ${stage.scheduler}${stage.persistence !== undefined ? `, persistence ${stage.persistence}s (a returning client goes to the same real server)` : ''}`;
  if (stage.realServers.length === 0) return `${head}: no real servers (REJECT)\n`;
  const lines = stage.realServers.map((r) => `  ${r.address.padEnd(22)} weight ${r.weight}${r.weight === 0 ? ' (no new connections)' : ''}  ${Math.round(r.probability * 1000) / 10}%`);
  return [head, ...lines].join('\n') + '\n';
}

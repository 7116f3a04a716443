/**
 * Follow the first packet of a new connection through iptables rules, as netfilter would.
 *
 * Modelled on the tracer in kube-proxy's own tests (pkg/proxy/iptables/proxier_test.go
 * tracePacket / iptablesTracer), with these differences, all towards what the kernel does:
 *
 *   - the hooks are the real ones for the packet's origin:
 *       from the network:  nat PREROUTING → routing → filter INPUT            (to a node address)
 *                                                   → filter FORWARD → nat POSTROUTING (elsewhere)
 *       from the node:     nat OUTPUT → filter OUTPUT → nat POSTROUTING [→ filter INPUT if local]
 *     (kube-proxy's tracer runs nat PREROUTING and then filter KUBE-SERVICES,
 *     KUBE-EXTERNAL-SERVICES, KUBE-NODEPORTS, KUBE-PROXY-FIREWALL for every packet);
 *   - every match is evaluated (kube-proxy's tracer assumes matches it does not know match,
 *     and never matches a mark or conntrack test); marks are real: KUBE-MARK-MASQ sets the
 *     bit, KUBE-POSTROUTING tests it and MASQUERADEs, so "masquerade" means the packet
 *     reached MASQUERADE in nat POSTROUTING;
 *   - the connection is NEW; after a DNAT the conntrack state DNAT is set too;
 *   - `-m statistic --mode random` splits the packet into two branches (match with
 *     probability p, no match with 1 - p), and each branch is followed on its own to its
 *     own verdict, so probabilities multiply down a chain;
 *   - `-m recent --rcheck/--update` never matches a new client (no earlier connection),
 *     but the tracer says that session affinity would send a returning client back;
 *   - addrtype LOCAL is true for the node's addresses, 127.0.0.0/8 and ::1.
 *
 * How branches are reported (TraceResult):
 *   - `branches`: every outcome, with its probability, verdict, final destination, masquerade
 *     flag and the rules it matched;
 *   - `verdict`: ACCEPT when every branch is accepted; otherwise DROP if any branch is dropped,
 *     else REJECT (the connection can fail; `verdicts` gives the probability of each);
 *   - `endpoints`: the DNAT destinations of the accepted branches, probabilities summed per
 *     address (they add up to the probability of ACCEPT; an accepted packet that was not
 *     DNATed adds no endpoint: it goes on to its original destination);
 *   - `masquerade`: some accepted branch is masqueraded (each endpoint says for itself);
 *   - `path`: every chain any branch entered, in order of first entry ("nat/KUBE-SERVICES").
 *
 * Pure: no I/O, no clock, no randomness.
 */

import { formatIP, formatIPPort, isLoopback, parseIP, type IP } from '../net/ip.js';
import { addressMatches, compareIP } from '../lang/iptables/address.js';
import { implicitBuiltinChain } from '../lang/iptables/builtin-jumps.js';
import type { BuiltinJump } from '../lang/iptables/chains.js';
import type { Chain, Match, Rule, RuleSet, Target } from '../lang/iptables/model.js';
import { LazyChain } from '../lang/iptables/lazy-chain.js';
import { readRules } from '../lang/iptables/read.js';
import { isLocalAddress, startPacket } from './packet.js';
import { summarizeBranches, traceError, type AffinityNote, type NodeSpec, type PacketSpec, type Protocol, type TraceBranch, type TraceResult, type TraceStep, type Verdict } from './result.js';


/** What an extension sees of a packet (TraceExtension). */
export interface PacketView {
  src: IP;
  dst: IP;
  dport: number;
  sport?: number;
  proto: Protocol;
  mark: number;
  /** After an IPVS balancer: the virtual server the connection belongs to (for `-m ipvs`). */
  vip?: { ip: IP; port: number; proto: Protocol };
}

/** One outcome of a balancer (TraceExtension.balance). */
export interface BalanceOutcome {
  probability: number;
  /** The real server the connection is sent to (absent with a verdict). */
  to?: { ip: IP; port: number };
  /** The balancer refuses the connection (IPVS: no real server to schedule). */
  verdict?: 'DROP' | 'REJECT';
  /** What the step says, e.g. "DNAT to 10.180.0.1:80 (rr, weight 1)". */
  action: string;
}

/**
 * Hooks for rules the iptables tracer does not evaluate alone (IPVS mode, src/trace/ipvs.ts).
 * Without one, tracing is exactly as described above.
 */
export interface TraceExtension {
  /** A match the tracer does not model (`-m set`, `-m ipvs`): true/false, or undefined = not known. */
  match?(m: { module: string; text: string }, packet: PacketView): boolean | undefined;
  /** The jumps assumed in a built-in chain the rules do not declare (default: iptables mode's). */
  builtinJumps?: readonly BuiltinJump[];
  /** More addresses that are the node's own (addrtype LOCAL), never picked as the default source. */
  localIPs?: string[];
  /**
   * A load balancer at the local-delivery hooks (IPVS: LOCAL_IN after filter INPUT, LOCAL_OUT
   * after nat OUTPUT): undefined = no virtual server for the packet. A balanced packet then
   * goes through filter OUTPUT and nat POSTROUTING to its real server. `name` names the stage
   * in the path and steps (table "ipvs", chain `name`).
   */
  balance?(packet: PacketView): { name: string; outcomes: BalanceOutcome[] } | undefined;
}

const MAX_DEPTH = 64;
const MAX_BRANCHES = 100_000;

interface State {
  src: IP;
  dst: IP;
  dport: number;
  sport?: number;
  proto: Protocol;
  inIface?: string;
  outIface?: string;
  mark: number;
  ctmark: number;
  ctstate: Set<string>;
  dnat?: string;
  masquerade: boolean;
  probability: number;
  steps: TraceStep[];
  chains: string[];
  verdictBy?: string;
  vip?: PacketView['vip'];
}

type End = 'fallthrough' | 'return' | 'ACCEPT' | 'DROP' | 'REJECT' | 'NAT';

interface Outcome {
  state: State;
  end: End;
}

interface Ctx {
  rules: RuleSet;
  nodeIPs: IP[];
  notes: Set<string>;
  affinity: Map<string, AffinityNote>;
  branches: number;
  /** A built-in chain was not in the text and kube-proxy's jumps were assumed. */
  implicit: Set<string>;
  implicitChains: Map<string, Chain>;
  ext?: TraceExtension;
}

function clone(s: State, probability: number): State {
  return { ...s, ctstate: new Set(s.ctstate), steps: [...s.steps], chains: [...s.chains], probability };
}

function isLocal(ctx: Ctx, ip: IP): boolean {
  return isLocalAddress(ctx.nodeIPs, ip);
}

function isMulticast(ip: IP): boolean {
  return ip.family === 'IPv4' ? (ip.bytes[0]! & 0xf0) === 0xe0 : ip.bytes[0] === 0xff;
}

function isBroadcast(ip: IP): boolean {
  return ip.family === 'IPv4' && ip.bytes.every((b) => b === 255);
}

function ruleRef(rule: Rule): string {
  return rule.implicit ? `${rule.table}/${rule.chain} (kube-proxy's jump, assumed)` : `${rule.table}/${rule.chain} #${rule.index}`;
}

/** Whether one match holds; a number in (0,1) for a random match. */
function evalMatch(ctx: Ctx, rule: Rule, m: Match, s: State): boolean | number {
  const xor = (v: boolean, negated: boolean) => (negated ? !v : v);
  switch (m.kind) {
    case 'address': {
      const ip = m.which === 'source' ? s.src : s.dst;
      return xor(m.addresses.some((a) => addressMatches(a, ip)), m.negated);
    }
    case 'protocol':
      return xor(m.protocol === 'all' || m.protocol === s.proto, m.negated);
    case 'interface': {
      const actual = m.which === 'in' ? s.inIface : s.outIface;
      if (actual === undefined) {
        ctx.notes.add(`${ruleRef(rule)} tests the ${m.which === 'in' ? 'input' : 'output'} interface (${m.negated ? '! ' : ''}${m.which === 'in' ? '-i' : '-o'} ${m.name}), which is not known; assumed not ${m.name}${m.which === 'in' ? ' (give --in-interface)' : ''}`);
        return m.negated;
      }
      const hit = m.name.endsWith('+') ? actual.startsWith(m.name.slice(0, -1)) : actual === m.name;
      return xor(hit, m.negated);
    }
    case 'fragment':
      return m.negated;
    case 'port': {
      if (['tcp', 'udp', 'sctp', 'udplite'].includes(m.module) && m.module !== s.proto) return false;
      const inRanges = (p: number | undefined) => p !== undefined && m.ranges.some(([lo, hi]) => p >= lo && p <= hi);
      if (m.which !== 'destination' && s.sport === undefined) {
        ctx.notes.add(`${ruleRef(rule)} tests the source port, which is not known; assumed outside ${m.ranges.map(([a, b]) => (a === b ? a : `${a}:${b}`)).join(',')}`);
      }
      const hit = m.which === 'destination' ? inRanges(s.dport) : m.which === 'source' ? inRanges(s.sport) : inRanges(s.dport) || inRanges(s.sport);
      return xor(hit, m.negated);
    }
    case 'tcp-flags': {
      if (s.proto !== 'tcp') return false;
      // The first packet of a TCP connection carries SYN only.
      const set = new Set<string>(m.mask.filter((f) => f === 'SYN'));
      const hit = m.comp.every((f) => set.has(f)) && [...set].every((f) => m.comp.includes(f));
      return xor(hit, m.negated);
    }
    case 'addrtype': {
      const ip = m.which === 'source' ? s.src : s.dst;
      const local = isLocal(ctx, ip);
      const hit = m.types.some((t) => {
        switch (t) {
          case 'LOCAL':
            return local;
          case 'UNICAST':
            return !local && !isMulticast(ip) && !isBroadcast(ip);
          case 'MULTICAST':
            return isMulticast(ip);
          case 'BROADCAST':
            return isBroadcast(ip);
          case 'UNSPEC':
            return ip.bytes.every((b) => b === 0);
          default:
            ctx.notes.add(`${ruleRef(rule)}: addrtype ${t} is not modelled; assumed not to match`);
            return false;
        }
      });
      return xor(hit, m.negated);
    }
    case 'ctstate':
      return xor(m.states.some((st) => s.ctstate.has(st)), m.negated);
    case 'mark': {
      const value = m.on === 'packet' ? s.mark : s.ctmark;
      return xor(((value & m.mask) >>> 0) === ((m.value & m.mask) >>> 0), m.negated);
    }
    case 'random': {
      const p = m.negated ? 1 - m.probability : m.probability;
      return p >= 1 ? true : p <= 0 ? false : p;
    }
    case 'recent': {
      if (m.action === 'set') return !m.negated;
      if ((m.action === 'rcheck' || m.action === 'update') && !m.negated) {
        const target = rule.target?.kind === 'chain' ? rule.target.chain : undefined;
        const key = `${rule.table}/${rule.chain}/${m.name}`;
        if (!ctx.affinity.has(key)) {
          const endpoint = target ? dnatOfChain(ctx, rule.table, target) : undefined;
          ctx.affinity.set(key, { name: m.name, ...(m.seconds !== undefined ? { seconds: m.seconds } : {}), rule: ruleRef(rule), ...(endpoint ? { endpoint } : {}) });
        }
      }
      // A new client has no entry in the list.
      return m.negated;
    }
    case 'comment':
    case 'nfacct':
    case 'neutral':
      return true;
    case 'iprange': {
      const ip = m.which === 'source' ? s.src : s.dst;
      const from = { family: m.from.family, bytes: m.from.bytes };
      const to = { family: m.to.family, bytes: m.to.bytes };
      const hit = ip.family === from.family && compareIP(ip, from) >= 0 && compareIP(ip, to) <= 0;
      return xor(hit, m.negated);
    }
    case 'unsupported': {
      const known = ctx.ext?.match?.({ module: m.module, text: m.text }, viewOf(s));
      if (known !== undefined) return known;
      ctx.notes.add(`${ruleRef(rule)} uses "${m.text}", which kpc trace cannot evaluate offline; assumed not to match`);
      return false;
    }
  }
}

function viewOf(s: State): PacketView {
  return { src: s.src, dst: s.dst, dport: s.dport, ...(s.sport !== undefined ? { sport: s.sport } : {}), proto: s.proto, mark: s.mark, ...(s.vip ? { vip: s.vip } : {}) };
}

/** The DNAT destination written in a chain (kube-proxy's KUBE-SEP chains have one). */
function dnatOfChain(ctx: Ctx, table: string, chain: string): string | undefined {
  for (const r of ctx.rules.tables.get(table)?.chains.get(chain)?.rules ?? []) {
    if (r.target?.kind === 'DNAT') return r.target.to;
  }
  return undefined;
}

function describeTarget(t: Target | undefined): string {
  if (!t) return 'no target (goes on)';
  switch (t.kind) {
    case 'chain':
      return `${t.goto ? '-g' : '-j'} ${t.chain}`;
    case 'ACCEPT':
    case 'DROP':
    case 'RETURN':
      return t.kind;
    case 'REJECT':
      return t.rejectWith ? `REJECT (${t.rejectWith})` : 'REJECT';
    case 'DNAT':
      return `DNAT to ${t.to}`;
    case 'SNAT':
      return `SNAT to ${t.to}`;
    case 'MASQUERADE':
      return 'MASQUERADE';
    case 'MARK':
      return `MARK ${t.text}`;
    case 'CONNMARK':
      return `CONNMARK ${t.text}`;
    case 'other':
      return `${t.name}${t.options.length ? ' ' + t.options.join(' ') : ''}`;
  }
}

function stepOf(rule: Rule, action: string, probability?: string): TraceStep {
  return {
    table: rule.table,
    chain: rule.chain,
    rule: { index: rule.index, line: rule.line, spec: rule.spec, ...(rule.comment !== undefined ? { comment: rule.comment } : {}), ...(rule.implicit ? { implicit: true } : {}) },
    action,
    ...(probability !== undefined ? { probability } : {}),
  };
}

function runChain(ctx: Ctx, table: string, chain: Chain, start: State, depth: number): Outcome[] {
  if (depth > MAX_DEPTH) throw traceError(`more than ${MAX_DEPTH} nested jumps at ${table}/${chain.name}: the rules loop`);
  const results: Outcome[] = [];
  start.chains.push(`${table}/${chain.name}`);
  const pending: Array<{ s: State; i: number }> = [{ s: start, i: 0 }];
  // A rule read lazily from a node's text is parsed only if the packet's destination may match it.
  const lazy = chain instanceof LazyChain ? chain : undefined;
  const count = lazy ? lazy.count : chain.rules.length;
  while (pending.length > 0) {
    const item = pending.pop()!;
    let s = item.s;
    let consumed = false;
    for (let i = item.i; i < count && !consumed; i++) {
      const rule = lazy ? lazy.ruleFor(i, s.dst) : chain.rules[i]!;
      if (!rule) continue;
      let p = 1;
      let randomText: string | undefined;
      let matched = true;
      for (const m of rule.matches) {
        const r = evalMatch(ctx, rule, m, s);
        if (r === false) {
          matched = false;
          break;
        }
        if (typeof r === 'number') {
          p *= r;
          if (m.kind === 'random') randomText = m.text;
        }
      }
      if (!matched) continue;
      if (p < 1) {
        if (++ctx.branches > MAX_BRANCHES) throw traceError(`more than ${MAX_BRANCHES} branches; giving up`);
        // The branch where the random match fails goes on with the next rule.
        pending.push({ s: clone(s, s.probability * (1 - p)), i: i + 1 });
        s = clone(s, s.probability * p);
      }
      const t = rule.target;
      s.steps.push(stepOf(rule, describeTarget(t), randomText));
      if (!t) continue;
      switch (t.kind) {
        case 'chain': {
          const sub = ctx.rules.tables.get(table)?.chains.get(t.chain);
          if (!sub) {
            // kube-proxy's assumed jumps may name a chain this ruleset lacks (KUBE-FIREWALL on
            // IPv6): kube-proxy creates it empty. Only a real rule's dangling jump is worth a note.
            if (!rule.implicit) ctx.notes.add(`${ruleRef(rule)} jumps to ${t.chain}, which is not in table ${table}; treated as empty`);
            continue;
          }
          for (const o of runChain(ctx, table, sub, s, depth + 1)) {
            if (o.end === 'fallthrough' || o.end === 'return') {
              if (t.goto) results.push({ state: o.state, end: 'return' });
              else pending.push({ s: o.state, i: i + 1 });
            } else {
              results.push(o);
            }
          }
          consumed = true;
          break;
        }
        case 'ACCEPT':
        case 'DROP':
        case 'REJECT':
          s.verdictBy = ruleRef(rule);
          results.push({ state: s, end: t.kind });
          consumed = true;
          break;
        case 'RETURN':
          results.push({ state: s, end: 'return' });
          consumed = true;
          break;
        case 'DNAT': {
          const ip = t.ip !== undefined ? parseIP(t.ip)?.ip : undefined;
          if (ip) s.dst = ip;
          if (t.port !== undefined) s.dport = t.port;
          s.ctstate.add('DNAT');
          s.dnat = formatIPPort(s.dst, s.dport);
          results.push({ state: s, end: 'NAT' });
          consumed = true;
          break;
        }
        case 'SNAT':
        case 'MASQUERADE':
          s.masquerade = true;
          s.ctstate.add('SNAT');
          results.push({ state: s, end: 'NAT' });
          consumed = true;
          break;
        case 'MARK':
          s.mark = ((s.mark & ~t.mask) ^ t.value) >>> 0;
          break;
        case 'CONNMARK':
          if (t.value !== undefined && t.mask !== undefined) s.ctmark = ((s.ctmark & ~t.mask) ^ t.value) >>> 0;
          else ctx.notes.add(`${ruleRef(rule)}: CONNMARK ${t.text} is not modelled; ignored`);
          break;
        case 'other':
          ctx.notes.add(`${ruleRef(rule)}: target ${t.name} is not modelled; the packet is assumed to go on`);
          break;
      }
    }
    if (!consumed) results.push({ state: s, end: 'fallthrough' });
  }
  return results;
}

/** The outcome of one hook (table + built-in chain) for each branch. */
function runHook(ctx: Ctx, table: string, chainName: string, states: State[]): Array<{ state: State; verdict?: 'DROP' | 'REJECT' }> {
  const t = ctx.rules.tables.get(table);
  let chain = t?.chains.get(chainName);
  if (!chain) {
    const key = `${table}/${chainName}`;
    chain = ctx.implicitChains.get(key);
    if (!chain) {
      chain = implicitBuiltinChain(table, chainName, ctx.ext?.builtinJumps);
      ctx.implicitChains.set(key, chain);
    }
    if (chain.rules.length > 0 && states.length > 0) ctx.implicit.add(key);
  }
  const out: Array<{ state: State; verdict?: 'DROP' | 'REJECT' }> = [];
  for (const s0 of states) {
    for (const o of runChain(ctx, table, chain, s0, 0)) {
      const s = o.state;
      let end: End = o.end;
      if (end === 'fallthrough' || end === 'return') {
        const policy = chain.policy === 'DROP' ? 'DROP' : 'ACCEPT';
        s.steps.push({ table, chain: chainName, action: `policy ${policy}` });
        if (table === 'filter' || policy === 'DROP') s.verdictBy = `policy of ${table}/${chainName}`;
        end = policy;
      }
      if (end === 'DROP' || end === 'REJECT') out.push({ state: s, verdict: end });
      else out.push({ state: s });
    }
  }
  return out;
}

/**
 * Trace a new connection through a rules text (iptables-restore input or iptables-save output).
 * Throws a KpcError: previous.unreadable for text iptables-restore would refuse, query.unanswerable for a bad packet.
 */
export function traceRules(rulesText: string, packet: PacketSpec, node: NodeSpec): TraceResult {
  return traceRuleSet(readRules(rulesText, { lazy: true }), packet, node);
}

export function traceRuleSet(rules: RuleSet, packet: PacketSpec, node: NodeSpec, ext?: TraceExtension): TraceResult {
  const { src, dst, protocol, origin, nodeIPs, notes } = startPacket(packet, node, ext?.localIPs);
  const ctx: Ctx = { rules, nodeIPs, notes: new Set(notes), affinity: new Map(), branches: 0, implicit: new Set(), implicitChains: new Map(), ...(ext ? { ext } : {}) };

  const initial: State = {
    src,
    dst,
    dport: packet.port,
    ...(packet.sourcePort !== undefined ? { sport: packet.sourcePort } : {}),
    proto: protocol,
    ...(origin === 'network' && packet.inInterface !== undefined ? { inIface: packet.inInterface } : {}),
    ...(packet.outInterface !== undefined ? { outIface: packet.outInterface } : {}),
    mark: 0,
    ctmark: 0,
    ctstate: new Set(['NEW']),
    masquerade: false,
    probability: 1,
    steps: [],
    chains: [],
  };

  const finished: TraceBranch[] = [];
  const finish = (s: State, verdict: Verdict) => {
    finished.push({
      probability: s.probability,
      verdict,
      verdictBy: s.verdictBy ?? 'no rule',
      destination: formatIPPort(s.dst, s.dport),
      dnat: s.dnat !== undefined,
      masquerade: s.masquerade,
      steps: s.steps,
      chains: s.chains,
    });
  };
  // Run one hook over the live branches; dropped ones finish here.
  const hook = (table: string, chain: string, states: State[]): State[] => {
    const live: State[] = [];
    for (const o of runHook(ctx, table, chain, states)) {
      if (o.verdict) finish(o.state, o.verdict);
      else live.push(o.state);
    }
    return live;
  };
  const deliverLocally = (s: State) => {
    if (isLoopback(s.dst)) s.outIface = s.outIface ?? 'lo';
  };

  // A balancer (IPVS) between the hooks: its balanced branches go on through filter OUTPUT
  // and nat POSTROUTING (ip_vs_nat_xmit sends them through LOCAL_OUT), then to the real server.
  const balance = ext?.balance;
  const balanced = (s: State): State[] | undefined => {
    const b = balance?.(viewOf(s));
    if (!b) return undefined;
    s.chains.push(`ipvs/${b.name}`);
    const out: State[] = [];
    for (const o of b.outcomes) {
      const t = clone(s, s.probability * o.probability);
      t.steps.push({ table: 'ipvs', chain: b.name, action: o.action });
      if (o.verdict) {
        t.verdictBy = `ipvs/${b.name}`;
        finish(t, o.verdict);
        continue;
      }
      if (o.to) {
        t.vip = { ip: t.dst, port: t.dport, proto: t.proto };
        t.dst = o.to.ip;
        t.dport = o.to.port;
        t.ctstate.add('DNAT');
        t.dnat = formatIPPort(t.dst, t.dport);
      }
      out.push(t);
    }
    return out;
  };
  const afterBalance = (states: State[]) => {
    for (const s of hook('nat', 'POSTROUTING', hook('filter', 'OUTPUT', states))) {
      if (isLocal(ctx, s.dst)) {
        s.inIface = 'lo';
        for (const t of hook('filter', 'INPUT', [s])) finish(t, 'ACCEPT');
      } else finish(s, 'ACCEPT');
    }
  };

  if (balance && origin === 'network') {
    for (const s of hook('nat', 'PREROUTING', [initial])) {
      if (isLocal(ctx, s.dst)) {
        for (const t of hook('filter', 'INPUT', [s])) {
          const b = balanced(t);
          if (b) afterBalance(b);
          else finish(t, 'ACCEPT');
        }
      } else {
        const forwarded = hook('filter', 'FORWARD', [s]);
        for (const t of hook('nat', 'POSTROUTING', forwarded)) finish(t, 'ACCEPT');
      }
    }
  } else if (balance) {
    for (const s of hook('nat', 'OUTPUT', [initial])) {
      const b = balanced(s);
      if (b) {
        afterBalance(b);
        continue;
      }
      if (isLocal(ctx, s.dst)) deliverLocally(s);
      afterBalance([s]);
    }
  } else if (origin === 'network') {
    for (const s of hook('nat', 'PREROUTING', [initial])) {
      if (isLocal(ctx, s.dst)) {
        for (const t of hook('filter', 'INPUT', [s])) finish(t, 'ACCEPT');
      } else {
        const forwarded = hook('filter', 'FORWARD', [s]);
        for (const t of hook('nat', 'POSTROUTING', forwarded)) finish(t, 'ACCEPT');
      }
    }
  } else {
    let live = hook('nat', 'OUTPUT', [initial]);
    for (const s of live) if (isLocal(ctx, s.dst)) deliverLocally(s);
    live = hook('filter', 'OUTPUT', live);
    live = hook('nat', 'POSTROUTING', live);
    for (const s of live) {
      if (isLocal(ctx, s.dst)) {
        // A packet to a local address loops back through lo and is delivered via INPUT.
        s.inIface = 'lo';
        for (const t of hook('filter', 'INPUT', [s])) finish(t, 'ACCEPT');
      } else {
        finish(s, 'ACCEPT');
      }
    }
  }

  return summarize(ctx, finished, {
    source: formatIP(src),
    destination: formatIP(dst),
    port: packet.port,
    protocol,
    origin,
  });
}

function summarize(ctx: Ctx, branches: TraceBranch[], packet: TraceResult['packet']): TraceResult {
  const notes = [...ctx.notes];
  if (ctx.implicit.size > 0) {
    notes.unshift(`the rules do not declare ${[...ctx.implicit].join(', ')}; kube-proxy's jumps into its chains were assumed there (kube-proxy installs them with iptables -I; kpc compile --standalone writes them)`);
  }
  return summarizeBranches(branches, packet, ctx.affinity.values(), notes);
}

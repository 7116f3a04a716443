/**
 * `kpc trace` over nftables: follow the first packet of a new connection through kube-proxy's
 * table (kpc's output, or a node's `nft list table` / `nft list ruleset` / `nft -j` — one table,
 * `ip kube-proxy` or `ip6 kube-proxy`, read into a state by src/lang/nftables) the way netfilter
 * does, and answer in the iptables tracer's shape (TraceResult).
 *
 * Path: from the network, the prerouting base chains by priority (filter-prerouting-pre-dnat
 * at -110, nat-prerouting at -100, where DNAT happens), then the routing decision — to a local
 * address: the input chains; otherwise forward, then postrouting. From the node: the output
 * chains by priority, postrouting, and input when the destination is local. A nat statement
 * (dnat, masquerade) ends its chain's evaluation, as in the kernel; `accept` ends the base
 * chain; drop and reject end the packet. `jump` returns, `goto` does not; `return` and a
 * chain's end go back to the caller.
 *
 * Rules are read from their canonical text (canonical.ts): matches on `ip saddr/daddr`,
 * `meta l4proto`, `th dport`, `meta mark & M`, `ct state`, `ct status dnat`, `fib saddr/daddr
 * type local`, `iifname`, concatenations of them against literal values, anonymous sets and
 * named sets (`@cluster-ips`), verdict maps (`vmap @service-ips`, concatenated keys), `numgen
 * random mod N vmap { … }` and `dnat … to numgen random mod N map { … }` (branches of 1/N),
 * `meta mark set meta mark | M` / `^ M`. A lookup in a dynamic set (ClientIP affinity) is
 * reported and treated as a new client (no match). Anything else: an error naming the rule.
 */

import { cidrContains, formatIP, formatIPPort, parseCIDR, parseIP, type IP } from '../net/ip.js';
import { ruleTokens, viewOfState, type NftState, type NftTableView, type StateRule } from '../lang/nftables/index.js';
import { isLocalAddress, startPacket } from './packet.js';
import { summarizeBranches, traceError, type AffinityNote, type NodeSpec, type PacketSpec, type Protocol, type TraceBranch, type TraceResult, type TraceStep, type Verdict } from './result.js';

interface S {
  src: IP;
  dst: IP;
  dport: number;
  proto: Protocol;
  inIface?: string;
  mark: number;
  dnat: boolean;
  masquerade: boolean;
  probability: number;
  steps: TraceStep[];
  chains: string[];
  verdictBy?: string;
}

type End = 'accept' | 'drop' | 'reject' | 'continue';
interface Outcome {
  s: S;
  end: End;
}

interface Ctx {
  state: NftTableView;
  nodeIPs: IP[];
  notes: Set<string>;
  affinity: Map<string, AffinityNote>;
  branches: number;
}

const MAX_DEPTH = 64;
const MAX_BRANCHES = 100_000;

function clone(s: S): S {
  return { ...s, steps: [...s.steps], chains: [...s.chains] };
}

function isLocal(ctx: Ctx, ip: IP): boolean {
  return isLocalAddress(ctx.nodeIPs, ip);
}

/** A rule's tokens with a cursor. */
class Cursor {
  i = 0;
  constructor(
    readonly toks: string[],
    readonly where: string,
  ) {}
  peek(k = 0): string | undefined {
    return this.toks[this.i + k];
  }
  next(): string {
    const t = this.toks[this.i++];
    if (t === undefined) throw this.error('unexpected end of rule');
    return t;
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
  error(msg: string): Error {
    return traceError(`${this.where}: ${msg} (kpc trace follows kube-proxy's nftables rules)`);
  }
  /** `{ a, b : c, … }` → the items, each a list of tokens. */
  group(): string[][] {
    if (this.next() !== '{') throw this.error('expected {');
    const items: string[][] = [[]];
    for (;;) {
      const t = this.next();
      if (t === '}') break;
      if (t === ',') items.push([]);
      else items[items.length - 1]!.push(t);
    }
    return items.filter((x) => x.length > 0);
  }
}

type Value = { kind: 'ip'; ip: IP } | { kind: 'text'; text: string } | { kind: 'number'; n: number };

function valueText(v: Value): string {
  return v.kind === 'ip' ? formatIP(v.ip) : v.kind === 'number' ? String(v.n) : v.text;
}

/** One selector's value for the packet (`ip daddr`, `meta l4proto`, …), with the tokens it took. */
function selector(c: Cursor, s: S, ctx: Ctx): Value[] | undefined {
  const t = c.peek();
  const one = (v: Value): Value[] => [v];
  let out: Value[] | undefined;
  if ((t === 'ip' || t === 'ip6') && (c.peek(1) === 'saddr' || c.peek(1) === 'daddr')) {
    c.next();
    out = one({ kind: 'ip', ip: c.next() === 'saddr' ? s.src : s.dst });
  } else if (t === 'meta' && c.peek(1) === 'l4proto') {
    c.i += 2;
    out = one({ kind: 'text', text: s.proto });
  } else if (t === 'meta' && c.peek(1) === 'mark') {
    c.i += 2;
    let n = s.mark;
    while (c.peek() === '&' || c.peek() === '|' || c.peek() === '^') {
      const op = c.next();
      const m = Number(c.next());
      n = op === '&' ? n & m : op === '|' ? n | m : n ^ m;
    }
    out = one({ kind: 'number', n: n >>> 0 });
  } else if (t === 'th' && c.peek(1) === 'dport') {
    c.i += 2;
    out = one({ kind: 'number', n: s.dport });
  } else if ((t === 'tcp' || t === 'udp' || t === 'sctp') && c.peek(1) === 'dport') {
    c.i += 2;
    out = one({ kind: 'number', n: t === s.proto ? s.dport : -1 });
  } else if (t === 'ct' && (c.peek(1) === 'state' || c.peek(1) === 'status')) {
    c.next();
    out = one({ kind: 'text', text: c.next() === 'state' ? 'new' : s.dnat ? 'dnat' : '' });
  } else if (t === 'fib' && (c.peek(1) === 'saddr' || c.peek(1) === 'daddr') && c.peek(2) === 'type') {
    c.next();
    const which = c.next();
    c.next();
    out = one({ kind: 'text', text: isLocal(ctx, which === 'saddr' ? s.src : s.dst) ? 'local' : 'unicast' });
  } else if (t === 'iifname') {
    c.next();
    out = one({ kind: 'text', text: s.inIface ?? '' });
  } else return undefined;
  if (c.peek() === '.') {
    c.next();
    const rest = selector(c, s, ctx);
    if (!rest) throw c.error('a concatenation of something kpc cannot evaluate');
    out = [...out, ...rest];
  }
  return out;
}

/** Does a literal (IP, CIDR, name, number) match one value? */
function literalMatches(lit: string, v: Value, hasIface: boolean): boolean {
  if (v.kind === 'ip') {
    if (lit.includes('/')) {
      const c = parseCIDR(lit);
      return c !== undefined && cidrContains(c.cidr, v.ip);
    }
    const ip = parseIP(lit);
    return ip !== undefined && formatIP(ip.ip) === formatIP(v.ip);
  }
  if (v.kind === 'number') return /^\d+$/.test(lit) && Number(lit) === v.n;
  if (hasIface && lit.endsWith('*')) return v.text.startsWith(lit.slice(0, -1));
  return lit === v.text || (lit === 'new' && v.text === 'new');
}

function tupleMatches(words: string[], vals: Value[], iface: boolean): boolean {
  const parts: string[][] = [[]];
  for (const w of words) {
    if (w === '.') parts.push([]);
    else parts[parts.length - 1]!.push(w);
  }
  if (parts.length !== vals.length) return false;
  return parts.every((p, i) => p.length === 1 && literalMatches(p[0]!, vals[i]!, iface));
}

function keyOf(vals: Value[]): string {
  return vals.map(valueText).join(' . ');
}

type RuleResult = { matched: false } | { matched: true; outs: Array<{ s: S; action: Action }> };
type Action = { kind: 'continue' } | { kind: 'verdict'; verdict: 'accept' | 'drop' | 'reject' | 'return' } | { kind: 'jump' | 'goto'; chain: string } | { kind: 'nat'; what: 'dnat' | 'masquerade' };

/** A verdict's tokens (`goto X`, `drop`, …). */
function verdictOf(words: string[], c: Cursor): Action {
  const [w, x] = words;
  if ((w === 'goto' || w === 'jump') && x) return { kind: w, chain: x };
  if (w === 'accept' || w === 'drop' || w === 'return') return { kind: 'verdict', verdict: w };
  if (w === 'reject') return { kind: 'verdict', verdict: 'reject' };
  throw c.error(`unknown verdict ${words.join(' ')}`);
}

/** `numgen random mod N` at the cursor (consumed): N. */
function numgenMod(c: Cursor): number {
  c.next(); // numgen
  if (c.next() !== 'random' || c.next() !== 'mod') throw c.error('expected numgen random mod N');
  const mod = Number(c.next());
  if (!Number.isInteger(mod) || mod < 1) throw c.error('expected numgen random mod N (N a positive number)');
  return mod;
}

/**
 * The endpoint an affinity rule sends a returning client to, as `IP:PORT` / `[IP]:PORT`: the
 * `dnat to` target of the endpoint chain it goes to (the chain's name encodes the endpoint too,
 * but hashAndTruncate may have cut it, `…...`, and a name is not an address).
 */
function endpointOfChain(ctx: Ctx, chain: string): string | undefined {
  for (const r of ctx.state.chain(chain)?.rules ?? []) {
    const t = ruleTokens(r.text);
    const d = t.indexOf('dnat');
    if (d < 0) continue;
    let i = d + 1;
    if (t[i] === 'ip' || t[i] === 'ip6') i++;
    if (t[i] !== 'to') continue;
    const target = t[i + 1];
    if (target !== undefined && /^(?:\[[0-9a-fA-F:.]+\]|[0-9.]+):\d+$/.test(target)) return target;
  }
  return undefined;
}

/** Evaluates one rule against one state: no match, or the branches it makes and what each does. */
function evalRule(ctx: Ctx, rule: StateRule, where: string, s0: S): RuleResult {
  const c = new Cursor(ruleTokens(rule.key), where);
  let branches: Array<{ s: S; action?: Action }> = [{ s: s0 }];
  const setAction = (b: { s: S; action?: Action }, a: Action) => {
    b.action = a;
  };
  while (!c.done()) {
    const t = c.peek()!;
    // statements
    if (t === 'jump' || t === 'goto') {
      c.next();
      const chain = c.next();
      for (const b of branches) setAction(b, { kind: t, chain });
      break;
    }
    if (t === 'accept' || t === 'drop' || t === 'return' || t === 'reject') {
      c.next();
      if (t === 'reject' && c.peek() === 'with') c.i += 3;
      for (const b of branches) setAction(b, { kind: 'verdict', verdict: t });
      break;
    }
    if (t === 'counter') {
      c.next();
      if (c.peek() === 'name') c.i += 2;
      continue;
    }
    if (t === 'masquerade') {
      c.next();
      while (!c.done() && /^(fully-random|random|persistent|to|,)/.test(c.peek()!)) c.next();
      for (const b of branches) {
        b.s.masquerade = true;
        setAction(b, { kind: 'nat', what: 'masquerade' });
      }
      break;
    }
    if (t === 'update' || t === 'add') {
      c.next();
      const set = c.next().replace(/^@/, '');
      // `update @s { ip saddr }` (the canonical form writes a one-element group without braces)
      if (c.peek() === '{') c.group();
      else if (!selector(c, branches[0]!.s, ctx)) throw c.error(`unreadable update of @${set}`);
      ctx.notes.add(`${where}: the client's address is recorded in @${set} (ClientIP affinity)`);
      continue;
    }
    if (t === 'dnat') {
      c.next();
      if (c.peek() === 'ip' || c.peek() === 'ip6') c.next();
      if (c.next() !== 'to') throw c.error('expected dnat … to');
      const targets: Array<{ p: number; addr: string }> = [];
      if (c.peek() === 'numgen') {
        const mod = numgenMod(c);
        if (c.next() !== 'map') throw c.error('expected numgen … map { … }');
        const items = c.group();
        for (const it of items) {
          // [i, ':', IP, '.', PORT]
          if (it.length !== 5 || it[1] !== ':' || it[3] !== '.') throw c.error(`unreadable dnat map item ${it.join(' ')}`);
          targets.push({ p: 1 / mod, addr: `${it[2]}|${it[4]}` });
        }
      } else {
        const x = c.next();
        const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(x) ?? /^([0-9a-fA-F:.]+)$/.exec(x);
        if (!m) throw c.error(`unreadable dnat target ${x}`);
        targets.push({ p: 1, addr: m.length === 4 ? `${m[1] ?? m[2]}|${m[3]}` : `${m[1]}|` });
      }
      const next: typeof branches = [];
      for (const b of branches) {
        for (const tg of targets) {
          const s = targets.length > 1 ? clone(b.s) : b.s;
          const [ip, port] = tg.addr.split('|') as [string, string];
          const parsed = parseIP(ip);
          if (!parsed) throw c.error(`bad dnat address ${ip}`);
          s.dst = parsed.ip;
          if (port !== '') s.dport = Number(port);
          s.dnat = true;
          s.probability *= tg.p;
          if (targets.length > 1) s.steps.push({ table: 'kube-proxy', chain: where.split(' #')[0]!, action: `numgen branch → ${formatIPPort(s.dst, s.dport)}`, probability: `1/${targets.length}` });
          next.push({ s, action: { kind: 'nat', what: 'dnat' } });
        }
      }
      branches = next;
      break;
    }
    if (t === 'numgen') {
      const mod = numgenMod(c);
      if (c.next() !== 'vmap') throw c.error('expected numgen … vmap { … }');
      const items = c.group();
      const next: typeof branches = [];
      for (const b of branches) {
        for (const it of items) {
          if (it[1] !== ':') throw c.error(`unreadable vmap item ${it.join(' ')}`);
          const s = items.length > 1 ? clone(b.s) : b.s;
          s.probability *= 1 / mod;
          next.push({ s, action: verdictOf(it.slice(2), c) });
        }
      }
      branches = next;
      break;
    }
    if (t === 'meta' && c.peek(1) === 'mark' && c.peek(2) === 'set') {
      c.i += 3;
      if (c.next() !== 'meta' || c.next() !== 'mark') throw c.error('expected meta mark set meta mark OP VALUE');
      const op = c.next();
      const m = Number(c.next());
      for (const b of branches) b.s.mark = (op === '|' ? b.s.mark | m : op === '^' ? b.s.mark ^ m : op === '&' ? b.s.mark & m : m) >>> 0;
      continue;
    }
    // matches
    const start = c.i;
    const first = branches[0]!.s;
    const iface = t === 'iifname';
    const vals = selector(c, first, ctx);
    if (!vals) throw c.error(`cannot evaluate ${c.toks.slice(start).join(' ')}`);
    const selectorToks = c.toks.slice(start, c.i);
    const valuesFor = (s: S) => (s === first ? vals : selector(new Cursor(selectorToks, where), s, ctx)!);
    let op = c.peek();
    if (op === 'vmap') {
      c.next();
      const ref = c.peek();
      const next: typeof branches = [];
      if (ref && ref.startsWith('@')) {
        c.next();
        const set = ctx.state.set(ref.slice(1));
        if (!set) throw c.error(`no map ${ref}`);
        for (const b of branches) {
          const el = set.elements.get(keyOf(valuesFor(b.s)));
          if (el) next.push({ s: b.s, action: verdictOf(el.value.split(' '), c) });
        }
      } else {
        const items = c.group();
        for (const b of branches) {
          const v = valuesFor(b.s);
          const hit = items.find((it) => {
            const colon = it.indexOf(':');
            return tupleMatches(it.slice(0, colon), v, false);
          });
          if (hit) next.push({ s: b.s, action: verdictOf(hit.slice(hit.indexOf(':') + 1), c) });
        }
      }
      if (next.length === 0) return { matched: false };
      branches = next;
      break;
    }
    let negate = false;
    if (op === '!=') {
      negate = true;
      c.next();
      op = c.peek();
    } else if (op === '==') {
      c.next();
      op = c.peek();
    }
    let test: (v: Value[], s: S) => boolean;
    if (op === '{') {
      const items = c.group();
      test = (v) => items.some((it) => tupleMatches(it, v, iface));
    } else if (op !== undefined && op.startsWith('@')) {
      c.next();
      const set = ctx.state.set(op.slice(1));
      if (!set) throw c.error(`no set ${op}`);
      if (set.timeout !== undefined || set.flags.includes('timeout')) {
        const note: AffinityNote = { name: set.name, ...(set.timeout !== undefined ? { seconds: set.timeout } : {}), rule: where };
        const target = c.peek() === 'goto' || c.peek() === 'jump' ? c.peek(1) : undefined;
        const endpoint = target ? endpointOfChain(ctx, target) : undefined;
        if (endpoint) note.endpoint = endpoint;
        ctx.affinity.set(set.name, note);
        return { matched: false };
      }
      test = (v) => set.elements.has(keyOf(v));
    } else if (op !== undefined) {
      const words: string[] = [];
      // a literal tuple: w (. w)*
      words.push(c.next());
      while (c.peek() === '.') {
        words.push(c.next(), c.next());
      }
      test = (v) => tupleMatches(words, v, iface);
    } else throw c.error('a selector without a value');
    branches = branches.filter((b) => test(valuesFor(b.s), b.s) !== negate);
    if (branches.length === 0) return { matched: false };
  }
  return { matched: true, outs: branches.map((b) => ({ s: b.s, action: b.action ?? { kind: 'continue' } })) };
}

/** Runs a chain; outcomes with end 'continue' fell off its end (or returned). */
function runChain(ctx: Ctx, name: string, s: S, depth: number): Outcome[] {
  if (depth > MAX_DEPTH) throw traceError(`chain ${name}: deeper than ${MAX_DEPTH} jumps (a loop?)`);
  const chain = ctx.state.chain(name);
  if (!chain) throw traceError(`no chain ${name} in table ${ctx.state.family} ${ctx.state.table}`);
  s.chains.push(name);
  let live: Array<{ s: S; from: number }> = [{ s, from: 0 }];
  const done: Outcome[] = [];
  while (live.length > 0) {
    const { s: cur, from } = live.pop()!;
    let i = from;
    let finished = false;
    for (; i < chain.rules.length && !finished; i++) {
      const rule = chain.rules[i]!;
      const where = `${name} #${i + 1}`;
      const r = evalRule(ctx, rule, where, cur);
      if (!r.matched) continue;
      finished = true;
      for (const { s: b, action } of r.outs) {
        if (++ctx.branches > MAX_BRANCHES) throw traceError(`more than ${MAX_BRANCHES} branches`);
        const step: TraceStep = { table: 'kube-proxy', chain: name, rule: { index: i + 1, line: 0, spec: rule.text, ...(rule.comment !== undefined ? { comment: rule.comment } : {}) }, action: describe(action, b) };
        b.steps.push(step);
        switch (action.kind) {
          case 'continue':
            live.push({ s: b, from: i + 1 });
            break;
          case 'nat':
            b.verdictBy = where;
            done.push({ s: b, end: 'accept' });
            break;
          case 'verdict':
            if (action.verdict === 'return') done.push({ s: b, end: 'continue' });
            else {
              b.verdictBy = where;
              done.push({ s: b, end: action.verdict });
            }
            break;
          case 'jump':
            for (const o of runChain(ctx, action.chain, b, depth + 1)) {
              if (o.end === 'continue') live.push({ s: o.s, from: i + 1 });
              else done.push(o);
            }
            break;
          case 'goto':
            done.push(...runChain(ctx, action.chain, b, depth + 1));
            break;
        }
      }
    }
    if (!finished) done.push({ s: cur, end: 'continue' });
  }
  return done;
}

function describe(a: Action, s: S): string {
  switch (a.kind) {
    case 'continue':
      return 'continue';
    case 'nat':
      return a.what === 'dnat' ? `DNAT to ${formatIPPort(s.dst, s.dport)}` : 'masquerade';
    case 'verdict':
      return a.verdict;
    default:
      return `${a.kind} ${a.chain}`;
  }
}

/** The base chains of one hook, by priority. */
function baseChains(state: NftTableView, hook: string): string[] {
  return state
    .baseChains()
    .filter((c) => c.base?.hook === hook)
    .sort((a, b) => a.base!.priority - b.base!.priority || (a.name < b.name ? -1 : 1))
    .map((c) => c.name);
}

/** `table`: a state read whole, or a view that reads only the chains and sets the packet reaches (lang/nftables/lazy-read.ts). */
export function traceNftState(table: NftState | NftTableView, packet: PacketSpec, node: NodeSpec): TraceResult {
  const state = 'chain' in table ? table : viewOfState(table);
  if (!state.exists) throw traceError(`the rules hold no table ${state.family} ${state.table}`);
  const { src, dst, protocol, origin, nodeIPs, notes } = startPacket(packet, node);
  const ctx: Ctx = { state, nodeIPs, notes: new Set(notes), affinity: new Map(), branches: 0 };
  const initial: S = {
    src,
    dst,
    dport: packet.port,
    proto: protocol,
    ...(origin === 'network' && packet.inInterface !== undefined ? { inIface: packet.inInterface } : {}),
    mark: 0,
    dnat: false,
    masquerade: false,
    probability: 1,
    steps: [],
    chains: [],
  };
  const finished: TraceBranch[] = [];
  const finish = (s: S, verdict: Verdict) =>
    finished.push({ probability: s.probability, verdict, verdictBy: s.verdictBy ?? 'no rule', destination: formatIPPort(s.dst, s.dport), dnat: s.dnat, masquerade: s.masquerade, steps: s.steps, chains: s.chains });
  const hook = (name: string, states: S[]): S[] => {
    let live = states;
    for (const chain of baseChains(state, name)) {
      const next: S[] = [];
      for (const s of live) {
        for (const o of runChain(ctx, chain, s, 0)) {
          if (o.end === 'drop') finish(o.s, 'DROP');
          else if (o.end === 'reject') finish(o.s, 'REJECT');
          else next.push(o.s);
        }
      }
      live = next;
    }
    return live;
  };
  if (origin === 'network') {
    for (const s of hook('prerouting', [initial])) {
      if (isLocal(ctx, s.dst)) for (const t of hook('input', [s])) finish(t, 'ACCEPT');
      else for (const t of hook('postrouting', hook('forward', [s]))) finish(t, 'ACCEPT');
    }
  } else {
    for (const s of hook('postrouting', hook('output', [initial]))) {
      if (isLocal(ctx, s.dst)) {
        s.inIface = 'lo';
        for (const t of hook('input', [s])) finish(t, 'ACCEPT');
      } else finish(s, 'ACCEPT');
    }
  }
  return summarize(ctx, finished, { source: formatIP(src), destination: formatIP(dst), port: packet.port, protocol, origin });
}

function summarize(ctx: Ctx, branches: TraceBranch[], packet: TraceResult['packet']): TraceResult {
  return summarizeBranches(branches, packet, ctx.affinity.values(), [...ctx.notes]);
}

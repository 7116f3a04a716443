/**
 * nftables on a real kernel, for tests: load a text with `nft -f` into a throwaway network
 * namespace, read `nft list table` back, and compare rulesets the way nft itself sees them.
 *
 * The texts are knftables' form (kube-proxy's transactions and the fake's Dump(), one command a
 * line: `add table ip kube-proxy { comment "…" ; }`, `add chain …`, `add rule …`,
 * `add element … { K : V }`). Three tools:
 *
 *  - toLoadOrder(dump): the same lines in an order nft can load. kube-proxy's unit tests write
 *    their expectations grouped per Service, where a rule may `goto` a chain (or a map element
 *    name a chain) declared further down; nft resolves names command by command, so such a
 *    text fails with ENOENT. Dump() order (table, chains, sets, maps, counters, then rules,
 *    then elements) always loads. This is a stable partition by object kind: rules keep their
 *    order within a chain, so sortNFTablesTransaction() of the result is unchanged.
 *  - sortNFTablesTransaction(text): kube-proxy's own normal form for comparing two texts
 *    (pkg/proxy/nftables/helpers_test.go, identical in v1.34–v1.37): what the upstream tests
 *    compare. Use it to compare kpc's output with an expected.dump textually.
 *  - loadAndList / compareByKernel / readBack: the kernel's view. nft rewrites what it prints
 *    (`mark set mark or 0x4000` → `meta mark set meta mark | 0x00004000`, `ip daddr { CIDR }` →
 *    `ip daddr CIDR`, `timeout 10800s` → `3h`, priorities → names, a `size 65535` added to
 *    dynamic sets, elements in the kernel's order), so a knftables text is never compared with
 *    a listing character by character. Instead:
 *      * compareByKernel(a, b) loads each text into its own namespace and compares the two
 *        canonical listings (canonicalListing: nft's own text, objects sorted by kind and
 *        name, set/map elements sorted; rules keep their order). Equal means the kernel holds
 *        the same ruleset, after nft's normalisation, whatever the text order was.
 *      * readBack(dump, listing) checks a listing against what the dump declares, object by
 *        object: the table comment; every chain (hook, type, priority, comment, number of
 *        rules and each rule's comment, in order); every set and map (key type, flags,
 *        timeout, comment, and every element's key, comment and verdict); every counter.
 *        Only the rule bodies are left to compareByKernel, because nft rewrites them.
 *        nft's own additions are not differences: `size 65535` on dynamic sets, and the
 *        `dynamic` flag, which nft sets itself on a set that a rule updates (`update @set`),
 *        so `flags timeout` and `flags dynamic,timeout` read back alike there.
 *
 * Namespaces come from test/netns/lab.ts (named kpc-<prefix>-<pid>-<n>, always deleted).
 */

import { nsExec, withNetns, type ExecResult } from '../netns/lab.js';
// The oracle runner's splitter (commas outside quotes and braces). src/lang/nftables/read.ts has
// its own, kept apart on purpose: the kernel comparisons never normalise a listing with the reader
// they are checking.
import { splitTopLevel } from '../oracle/runner/nft.js';

export type NftFamily = 'ip' | 'ip6';

// ---------------------------------------------------------------------------------------------
// Text forms
// ---------------------------------------------------------------------------------------------

/** The non-empty, non-comment lines of a knftables text (as sortNFTablesTransaction keeps). */
export function commandLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#')).map((l) => l.trim());
}

const OBJECT_ORDER: Record<string, number> = { table: 10, chain: 9, rule: 8, set: 7, map: 6, element: 5 };

/**
 * Port of kube-proxy's sortNFTablesTransaction (helpers_test.go): drop blank and `#` lines, then
 * a stable sort by object type (table, chain, rule, set, map, element, anything else), then by
 * object name (5th word), then by the whole line — except rules, which keep their order.
 * (Upstream does not trim lines; a line with only spaces would be kept there. Such lines only
 * appear at the end of some test literals and are dropped here, as they carry nothing.)
 */
export function sortNFTablesTransaction(text: string): string {
  const lines = commandLines(text).map((l, i) => ({ l, w: l.split(' '), i }));
  lines.sort((a, b) => {
    if (a.w.length < 5 || b.w.length < 5) return a.i - b.i;
    if (a.w[1] !== b.w[1]) return (OBJECT_ORDER[b.w[1]!] ?? 0) - (OBJECT_ORDER[a.w[1]!] ?? 0) || a.i - b.i;
    if (a.w[4] !== b.w[4]) return a.w[4]! < b.w[4]! ? -1 : 1;
    if (a.w[1] === 'rule') return a.i - b.i;
    return a.l < b.l ? -1 : a.l > b.l ? 1 : a.i - b.i;
  });
  return lines.map((x) => x.l).join('\n');
}

const LOAD_RANK: Record<string, number> = { table: 0, flowtable: 1, chain: 2, set: 3, map: 4, counter: 5, rule: 6, element: 7 };

/**
 * The lines of `text` reordered so that nft can load them: adds of tables, chains, sets, maps
 * and counters first, then rules, then elements (knftables Fake.Dump()'s order), each group in
 * its original order. Only for texts of `add` commands (a dump); a transaction with flush/delete
 * must be loaded as it is.
 */
export function toLoadOrder(text: string): string {
  const lines = commandLines(text).map((l, i) => {
    const [verb, kind] = l.split(' ');
    if (verb !== 'add') throw new Error(`toLoadOrder: not a dump (verb ${verb}): ${l}`);
    const rank = LOAD_RANK[kind ?? ''];
    if (rank === undefined) throw new Error(`toLoadOrder: unknown object ${kind}: ${l}`);
    return { l, rank, i };
  });
  lines.sort((a, b) => a.rank - b.rank || a.i - b.i);
  return lines.map((x) => x.l).join('\n') + '\n';
}

/** The family of the table a knftables text declares (`add table ip6 kube-proxy …` → ip6). */
export function dumpFamily(text: string): NftFamily {
  for (const l of commandLines(text)) {
    const w = l.split(' ');
    if (w[1] === 'table' || w[1] === 'chain' || w[1] === 'rule') {
      if (w[2] === 'ip' || w[2] === 'ip6') return w[2];
      throw new Error(`unsupported family ${w[2]}`);
    }
  }
  throw new Error('no table, chain or rule in the text');
}

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------

/** `nft -f -` of `text` inside `ns`. */
export function nftLoad(ns: string, text: string): Promise<ExecResult> {
  return nsExec(ns, ['nft', '-f', '-'], { input: text, timeoutMs: 60_000 });
}

/** `nft list table FAMILY NAME` inside `ns` (text). */
export function nftListTable(ns: string, family: NftFamily, table = 'kube-proxy'): Promise<ExecResult> {
  return nsExec(ns, ['nft', 'list', 'table', family, table], { timeoutMs: 60_000 });
}

/** `nft -j list table FAMILY NAME` inside `ns`. */
export function nftListTableJSON(ns: string, family: NftFamily, table = 'kube-proxy'): Promise<ExecResult> {
  return nsExec(ns, ['nft', '-j', 'list', 'table', family, table], { timeoutMs: 60_000 });
}

export interface LoadResult {
  /** `nft -f` of each text, in order. */
  loads: ExecResult[];
  /** True when every load exited 0. */
  ok: boolean;
  /** `nft list table` (empty when a load failed or the table is missing). */
  listing: string;
  /** `nft -j list table`, parsed. */
  json?: NftJson;
}

/**
 * In a fresh namespace: `nft -f` each text in turn (stop at the first failure), then list the
 * table (text and JSON). The namespace is deleted afterwards.
 */
export async function loadAndList(texts: string | string[], family: NftFamily, table = 'kube-proxy'): Promise<LoadResult> {
  const all = Array.isArray(texts) ? texts : [texts];
  return withNetns('nft', async (ns) => {
    const loads: ExecResult[] = [];
    for (const t of all) {
      const r = await nftLoad(ns, t);
      loads.push(r);
      if (r.code !== 0) return { loads, ok: false, listing: '' };
    }
    const list = await nftListTable(ns, family, table);
    const json = await nftListTableJSON(ns, family, table);
    return {
      loads,
      ok: list.code === 0,
      listing: list.code === 0 ? list.stdout : '',
      ...(json.code === 0 ? { json: JSON.parse(json.stdout) as NftJson } : {}),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Canonical listing (nft's text, ordered so that two loads of the same ruleset compare equal)
// ---------------------------------------------------------------------------------------------

interface ListingBlock {
  kind: string;
  name: string;
  lines: string[];
}

/** Parses `nft list table` text into its top-level blocks (plus the table's own lines). */
function listingBlocks(listing: string): { head: string[]; blocks: ListingBlock[] } {
  const lines = listing.split('\n');
  const head: string[] = [];
  const blocks: ListingBlock[] = [];
  let cur: ListingBlock | undefined;
  let depth = 0;
  for (const raw of lines) {
    const l = raw.trim();
    if (l === '') continue;
    if (depth === 0) {
      if (/^table \S+ \S+ \{$/.test(l)) {
        head.push(l);
        depth = 1;
      }
      continue;
    }
    if (depth === 1) {
      const m = /^(chain|set|map|counter|flowtable|quota|ct \S+|limit) (\S+) \{$/.exec(l);
      if (m) {
        cur = { kind: m[1]!, name: m[2]!, lines: [] };
        depth = 2;
      } else if (l === '}') depth = 0;
      else head.push(l);
      continue;
    }
    // inside a block: track nesting of the block itself
    if (l === '}' && depth === 2) {
      blocks.push(cur!);
      cur = undefined;
      depth = 1;
      continue;
    }
    cur!.lines.push(l);
  }
  return { head, blocks };
}

const KIND_ORDER: Record<string, number> = { counter: 0, set: 1, map: 2, chain: 3 };

/**
 * nft's listing with the order it depends on taken out: blocks sorted by kind then name, and
 * within a set or map the `elements = { … }` folded onto one line and sorted. Rules (chain
 * lines) keep their order: it is semantic.
 */
export function canonicalListing(listing: string): string {
  const { head, blocks } = listingBlocks(listing);
  const out = [...head];
  blocks.sort((a, b) => (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const b of blocks) {
    out.push(`${b.kind} ${b.name} {`);
    const at = b.lines.findIndex((l) => l.startsWith('elements = {'));
    if (at >= 0) {
      let text = b.lines.slice(at).join(' ');
      text = text.replace(/^elements = \{\s*/, '').replace(/\s*\}$/, '');
      const elems = splitTopLevel(text).sort();
      out.push(...b.lines.slice(0, at).map((l) => `  ${l}`));
      out.push(...elems.map((e) => `  element ${e}`));
    } else {
      out.push(...b.lines.map((l) => `  ${l}`));
    }
    out.push('}');
  }
  return out.join('\n') + '\n';
}

export interface KernelComparison {
  equal: boolean;
  a: LoadResult;
  b: LoadResult;
  canonicalA: string;
  canonicalB: string;
}

/**
 * Loads `a` and `b` (each a text or a list of texts loaded in turn) into two fresh namespaces
 * and compares their canonical listings. A text that is a dump in the tests' order should be
 * passed through toLoadOrder() first.
 */
export async function compareByKernel(a: string | string[], b: string | string[], family: NftFamily): Promise<KernelComparison> {
  const la = await loadAndList(a, family);
  const lb = await loadAndList(b, family);
  const canonicalA = la.ok ? canonicalListing(la.listing) : '';
  const canonicalB = lb.ok ? canonicalListing(lb.listing) : '';
  return { equal: la.ok && lb.ok && canonicalA === canonicalB, a: la, b: lb, canonicalA, canonicalB };
}

// ---------------------------------------------------------------------------------------------
// Read-back: a listing against what a dump declares
// ---------------------------------------------------------------------------------------------

/** A set or map a knftables dump declares (for a map, `type` is `K : verdict`). */
export interface DeclaredSet {
  map: boolean;
  type: string;
  flags: string[];
  timeout?: number;
  comment?: string;
  elements: { key: string[]; comment?: string; value?: string }[];
}

/** The objects a knftables dump declares. */
export interface DeclaredRuleset {
  family: NftFamily;
  table: string;
  tableComment?: string;
  chains: Map<string, { type?: string; hook?: string; priority?: number; comment?: string; rules: { text: string; comment?: string }[] }>;
  sets: Map<string, DeclaredSet>;
  counters: Set<string>;
}

const Q = String.raw`"((?:[^"\\]|\\.)*)"`;

/** Parses the `add` lines of a knftables dump (knftables objects.go text forms). */
export function parseDump(text: string): DeclaredRuleset {
  const rs: DeclaredRuleset = { family: dumpFamily(text), table: '', chains: new Map(), sets: new Map(), counters: new Set() };
  const chain = (name: string) => {
    if (!rs.chains.has(name)) rs.chains.set(name, { rules: [] });
    return rs.chains.get(name)!;
  };
  for (const l of commandLines(text)) {
    const w = l.split(' ');
    if (w[0] !== 'add') throw new Error(`parseDump: not an add: ${l}`);
    const kind = w[1];
    const name = w[4] ?? '';
    const rest = w.slice(5).join(' ');
    if (kind === 'table') {
      rs.table = w[3]!;
      const m = new RegExp(`comment ${Q}`).exec(l);
      if (m) rs.tableComment = JSON.parse(`"${m[1]}"`);
    } else if (kind === 'chain') {
      const c = chain(name);
      const m = /\{ type (\S+) hook (\S+) priority (-?\d+) ; \}/.exec(rest);
      if (m) Object.assign(c, { type: m[1], hook: m[2], priority: Number(m[3]) });
      const cm = new RegExp(`comment ${Q} ; \\}`).exec(rest);
      if (cm) c.comment = JSON.parse(`"${cm[1]}"`);
    } else if (kind === 'rule') {
      const cm = new RegExp(` comment ${Q}$`).exec(rest);
      chain(name).rules.push({ text: cm ? rest.slice(0, cm.index) : rest, ...(cm ? { comment: JSON.parse(`"${cm[1]}"`) } : {}) });
    } else if (kind === 'set' || kind === 'map') {
      const body = /\{ (.*) \}$/.exec(rest)?.[1] ?? '';
      const fields = splitTopLevel(body, ';').map((f) => f.trim()).filter(Boolean);
      const s: DeclaredSet = { map: kind === 'map', type: '', flags: [], elements: [] };
      for (const f of fields) {
        if (f.startsWith('type ')) s.type = f.slice(5);
        else if (f.startsWith('flags ')) s.flags = f.slice(6).split(',');
        else if (f.startsWith('timeout ')) s.timeout = Number(f.slice(8).replace(/s$/, ''));
        else if (f.startsWith('comment ')) s.comment = JSON.parse(f.slice(8));
      }
      const prev = rs.sets.get(name);
      rs.sets.set(name, { ...s, elements: prev?.elements ?? [] });
    } else if (kind === 'element') {
      const body = /\{ (.*) \}$/.exec(rest)?.[1];
      if (body === undefined) throw new Error(`parseDump: element without { }: ${l}`);
      const m = new RegExp(`^(.*?)(?: comment ${Q})?(?: : (.*))?$`).exec(body)!;
      const el = { key: m[1]!.split(' . '), ...(m[2] !== undefined ? { comment: JSON.parse(`"${m[2]}"`) } : {}), ...(m[3] !== undefined ? { value: m[3] } : {}) };
      if (!rs.sets.has(name)) rs.sets.set(name, { map: el.value !== undefined, type: '', flags: [], elements: [] });
      rs.sets.get(name)!.elements.push(el);
    } else if (kind === 'counter') {
      rs.counters.add(name);
    } else {
      throw new Error(`parseDump: unsupported object ${kind}: ${l}`);
    }
  }
  return rs;
}

/** `nft -j` output (the parts used here). */
export interface NftJson {
  nftables: Record<string, Record<string, unknown>>[];
}

type JsonVal = string | number | null | { [k: string]: unknown } | JsonVal[];

/** nft JSON element key/value → knftables text (`10.0.0.1 . tcp . 80`, `goto CHAIN`, `drop`). */
function jsonKey(v: JsonVal): string[] {
  if (typeof v === 'string' || typeof v === 'number') return [String(v)];
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    if ('concat' in v) return (v.concat as JsonVal[]).flatMap(jsonKey);
    if ('prefix' in v) {
      const p = v.prefix as { addr: string; len: number };
      return [`${p.addr}/${p.len}`];
    }
    if ('range' in v) return [(v.range as JsonVal[]).map((x) => jsonKey(x).join(' . ')).join('-')];
  }
  throw new Error(`unsupported nft JSON key ${JSON.stringify(v)}`);
}
function jsonVerdict(v: JsonVal): string {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const [k, x] = Object.entries(v)[0]!;
    if (k === 'goto' || k === 'jump') return `${k} ${(x as { target: string }).target}`;
    if (x === null) return k;
  }
  throw new Error(`unsupported nft JSON verdict ${JSON.stringify(v)}`);
}

/** Protocol numbers as nft may print them in keys of type inet_proto. */
const PROTO_NAMES: Record<string, string> = { '6': 'tcp', '17': 'udp', '132': 'sctp' };

/**
 * Compares a listing (text + JSON of `nft list table`) with what `dump` declares. Returns the
 * differences (empty when the kernel holds exactly the declared objects). Rule bodies are only
 * counted here (nft rewrites them); compareByKernel compares them between two loads.
 */
export function readBack(dump: string, listing: string, json: NftJson): string[] {
  const want = parseDump(dump);
  const diffs: string[] = [];
  const { head, blocks } = listingBlocks(listing);
  const blockOf = new Map(blocks.map((b) => [`${b.kind === 'map' ? 'set' : b.kind} ${b.name}`, b]));

  // table comment (the JSON of nft 1.0.6 has no table or chain comments: take them from the text)
  const tc = head.find((l) => l.startsWith('comment '));
  const gotTableComment = tc ? JSON.parse(tc.slice(8)) : undefined;
  if (gotTableComment !== want.tableComment) diffs.push(`table comment: want ${JSON.stringify(want.tableComment)}, got ${JSON.stringify(gotTableComment)}`);

  const objs = json.nftables;
  const jChains = new Map<string, Record<string, unknown>>();
  const jRules = new Map<string, Record<string, unknown>[]>();
  const jSets = new Map<string, Record<string, unknown>>();
  const jCounters = new Set<string>();
  for (const o of objs) {
    if (o.chain) jChains.set(o.chain.name as string, o.chain);
    if (o.rule) {
      const c = o.rule.chain as string;
      if (!jRules.has(c)) jRules.set(c, []);
      jRules.get(c)!.push(o.rule);
    }
    if (o.set) jSets.set(o.set.name as string, { ...o.set, isMap: false });
    if (o.map) jSets.set(o.map.name as string, { ...o.map, isMap: true });
    if (o.counter) jCounters.add(o.counter.name as string);
  }

  // chains
  const wantChains = [...want.chains.keys()].sort();
  const gotChains = [...jChains.keys()].sort();
  if (wantChains.join('\n') !== gotChains.join('\n')) {
    diffs.push(`chains: missing ${wantChains.filter((c) => !jChains.has(c)).join(', ') || '-'}; unexpected ${gotChains.filter((c) => !want.chains.has(c)).join(', ') || '-'}`);
  }
  for (const [name, c] of want.chains) {
    const j = jChains.get(name);
    if (!j) continue;
    if ((j.type ?? undefined) !== c.type || (j.hook ?? undefined) !== c.hook || (j.prio ?? undefined) !== c.priority) {
      diffs.push(`chain ${name}: want type/hook/prio ${c.type}/${c.hook}/${c.priority}, got ${j.type}/${j.hook}/${j.prio}`);
    }
    const block = blockOf.get(`chain ${name}`);
    const cl = block?.lines.find((l) => l.startsWith('comment '));
    const gotComment = cl ? JSON.parse(cl.slice(8)) : undefined;
    if (gotComment !== c.comment) diffs.push(`chain ${name}: comment want ${JSON.stringify(c.comment)}, got ${JSON.stringify(gotComment)}`);
    const rules = jRules.get(name) ?? [];
    if (rules.length !== c.rules.length) diffs.push(`chain ${name}: ${c.rules.length} rules declared, ${rules.length} listed`);
    else {
      c.rules.forEach((r, i) => {
        const got = rules[i]!.comment as string | undefined;
        if (got !== r.comment) diffs.push(`chain ${name} rule ${i + 1}: comment want ${JSON.stringify(r.comment)}, got ${JSON.stringify(got)}`);
      });
    }
  }

  // sets and maps
  const wantSets = [...want.sets.keys()].sort();
  const gotSets = [...jSets.keys()].sort();
  if (wantSets.join('\n') !== gotSets.join('\n')) {
    diffs.push(`sets/maps: missing ${wantSets.filter((s) => !jSets.has(s)).join(', ') || '-'}; unexpected ${gotSets.filter((s) => !want.sets.has(s)).join(', ') || '-'}`);
  }
  for (const [name, s] of want.sets) {
    const j = jSets.get(name);
    if (!j) continue;
    const jType = Array.isArray(j.type) ? (j.type as string[]).join(' . ') : String(j.type);
    const wantType = s.map ? s.type.replace(/ : verdict$/, '') : s.type;
    if (jType !== wantType || (j.isMap as boolean) !== s.map || (s.map && j.map !== 'verdict')) {
      diffs.push(`${s.map ? 'map' : 'set'} ${name}: type want ${s.type}, got ${jType}${j.isMap ? ` : ${j.map}` : ''}`);
    }
    if ((j.comment as string | undefined) !== s.comment) diffs.push(`set ${name}: comment want ${JSON.stringify(s.comment)}, got ${JSON.stringify(j.comment)}`);
    if ((j.timeout as number | undefined) !== s.timeout) diffs.push(`set ${name}: timeout want ${s.timeout}, got ${j.timeout}`);
    // flags: from the text (nft 1.0.6's JSON leaves out `dynamic`)
    const fl = blockOf.get(`set ${name}`)?.lines.find((l) => l.startsWith('flags '));
    const gotFlags = fl ? fl.slice(6).split(',').sort() : [];
    if (gotFlags.join(',') !== [...s.flags].sort().join(',')) diffs.push(`set ${name}: flags want ${s.flags.join(',') || '-'}, got ${gotFlags.join(',') || '-'}`);
    const gotElems = ((j.elem as JsonVal[] | undefined) ?? []).map((e) => {
      let key: JsonVal = e;
      let value: string | undefined;
      if (s.map) {
        const pair = e as JsonVal[];
        key = pair[0]!;
        value = jsonVerdict(pair[1]!);
      }
      let comment: string | undefined;
      if (key && typeof key === 'object' && !Array.isArray(key) && 'elem' in key) {
        const el = key.elem as { val: JsonVal; comment?: string };
        comment = el.comment;
        key = el.val;
      }
      return fmtElem(jsonKey(key).map((k) => PROTO_NAMES[k] ?? k), comment, value);
    });
    const wantElems = s.elements.map((e) => fmtElem(e.key, e.comment, e.value));
    const a = [...wantElems].sort();
    const b = [...gotElems].sort();
    if (a.join('\n') !== b.join('\n')) {
      const missing = a.filter((x) => !b.includes(x));
      const extra = b.filter((x) => !a.includes(x));
      diffs.push(`set ${name}: elements missing [${missing.join('; ')}], unexpected [${extra.join('; ')}]`);
    }
  }

  // counters
  const wc = [...want.counters].sort().join(',');
  const gc = [...jCounters].sort().join(',');
  if (wc !== gc) diffs.push(`counters: want ${wc || '-'}, got ${gc || '-'}`);
  return diffs;
}

function fmtElem(key: string[], comment?: string, value?: string): string {
  return `${key.join(' . ')}${comment !== undefined ? ` comment ${JSON.stringify(comment)}` : ''}${value !== undefined ? ` : ${value}` : ''}`;
}

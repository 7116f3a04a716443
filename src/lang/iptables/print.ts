/**
 * Print a ruleset as iptables-restore input in kpc's canonical order: the normal form of
 * kube-proxy's own test normaliser (pkg/proxy/iptables/proxier_test.go sortIPTablesRules
 * with pkg/util/iptables/testing/parse.go), so kpc's output can be compared byte for byte
 * with the expected strings of kube-proxy's unit tests:
 *
 *   tables by name (filter, nat); chains KUBE-NODEPORTS, KUBE-SERVICES, then other KUBE-*
 *   chains by name, then the rest by name; all chain lines first, then the rules chain by
 *   chain; COMMIT.
 *
 * kube-proxy's raw output differs only in order between chains (and between services inside
 * the top-level chains, which it visits in Go map order); the rules of any one chain are in
 * the same order, so iptables ends up in the same state.
 */

import { duplicateChain, type ChainRules, type Ruleset, type Table } from './ruleset.js';
import { BUILTIN_CHAIN_NAMES, KUBE_NODEPORTS, KUBE_SERVICES } from './chains.js';
import { chainName } from './safe-text.js';
import { NameKeys } from './chain-sort.js';

/** The order of the buckets chains are sorted in (see the file comment). */
export function chainRank(name: string): number {
  if (name === KUBE_NODEPORTS) return 0;
  if (name === KUBE_SERVICES) return 1;
  if (name.startsWith('KUBE-')) return 2;
  return 3;
}

/**
 * A table's chains as the printer reads them: gathered in one pass in declaration order,
 * then put in canonical order as positions into these arrays.
 *
 * Why gather first: the chain objects and their names are scattered over the heap, and a
 * quarter of a million of them read in name order (hash order, for per-service chains) miss
 * the CPU caches every time (~100 ms a pass at 20,000 Services on a 2-core machine, against a
 * few in declaration order, which is allocation order). So sorting and the chain lines read
 * the gathered arrays; only the copying of the text itself goes in name order.
 */
export interface Gathered {
  table: Table;
  chains: readonly ChainRules[];
  keys: NameKeys;
  /** Positions in canonical order: bucketed by rank, each bucket sorted by name. */
  order: number[][];
  /** The first range of each chain's rules (see ChainRules), whether more follow, and the total length. */
  blocks: Array<ChainRules['block']>;
  starts: Int32Array;
  ends: Int32Array;
  hasMore: Uint8Array;
  bytes: Float64Array;
  /** The chain lines (chainLines), made once for whoever asks first. */
  lines?: string;
}

/**
 * A table's chains in the order they are printed (see Gathered), for a reader that walks a
 * printed text alongside (diff/iptables/aligned.ts) and then prints the same table
 * (renderGathered) without gathering it twice. The table must not change after this.
 */
export function gather(table: Table): Gathered {
  const chains = table.allChains();
  const n = chains.length;
  const names = new Array<string>(n);
  const buckets: number[][] = [[], [], [], []];
  const blocks = new Array<ChainRules['block']>(n);
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  const hasMore = new Uint8Array(n);
  const bytes = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const rules = chains[i]!;
    // Every name goes through the chainName guard (the sort relies on it: `[A-Z0-9-]`, ≤ 28).
    const name = chainName(rules.name);
    names[i] = name;
    buckets[chainRank(name)]!.push(i);
    blocks[i] = rules.block;
    starts[i] = rules.start;
    ends[i] = rules.end;
    hasMore[i] = rules.more === undefined ? 0 : 1;
    bytes[i] = rules.bytes;
  }
  const keys = new NameKeys(names);
  // Rank 2 is the KUBE-* chains: they share their first five characters, the first round.
  const order = buckets.map((bucket, rank) => keys.sort(bucket, rank === 2 ? 1 : 0));
  // Chains declared without a lookup (Table.declareNew) are checked here: the sort sees equal names.
  if (keys.duplicate !== undefined) throw duplicateChain(table.name, keys.duplicate);
  return { table, chains, keys, order, blocks, starts, ends, hasMore, bytes };
}

/**
 * The chain named `name` in a gathered table, or undefined: a binary search of its rank's
 * bucket, which is in name order (`<` on strings, as NameKeys sorts), so a few lookups cost
 * no map of every name.
 */
export function gatheredChain(g: Gathered, name: string): ChainRules | undefined {
  const bucket = g.order[chainRank(name)]!;
  let low = 0;
  let high = bucket.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const there = g.keys.names[bucket[mid]!]!;
    if (there === name) return g.chains[bucket[mid]!];
    if (there < name) low = mid + 1;
    else high = mid;
  }
  return undefined;
}

const CHAIN_LINE_END = Buffer.from(' - [0:0]\n', 'latin1');
const BUILTIN_LINE_END = Buffer.from(' ACCEPT [0:0]\n', 'latin1');

/**
 * The `:CHAIN POLICY [0:0]` lines of the chains in canonical order, as one string. Written
 * byte by byte from the names' packed characters (NameKeys.writeName), which lie together,
 * rather than from the name strings, which lie all over the heap.
 */
export function chainLines(g: Gathered): string {
  if (g.lines !== undefined) return g.lines;
  let size = 0;
  for (const bucket of g.order) for (const i of bucket) size += 1 + g.keys.nameLength(i) + BUILTIN_LINE_END.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const [rank, bucket] of g.order.entries()) {
    for (const i of bucket) {
      out[at++] = 0x3a; // ':'
      at = g.keys.writeName(i, out, at);
      // Built-in chains (only among the rank-3 names: the others start with KUBE-) keep policy ACCEPT.
      const end = rank === 3 && BUILTIN_CHAIN_NAMES.has(g.keys.names[i]!) ? BUILTIN_LINE_END : CHAIN_LINE_END;
      out.set(end, at);
      at += end.length;
    }
  }
  return (g.lines = out.toString('latin1', 0, at));
}

/** Rule text is joined into output chunks of about this many characters. */
const CHUNK_CHARS = 1 << 20;

/**
 * One table's text as chunks of about a megabyte, in order. Strings, not one Buffer: a
 * 77 MB Buffer is external memory to V8, and allocating it set off a full garbage collection
 * of the whole heap; megabyte strings are written (and freed) one at a time. Rules are
 * ASCII (safe-text.ts), so any encoding writes the same bytes.
 */
function* renderTable(g: Gathered): Generator<string> {
  yield `*${g.table.name}\n${chainLines(g)}`;
  // Each chain's text is a slice of a block; joining a megabyte of slices at a time copies
  // inside the engine, without a call per chain or one giant string.
  let pieces: string[] = [];
  let length = 0;
  for (const bucket of g.order) {
    for (const i of bucket) {
      const block = g.blocks[i];
      if (block === undefined) continue;
      pieces.push(block.text.substring(g.starts[i]!, g.ends[i]!));
      // Chains written in several runs (the top-level ones, a few): the rest of their text.
      if (g.hasMore[i] === 1) g.chains[i]!.collectMoreTexts(pieces);
      length += g.bytes[i]!;
      if (length >= CHUNK_CHARS) {
        yield pieces.join('');
        pieces = [];
        length = 0;
      }
    }
  }
  if (pieces.length > 0) yield pieces.join('');
  yield 'COMMIT\n';
}

/**
 * The restore input as text chunks (filter, then nat), made as they are asked for: a writer
 * that takes them in turn never holds more than one (at 100,000 Services the text is 386 MB).
 * A chunk may throw an internal error (a duplicate chain), so a writer must not have
 * published the earlier ones yet: a file is written atomically; stdout gets Array.from.
 */
export function* renderRuleset(rs: Ruleset): Generator<string> {
  yield* renderTable(gather(rs.filter));
  yield* renderTable(gather(rs.nat));
}

/** The two tables of a ruleset, gathered (see gather). */
export interface GatheredRuleset {
  filter: Gathered;
  nat: Gathered;
}

export function gatherRuleset(rs: Ruleset): GatheredRuleset {
  return { filter: gather(rs.filter), nat: gather(rs.nat) };
}

/** renderRuleset of a gathered ruleset. */
export function* renderGathered(g: GatheredRuleset): Generator<string> {
  yield* renderTable(g.filter);
  yield* renderTable(g.nat);
}

/** A rule's jump or goto target (`-j NAME`, `--jump NAME`, `-g NAME`, `--goto NAME`); false alarms are harmless. */
const TARGET = /(?:^| )(?:-j|--jump|-g|--goto) (\S+)/gm;

/**
 * The restore input as one string with only some chains: the chains declared by name (the
 * shared ones) and those in `kept`, with their rules, and the declarations of the chains their
 * rules jump to. Every other line is blank, so the text has the same lines at the same line
 * numbers as the whole output, and a kept chain has the same rules at the same indices: what
 * kpc trace and kpc explain read of it is what they would read of the whole text (a rule's
 * jump target is declared, as there), without reading a million rules they never follow. Only
 * blank lines differ, which readers skip.
 */
export function renderFocusedText(rs: Ruleset, kept: ReadonlySet<ChainRules>): string {
  const out: string[] = [];
  for (const table of [rs.filter, rs.nat]) {
    // The name guard, the uniqueness check and the canonical order are printing's (gather).
    const g = gather(table);
    const n = g.chains.length;
    // What is shown, read in declaration order (allocation order: see Gathered); the walks in
    // canonical order below then touch only these arrays and the few shown chains.
    const shown = new Uint8Array(n);
    const targets = new Set<string>();
    const pieces: string[] = [];
    for (let i = 0; i < n; i++) {
      const chain = g.chains[i]!;
      if (!kept.has(chain) && !table.isNamed(chain)) continue;
      shown[i] = 1;
      pieces.length = 0;
      chain.collectTexts(pieces);
      for (const piece of pieces) for (const m of piece.matchAll(TARGET)) targets.add(m[1]!);
    }
    const lined = new Uint8Array(n);
    const counts = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      lined[i] = shown[i] === 1 || targets.has(g.keys.names[i]!) ? 1 : 0;
      counts[i] = g.chains[i]!.count;
    }
    // The chain lines: as chainLines writes them, blank for chains nothing shown names.
    let lines = `*${table.name}\n`;
    let blank = 0;
    for (const [rank, bucket] of g.order.entries()) {
      for (const i of bucket) {
        if (lined[i] === 0) {
          blank++;
          continue;
        }
        if (blank > 0) lines += '\n'.repeat(blank);
        blank = 0;
        const name = g.keys.names[i]!;
        lines += `:${name}${rank === 3 && BUILTIN_CHAIN_NAMES.has(name) ? ' ACCEPT [0:0]' : ' - [0:0]'}\n`;
      }
    }
    if (blank > 0) lines += '\n'.repeat(blank);
    out.push(lines);
    // The rules of the shown chains, in canonical order, blank lines for the others'.
    blank = 0;
    for (const bucket of g.order) {
      for (const i of bucket) {
        if (shown[i] === 0) {
          blank += counts[i]!;
          continue;
        }
        if (counts[i] === 0) continue;
        if (blank > 0) out.push('\n'.repeat(blank));
        blank = 0;
        g.chains[i]!.collectTexts(out);
      }
    }
    if (blank > 0) out.push('\n'.repeat(blank));
    out.push('COMMIT\n');
  }
  return out.join('');
}

/** The restore input as one string (for small outputs: trace, explain, check, tests). */
export function renderRulesetText(rs: Ruleset): string {
  return Array.from(renderRuleset(rs)).join('');
}

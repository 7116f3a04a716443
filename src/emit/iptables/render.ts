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

import { BUILTIN_CHAINS, duplicateChain, type ChainRules, type Ruleset, type Table } from './ruleset.js';
import { chainName } from './safe-text.js';
import { sortByName } from './chain-sort.js';

function chainRank(name: string): number {
  if (name === 'KUBE-NODEPORTS') return 0;
  if (name === 'KUBE-SERVICES') return 1;
  if (name.startsWith('KUBE-')) return 2;
  return 3;
}

export function compareChains(a: string, b: string): number {
  const ra = chainRank(a);
  const rb = chainRank(b);
  if (ra !== rb) return ra - rb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Chains in canonical order: bucketed by rank, each bucket sorted by name. Every name goes
 * through the chainName guard first (the sort relies on it: chain names are `[A-Z0-9-]`).
 */
function sortedBuckets(table: Table): ChainRules[][] {
  const buckets: ChainRules[][] = [[], [], [], []];
  for (const rules of table.allChains()) buckets[chainRank(chainName(rules.name))]!.push(rules);
  // Rank 2 is the KUBE-* chains: they share their first five characters.
  return buckets.map((bucket, rank) => sortByName(bucket, rank === 2 ? 'KUBE-'.length : 0));
}

/**
 * The `:CHAIN POLICY [0:0]` lines of a sorted bucket, as one string. Also where chains
 * declared without a lookup (Table.declareNew) are checked for duplicates: equal names
 * are neighbours now.
 */
function chainLines(table: Table, bucket: readonly ChainRules[]): string {
  if (bucket.length === 0) return '';
  const names = new Array<string>(bucket.length);
  let builtins = false;
  for (let i = 0; i < bucket.length; i++) {
    const name = bucket[i]!.name;
    if (i > 0 && name === names[i - 1]) throw duplicateChain(table.name, name);
    names[i] = name;
    builtins ||= BUILTIN_CHAINS.has(name);
  }
  // The common case, KUBE-* chains only: one join, no string per line.
  if (!builtins) return `:${names.join(' - [0:0]\n:')} - [0:0]\n`;
  return names.map((name) => `:${name} ${BUILTIN_CHAINS.has(name) ? 'ACCEPT' : '-'} [0:0]\n`).join('');
}

/** Rule text is joined into output chunks of about this many characters. */
const CHUNK_CHARS = 1 << 20;

/**
 * One table's text as chunks of about a megabyte, in order. Strings, not one Buffer: a
 * 77 MB Buffer is external memory to V8, and allocating it set off a full garbage collection
 * of the whole heap; megabyte strings are written (and freed) one at a time. Rules are
 * ASCII (safe-text.ts), so any encoding writes the same bytes.
 */
function* renderTable(table: Table): Generator<string> {
  const buckets = sortedBuckets(table);
  yield `*${table.name}\n${buckets.map((bucket) => chainLines(table, bucket)).join('')}`;
  const chains = buckets.flat();
  // Each chain's text is a slice of a block; joining a megabyte of slices at a time copies
  // inside the engine, without a call per chain or one giant string.
  let pieces: string[] = [];
  let length = 0;
  for (const rules of chains) {
    rules.collectTexts(pieces);
    length += rules.bytes;
    if (length >= CHUNK_CHARS) {
      yield pieces.join('');
      pieces = [];
      length = 0;
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
  yield* renderTable(rs.filter);
  yield* renderTable(rs.nat);
}

/** The restore input as one string (for small outputs: trace, explain, check, tests). */
export function renderRulesetText(rs: Ruleset): string {
  return Array.from(renderRuleset(rs)).join('');
}

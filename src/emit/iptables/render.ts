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

/** Rule text is copied into the output in joined pieces of about this many characters. */
const COPY_CHARS = 1 << 20;

function renderTable(table: Table): Buffer {
  const buckets = sortedBuckets(table);
  const head = `*${table.name}\n${buckets.map((bucket) => chainLines(table, bucket)).join('')}`;
  const chains = buckets.flat();
  const tail = 'COMMIT\n';
  // Allocated before the copying, not after: a large Buffer makes V8 start a full garbage
  // collection (external memory pressure), and it should run and finish during this stage
  // rather than land in whatever comes next.
  const out = Buffer.allocUnsafe(head.length + table.rulesLength() + tail.length);
  let pos = out.write(head, 0, 'latin1');
  // Each chain's text is a slice of a block; joining a megabyte of slices at a time copies
  // inside the engine, without a call per chain or one giant string.
  let pieces: string[] = [];
  let length = 0;
  for (const rules of chains) {
    rules.collectTexts(pieces);
    length += rules.bytes;
    if (length >= COPY_CHARS || rules === chains[chains.length - 1]) {
      pos += out.write(pieces.join(''), pos, 'latin1');
      pieces = [];
      length = 0;
    }
  }
  pos += out.write(tail, pos, 'latin1');
  if (pos !== out.length) throw new Error(`internal error: table ${table.name} printed ${pos} bytes, expected ${out.length}`);
  return out;
}

/** The restore input as byte chunks (one per table); write them in turn for the file. */
export function renderRuleset(rs: Ruleset): Buffer[] {
  return [renderTable(rs.filter), renderTable(rs.nat)];
}

/** The restore input as one string (for small outputs: trace, explain, check, tests). */
export function renderRulesetText(rs: Ruleset): string {
  return renderRuleset(rs)
    .map((b) => b.toString('latin1'))
    .join('');
}

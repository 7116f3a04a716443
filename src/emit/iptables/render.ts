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
function sortedChains(table: Table): ChainRules[] {
  const buckets: ChainRules[][] = [[], [], [], []];
  for (const rules of table.allChains()) buckets[chainRank(chainName(rules.name))]!.push(rules);
  // Rank 2 is the KUBE-* chains: they share their first five characters.
  const sorted = buckets.flatMap((bucket, rank) => sortByName(bucket, rank === 2 ? 'KUBE-'.length : 0));
  // Chains declared without a lookup (Table.declareNew) are checked for duplicates here.
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.name === sorted[i - 1]!.name) throw duplicateChain(table.name, sorted[i]!.name);
  return sorted;
}

/** The `:CHAIN POLICY [0:0]` lines, as one string. */
function chainLines(chains: readonly ChainRules[]): string {
  if (chains.length === 0) return '';
  const heads = chains.map(({ name }) => (BUILTIN_CHAINS.has(name) ? `${name} ACCEPT` : `${name} -`));
  return `:${heads.join(' [0:0]\n:')} [0:0]\n`;
}

function renderTable(table: Table): Buffer {
  const chains = sortedChains(table);
  const pieces = [`*${table.name}\n`, chainLines(chains)];
  for (const rules of chains) rules.collectTexts(pieces);
  pieces.push('COMMIT\n');
  // One join (copies inside the engine, no call per piece) and one conversion to bytes.
  return Buffer.from(pieces.join(''), 'latin1');
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

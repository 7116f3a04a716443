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

import { BUILTIN_CHAINS, type ChainRules, type Ruleset, type Table } from './ruleset.js';
import { chainName } from './safe-text.js';

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
 * Chains in canonical order: bucketed by rank, each bucket sorted by name. (Chain names are
 * ASCII, so the default sort's UTF-16 order is byte order.)
 */
function sortedChains(table: Table): Array<[string, ChainRules]> {
  const buckets: Array<Array<[string, ChainRules]>> = [[], [], [], []];
  for (const entry of table.chains) buckets[chainRank(entry[0])]!.push(entry);
  const byName = (x: [string, ChainRules], y: [string, ChainRules]) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0);
  return buckets.flatMap((b) => b.sort(byName));
}

function renderTable(table: Table): Buffer {
  const chains = sortedChains(table);
  const head = `*${table.name}\n`;
  let size = head.length + 'COMMIT\n'.length;
  for (const [name, rules] of chains) size += name.length + 10 + rules.bytes; // ":NAME - [0:0]\n" (ACCEPT is 5 more)
  const out = Buffer.allocUnsafe(size + 5 * BUILTIN_CHAINS.size);
  let pos = out.write(head, 0, 'latin1');
  for (const [name] of chains) pos += out.write(`:${chainName(name)} ${BUILTIN_CHAINS.has(name) ? 'ACCEPT' : '-'} [0:0]\n`, pos, 'latin1');
  for (const [, rules] of chains) pos = table.copyRules(rules, out, pos);
  pos += out.write('COMMIT\n', pos, 'latin1');
  return out.subarray(0, pos);
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

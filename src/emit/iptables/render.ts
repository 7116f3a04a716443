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

import { BUILTIN_CHAINS, type Ruleset, type Table } from './ruleset.js';
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

/** Chain names in canonical order (a rank prefix makes plain string order do it, fast). */
function sortedChains(table: Table): string[] {
  return [...table.chains.keys()]
    .map((name) => `${chainRank(name)}${name}`)
    .sort()
    .map((key) => key.slice(1));
}

function renderTable(table: Table): Buffer {
  const names = sortedChains(table);
  let head = `*${table.name}\n`;
  for (const name of names) head += `:${chainName(name)} ${BUILTIN_CHAINS.has(name) ? 'ACCEPT' : '-'} [0:0]\n`;
  let size = Buffer.byteLength(head) + 'COMMIT\n'.length;
  for (const name of names) size += table.byteLength(name);
  const out = Buffer.allocUnsafe(size);
  let pos = out.write(head, 0, 'latin1');
  for (const name of names) pos = table.copyRules(name, out, pos);
  out.write('COMMIT\n', pos, 'latin1');
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

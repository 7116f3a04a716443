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

/** Render one table into `out` (an array of text chunks, to keep huge outputs out of one string). */
function renderTable(table: Table, out: string[]): void {
  const names = [...table.chains.keys()].sort(compareChains);
  let head = `*${table.name}\n`;
  for (const name of names) {
    const policy = BUILTIN_CHAINS.has(name) ? 'ACCEPT' : '-';
    head += `:${chainName(name)} ${policy} [0:0]\n`;
  }
  out.push(head);
  for (const name of names) {
    const rules = table.chains.get(name)!;
    if (rules.length > 0) out.push(rules.join('\n') + '\n');
  }
  out.push('COMMIT\n');
}

/** The restore input as chunks; join them (or write them in turn) for the text. */
export function renderRuleset(rs: Ruleset): string[] {
  const out: string[] = [];
  renderTable(rs.filter, out);
  renderTable(rs.nat, out);
  return out;
}

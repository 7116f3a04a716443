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

/**
 * Collects lines into chunks of about 1 MiB: few enough to write quickly, small enough that
 * a 100,000-Service output never has to be one string (a JavaScript string stops at ~512 MiB).
 * Lines are joined once per chunk, which gives flat strings (no rope to flatten on write).
 */
class ChunkWriter {
  readonly chunks: string[] = [];
  private lines: string[] = [];
  private size = 0;

  line(text: string): void {
    this.lines.push(text);
    this.size += text.length + 1;
    if (this.size >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.lines.length > 0) this.chunks.push(this.lines.join('\n') + '\n');
    this.lines = [];
    this.size = 0;
  }

  finish(): string[] {
    this.flush();
    return this.chunks;
  }
}

function renderTable(table: Table, out: ChunkWriter): void {
  const names = sortedChains(table);
  out.line(`*${table.name}`);
  for (const name of names) {
    const policy = BUILTIN_CHAINS.has(name) ? 'ACCEPT' : '-';
    out.line(`:${chainName(name)} ${policy} [0:0]`);
  }
  for (const name of names) {
    for (const rule of table.chains.get(name)!) out.line(rule);
  }
  out.line('COMMIT');
}

/** The restore input as text chunks; concatenate them (or write them in turn) for the file. */
export function renderRuleset(rs: Ruleset): string[] {
  const out = new ChunkWriter();
  renderTable(rs.filter, out);
  renderTable(rs.nat, out);
  return out.finish();
}

/**
 * The rules of one iptables-restore input, held per table and chain before printing.
 *
 * Chains are kept in declaration order and rules in append order; the printer puts them in
 * kpc's canonical order. A rule is its full restore line (`-A CHAIN ...`): the unit
 * kube-proxy writes and the unit later compared.
 *
 * Why bytes: a 20,000-Service ruleset has a million rules. Kept as a million JavaScript
 * strings (each built from pieces) they cost seconds of garbage collection and have to be
 * flattened again to be written. Instead each line goes straight into one growing byte
 * arena per table, and a chain remembers the byte ranges of its rules; printing copies
 * ranges. Rules are ASCII (safe-text.ts guarantees it), so a byte is a character.
 */

export type TableName = 'filter' | 'nat';

export const BUILTIN_CHAINS: ReadonlySet<string> = new Set(['INPUT', 'FORWARD', 'OUTPUT', 'PREROUTING', 'POSTROUTING']);

/** Byte ranges [start, end) of a chain's rules in the arena, each ending with '\n'; adjacent ranges merged. */
export interface ChainRules {
  spans: number[];
  count: number;
  bytes: number;
}

export class Table {
  /** Chain name → where its rules are. A declared chain with no rules has no spans. */
  readonly chains = new Map<string, ChainRules>();
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;

  constructor(readonly name: TableName) {}

  declare(chain: string): void {
    if (!this.chains.has(chain)) this.chains.set(chain, { spans: [], count: 0, bytes: 0 });
  }

  /** Append `-A chain args`; the chain must have been declared. */
  append(chain: string, args: string): void {
    const rules = this.chains.get(chain);
    if (!rules) throw new Error(`internal error: rule for undeclared chain ${chain} in table ${this.name}`);
    const line = `-A ${chain} ${args}\n`;
    if (this.used + line.length > this.arena.length) this.grow(line.length);
    const start = this.used;
    this.used += this.arena.write(line, start, 'latin1');
    rules.bytes += this.used - start;
    const spans = rules.spans;
    if (spans.length > 0 && spans[spans.length - 1] === start) spans[spans.length - 1] = this.used;
    else spans.push(start, this.used);
    rules.count++;
  }

  private grow(need: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + need));
    this.arena.copy(bigger, 0, 0, this.used);
    this.arena = bigger;
  }

  /** Total bytes of a chain's rules. */
  byteLength(chain: string): number {
    return this.chains.get(chain)?.bytes ?? 0;
  }

  /** Copy a chain's rule lines into `out` at `pos`; returns the new position. */
  copyRules(rules: ChainRules, out: Buffer, pos: number): number {
    const spans = rules.spans;
    const arena = this.arena;
    // A plain loop beats Buffer.copy for the few hundred bytes a chain usually has.
    for (let k = 0; k < spans.length; k += 2) {
      for (let i = spans[k]!, end = spans[k + 1]!; i < end; i++) out[pos++] = arena[i]!;
    }
    return pos;
  }

  /** A chain's rules as `-A CHAIN ...` strings (for comparisons; printing does not need them). */
  rules(chain: string): string[] {
    const spans = this.chains.get(chain)?.spans ?? [];
    const out: string[] = [];
    for (let k = 0; k < spans.length; k += 2) {
      const text = this.arena.toString('latin1', spans[k]!, spans[k + 1]! - 1);
      out.push(...text.split('\n'));
    }
    return out;
  }
}

export interface Ruleset {
  filter: Table;
  nat: Table;
}

export function newRuleset(): Ruleset {
  return { filter: new Table('filter'), nat: new Table('nat') };
}

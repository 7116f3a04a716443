/**
 * The nftables language as knftables writes it for kube-proxy: the objects of one table
 * (the table, chains, sets, maps, counters, elements, rules) and the operations of a
 * transaction on them (add, flush, delete), in the order `nft -f` runs them.
 *
 * A rule's body is kept as text: kube-proxy builds it with knftables.Concat from fixed words
 * and values; the emitter checks every value it puts there (safe-text.ts).
 */

export type NftFamily = 'ip' | 'ip6';

export type NftVerb = 'add' | 'flush' | 'delete';

export interface NftTable {
  kind: 'table';
  comment?: string;
}

export interface NftBaseChainSpec {
  type: 'filter' | 'nat';
  hook: 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';
  /** Numeric, as knftables ParsePriority writes named priorities (dstnat-10 → -110). */
  priority: number;
}

export interface NftChain {
  kind: 'chain';
  name: string;
  base?: NftBaseChainSpec;
  comment?: string;
}

export interface NftSet {
  kind: 'set' | 'map';
  name: string;
  /** `ipv4_addr`, `ipv4_addr . inet_proto . inet_service : verdict`, … */
  type: string;
  flags?: readonly string[];
  /** Seconds. */
  timeout?: number;
  comment?: string;
}

export interface NftCounter {
  kind: 'counter';
  name: string;
}

export interface NftElement {
  kind: 'element';
  /** The set or map. */
  container: string;
  key: readonly string[];
  /** A map element's value (`goto CHAIN`, `drop`). */
  value?: readonly string[];
  comment?: string;
}

export interface NftRule {
  kind: 'rule';
  chain: string;
  /** The rule's body, as knftables.Concat made it. */
  rule: string;
  comment?: string;
}

export type NftObject = NftTable | NftChain | NftSet | NftCounter | NftElement | NftRule;

export interface NftOperation {
  verb: NftVerb;
  object: NftObject;
}

/** A transaction for one table: the operations in order. */
export class NftTransaction {
  /** The operations written (and not taken), in order. */
  ops: NftOperation[] = [];

  constructor(
    readonly family: NftFamily,
    readonly table: string,
  ) {}

  add(object: NftObject): void {
    this.ops.push({ verb: 'add', object });
  }

  flush(object: NftChain | NftSet): void {
    this.ops.push({ verb: 'flush', object });
  }

  delete(object: NftObject): void {
    this.ops.push({ verb: 'delete', object });
  }

  /** The operations written so far, taken out (a transaction printed as it is made). */
  take(): NftOperation[] {
    const ops = this.ops;
    this.ops = [];
    return ops;
  }

  /** knftables NumOperations() (of the operations not taken). */
  get length(): number {
    return this.ops.length;
  }
}

/**
 * knftables.Concat: words joined by single spaces, except that nothing follows a lone "@"
 * (so `Concat("ip saddr", "@", set)` is `ip saddr @set`). Arrays are flattened; numbers
 * printed in decimal.
 */
export function concat(...args: ReadonlyArray<string | number | readonly (string | number)[]>): string {
  // Joined once, into one flat string: `+=` leaves each rule a tree of its words, which a
  // transaction held whole (trace, explain, --full: 550,000 rules at 20,000 Services) keeps,
  // ~110 MB more heap for the collector to mark.
  const words: string[] = [];
  let nonEmpty = false;
  let needSpace = false;
  // As knftables: a string (or an array's item) that is "@" is followed by no space; a number
  // leaves that as it was.
  let wroteAt = false;
  const put = (s: string, word: boolean) => {
    if (needSpace) words.push(' ');
    words.push(s);
    nonEmpty ||= s.length > 0;
    if (word) wroteAt = s === '@';
    needSpace = nonEmpty && !wroteAt;
  };
  for (const a of args) {
    if (Array.isArray(a)) for (const s of a) put(String(s), true);
    else put(String(a), typeof a === 'string');
  }
  return words.join('');
}

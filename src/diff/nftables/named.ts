/**
 * What each operation of a transaction names: its object's class (a chain with its rules, a
 * set or map with its elements, a counter, the table) and name. The alignment of a previous
 * text with the new one (aligned.ts) groups the lines by it.
 *
 * Two forms of the new transaction carry it: the transaction itself (kpc diff, which makes
 * the new state's objects from its operations), and the transaction printed as it was written
 * (`compile --previous`), whose operations were let go chunk by chunk as in kpc compile and
 * whose names alone were kept: at 100,000 Services the operations held whole are 1.2 GB of
 * heap, for a delta that reads a few of their objects again from the printed lines.
 */

import type { NftFamily, NftOperation, NftTransaction } from '../../lang/nftables/index.js';

/** The classes of objects an operation names. */
export const enum Class {
  Table,
  Chain,
  Set,
  Counter,
}

/** The class of the object an operation names. */
export function classOf(op: NftOperation): Class {
  switch (op.object.kind) {
    case 'table':
      return Class.Table;
    case 'chain':
    case 'rule':
      return Class.Chain;
    case 'set':
    case 'map':
    case 'element':
      return Class.Set;
    case 'counter':
      return Class.Counter;
  }
}

/** The name of the object (chain, set or map, counter) an operation names; '' for the table. */
export function nameOf(op: NftOperation): string {
  const o = op.object;
  switch (o.kind) {
    case 'table':
      return '';
    case 'chain':
    case 'set':
    case 'map':
    case 'counter':
      return o.name;
    case 'rule':
      return o.chain;
    case 'element':
      return o.container;
  }
}

/** A new transaction as the alignment reads it: its operations' classes and names, in order. */
export interface NamedOperations {
  readonly family: NftFamily;
  readonly table: string;
  readonly count: number;
  classAt(i: number): Class;
  nameAt(i: number): string;
}

/** The names of a transaction's operations. */
export function namesOfTransaction(tx: NftTransaction): NamedOperations {
  const ops = tx.ops;
  return { family: tx.family, table: tx.table, count: ops.length, classAt: (i) => classOf(ops[i]!), nameAt: (i) => nameOf(ops[i]!) };
}

/**
 * The names of a transaction's operations recorded as it is written and printed (`record`
 * each chunk before it is printed and let go): the printed text is the transaction, line i
 * operation i, and these are what its lines name.
 */
export class RecordedNames implements NamedOperations {
  private classes = new Uint8Array(1 << 16);
  private readonly names: string[] = [];

  constructor(
    readonly family: NftFamily,
    readonly table: string,
  ) {}

  get count(): number {
    return this.names.length;
  }

  record(ops: readonly NftOperation[]): void {
    const n = this.names.length;
    if (n + ops.length > this.classes.length) {
      const grown = new Uint8Array(Math.max(2 * this.classes.length, n + ops.length));
      grown.set(this.classes);
      this.classes = grown;
    }
    for (let i = 0; i < ops.length; i++) {
      this.classes[n + i] = classOf(ops[i]!);
      this.names.push(nameOf(ops[i]!));
    }
  }

  classAt(i: number): Class {
    return this.classes[i]! as Class;
  }

  nameAt(i: number): string {
    return this.names[i]!;
  }
}

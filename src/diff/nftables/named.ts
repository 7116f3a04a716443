/**
 * What each operation of a transaction names: its verb, its object's kind and name, and the
 * class of object that is (a chain with its rules, a set or map with its elements, a counter,
 * the table). The alignment of a previous text with the new one (aligned.ts) groups the lines
 * by it.
 *
 * `compile --previous` and `kpc diff` print the new transaction as kpc compile does, chunk by
 * chunk, each chunk's operations let go once printed; these are recorded first. At 100,000
 * Services the operations held whole were 1.2 GB of heap, for a delta or a report that reads
 * a few of their objects, which are read again from their printed lines.
 */

import type { NftFamily, NftObject, NftOperation, NftVerb } from '../../lang/nftables/index.js';

/** The classes of objects an operation names. */
export const enum Class {
  Table,
  Chain,
  Set,
  Counter,
}

const KINDS: ReadonlyArray<NftObject['kind']> = ['table', 'chain', 'rule', 'set', 'map', 'element', 'counter'];
const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));
const CLASS_OF_KIND: readonly Class[] = [Class.Table, Class.Chain, Class.Chain, Class.Set, Class.Set, Class.Set, Class.Counter];
const VERBS: readonly NftVerb[] = ['add', 'flush', 'delete'];
const VERB_CODE = new Map(VERBS.map((v, i) => [v, i]));

/** The name of the object (chain, set or map, counter) an operation names; '' for the table. */
function nameOf(op: NftOperation): string {
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

/**
 * The operations of a transaction as it is written and printed (`record` each chunk before it
 * is printed and let go): the printed text is the transaction, line i operation i, and these
 * are what its lines do and name.
 */
export class RecordedOperations {
  /** Per operation: its kind's place in KINDS, and its verb's in VERBS times 8. */
  private codes = new Uint8Array(1 << 16);
  /** Per operation, its object's name (a chain's rules share their chain's string). */
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
    if (n + ops.length > this.codes.length) {
      const grown = new Uint8Array(Math.max(2 * this.codes.length, n + ops.length));
      grown.set(this.codes);
      this.codes = grown;
    }
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      this.codes[n + i] = KIND_CODE.get(op.object.kind)! | (VERB_CODE.get(op.verb)! << 3);
      this.names.push(nameOf(op));
    }
  }

  classAt(i: number): Class {
    return CLASS_OF_KIND[this.codes[i]! & 7]!;
  }

  kindAt(i: number): NftObject['kind'] {
    return KINDS[this.codes[i]! & 7]!;
  }

  verbAt(i: number): NftVerb {
    return VERBS[this.codes[i]! >> 3]!;
  }

  nameAt(i: number): string {
    return this.names[i]!;
  }
}

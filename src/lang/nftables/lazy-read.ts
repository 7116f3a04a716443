/**
 * One table as trace and explain read it (NftTableView): objects by name, and its base chains.
 * A full state (state.ts) is one such view; the others are lazy, for a table of 260,000 chains
 * of which a traced packet reaches a dozen:
 *
 *   - readTransactionLazily: knftables' form (kpc's 143 MB output) split into the lines of each
 *     chain and each set or map (one pass, a few words a line); a chain's or a set's lines are
 *     parsed, checked and applied when first asked for, and a set's elements one key at a
 *     time (the lines holding the key's first word: a map of 20,000 Services is asked for two
 *     or three keys);
 *   - viewOfTransaction: a transaction kpc built (trace and explain from manifests), its
 *     operations indexed the same way and applied per object when asked for.
 *
 * Exact: the lines (operations) of one object, merged in order with the table's own (`delete
 * table`, `flush table`), applied to an empty table, give that object as applying the whole
 * transaction gives it (applyTransaction: an operation on a chain or set touches only it, and
 * the table's own operations touch every object). Errors: a line whose first words are not a
 * command of knftables' form, and any error in a line that is read, make the whole text read
 * eagerly (readTransaction), so the error reported is the eager reading's first one, at its
 * line. An error in a line never read goes unreported: a bad rule of a chain the packet does
 * not reach, an element of a map it does not consult, and also an element of a map it does
 * consult when the element's key starts with another word than the packet's (the map is read
 * key by key). Such a line is one nft itself would not have listed (the file was edited); the
 * packet goes where the other lines send it, as with iptables' lazy reading
 * (lang/iptables/read.ts).
 */

import { append } from '../../arrays.js';
import { isKpcError, type KpcError } from '../../errors.js';
import { NftTransaction, type NftFamily, type NftOperation } from './model.js';
import { firstSignificantLine, nftStateForm, readCommandLine, readNftState, readTransaction } from './read.js';
import { applyTransaction, emptyState, type NftState, type StateChain, type StateElement, type StateSet } from './state.js';
import { lineError } from '../line-error.js';
import { AsciiBytes } from '../ascii-bytes.js';
import { PiecedText } from '../pieced-text.js';
import { oneString, type TextSource } from '../text-source.js';
import { HASH_START, hashWith, LineRuns, TextNames } from '../text-names.js';

export interface NftTableView {
  readonly family: NftFamily;
  readonly table: string;
  /** False: the source held no such table. */
  readonly exists: boolean;
  chain(name: string): StateChain | undefined;
  /** A set or a map. */
  set(name: string): StateSet | undefined;
  /** The chains with a hook. */
  baseChains(): StateChain[];
}

export function viewOfState(state: NftState): NftTableView {
  return {
    family: state.family,
    table: state.table,
    exists: state.exists,
    chain: (name) => state.chains.get(name),
    set: (name) => state.sets.get(name),
    baseChains: () => [...state.chains.values()].filter((c) => c.base !== undefined),
  };
}

/** Where an object's operations are (positions in the source, ascending): how a LazyTable finds them. */
interface OpFinder {
  /** `add/flush/delete table`: they touch every object. */
  readonly table: readonly number[];
  /** Chains declared with fields (`{ type … hook … }`), among them every chain with a hook. */
  readonly declared: ReadonlySet<string>;
  /** A chain's operations and rules; undefined: none. */
  chain(name: string): readonly number[] | undefined;
  /** A set's or map's operations and elements (sets and maps share one namespace). */
  set(name: string): readonly number[] | undefined;
  /**
   * When the finder can tell: a set's own operations without its elements (`set`), and the
   * elements whose text holds `word` (any element with a key whose first word is `word` does).
   */
  readonly byKey?: {
    declarations(name: string): readonly number[] | undefined;
    elementsWith(name: string, word: string): readonly number[];
  };
}

/**
 * The OpFinder of knftables' form, made in one pass: per group (chains with their rules, sets
 * and maps, elements by their set) the names (TextNames: 264,000 chains without a string or a
 * Map entry each) and the runs of consecutive lines each has (kpc writes an object's lines
 * together), split into lines when the object is asked for.
 */
class OpIndex implements OpFinder {
  readonly table: number[] = [];
  readonly declared = new Set<string>();
  readonly names: Record<Group, TextNames>;
  readonly runs: Record<Group, LineRuns>;
  byKey?: OpFinder['byKey'];

  constructor(text: TextSource) {
    // kpc's transaction at 20,000 Services: 264,000 chains in 143 MB, 11,000 sets and maps.
    const chains = text.length >> 9;
    this.names = { chain: new TextNames(text, chains), set: new TextNames(text), element: new TextNames(text) };
    this.runs = { chain: new LineRuns(text, chains), set: new LineRuns(text), element: new LineRuns(text) };
  }

  /** Each object's lines once split, by `${group} ${name}`: a set is asked once per key looked up. */
  private readonly split = new Map<string, readonly number[] | undefined>();

  /** The positions of the lines of `name` in `group`, or undefined when it has none. */
  lines(group: Group, name: string): readonly number[] | undefined {
    const key = `${group} ${name}`;
    if (this.split.has(key)) return this.split.get(key);
    const id = this.names[group].find(name);
    let out: number[] | undefined;
    if (this.runs[group].has(id)) {
      out = [];
      this.runs[group].eachLine(id, (start) => out!.push(start));
    }
    this.split.set(key, out);
    return out;
  }

  chain(name: string): readonly number[] | undefined {
    return this.lines('chain', name);
  }

  set(name: string): readonly number[] | undefined {
    const own = this.lines('set', name);
    const elements = this.lines('element', name);
    return own === undefined ? elements : elements === undefined ? own : merged(own, elements);
  }
}

/**
 * A set's elements looked up one key at a time: each key's candidate lines (those holding its
 * first word) are applied with the set's own, in order; anything that reads them all (size,
 * iteration) applies every element line, as the eager reading does.
 */
class ElementsByKey extends Map<string, StateElement> {
  private readonly read = new Map<string, StateElement | undefined>();
  private everything: Map<string, StateElement> | undefined;

  constructor(
    private readonly one: (key: string) => StateElement | undefined,
    private readonly all: () => Map<string, StateElement>,
  ) {
    super();
  }

  override get(key: string): StateElement | undefined {
    if (this.everything !== undefined) return this.everything.get(key);
    if (!this.read.has(key)) this.read.set(key, this.one(key));
    return this.read.get(key);
  }

  override has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  private whole(): Map<string, StateElement> {
    return (this.everything ??= this.all());
  }

  override get size(): number {
    return this.whole().size;
  }

  override keys(): MapIterator<string> {
    return this.whole().keys();
  }

  override values(): MapIterator<StateElement> {
    return this.whole().values();
  }

  override entries(): MapIterator<[string, StateElement]> {
    return this.whole().entries();
  }

  override [Symbol.iterator](): MapIterator<[string, StateElement]> {
    return this.whole()[Symbol.iterator]();
  }

  override forEach(f: (value: StateElement, key: string, map: Map<string, StateElement>) => void, thisArg?: unknown): void {
    this.whole().forEach(f, thisArg);
  }
}

/** Two ascending lists as one. */
function merged(a: readonly number[], b: readonly number[]): readonly number[] {
  if (a.length === 0) return b;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i]! < b[j]!) ? a[i++]! : b[j++]!);
  return out;
}

class LazyTable implements NftTableView {
  private readonly chainsRead = new Map<string, StateChain | undefined>();
  private readonly setsRead = new Map<string, StateSet | undefined>();
  private tableRead: NftState | undefined;

  constructor(
    readonly family: NftFamily,
    readonly table: string,
    private readonly index: OpFinder,
    /** The operations at these positions, in order (a position may hold none: another table's line). */
    private readonly opsAt: (positions: readonly number[]) => NftOperation[],
  ) {}

  private apply(positions: readonly number[]): NftState {
    const tx = new NftTransaction(this.family, this.table);
    // A map of 100,000 Services' elements is more operations than push(...ops) takes.
    append(tx.ops, this.opsAt(merged(this.index.table, positions)));
    return applyTransaction(emptyState(this.family, this.table), tx);
  }

  get exists(): boolean {
    return (this.tableRead ??= this.apply([])).exists;
  }

  chain(name: string): StateChain | undefined {
    if (!this.chainsRead.has(name)) {
      const at = this.index.chain(name);
      this.chainsRead.set(name, at === undefined ? undefined : this.apply(at).chains.get(name));
    }
    return this.chainsRead.get(name);
  }

  set(name: string): StateSet | undefined {
    if (!this.setsRead.has(name)) this.setsRead.set(name, this.readSet(name));
    return this.setsRead.get(name);
  }

  private readSet(name: string): StateSet | undefined {
    const at = this.index.set(name);
    if (at === undefined) return undefined;
    const byKey = this.index.byKey;
    if (byKey === undefined) return this.apply(at).sets.get(name);
    // The declaration alone (elements do not change it), then the elements asked for.
    const own = byKey.declarations(name) ?? [];
    const declared = this.apply(own).sets.get(name);
    if (declared === undefined) return undefined;
    const elementOf = (key: string): StateElement | undefined => {
      const word = key.split(' ')[0]!;
      return this.apply(merged(own, byKey.elementsWith(name, word))).sets.get(name)?.elements.get(key);
    };
    return { ...declared, elements: new ElementsByKey(elementOf, () => this.apply(at).sets.get(name)?.elements ?? new Map()) };
  }

  baseChains(): StateChain[] {
    const out: StateChain[] = [];
    for (const name of this.index.declared) {
      const c = this.chain(name);
      if (c?.base !== undefined) out.push(c);
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// A transaction kpc built
// ---------------------------------------------------------------------------------------------

/**
 * The view of a transaction kpc built. Its operations are not indexed by name at first: an
 * object's are found by a pass over them when first asked for (trace and explain ask for a few
 * dozen objects, a few milliseconds each), which keeps the memory of trace and explain that of
 * the transaction, as compile's. Past PASSES objects, one index of every object's operations
 * answers instead: explain of a Service with 100,000 endpoints asks for each endpoint's chain.
 */
export function viewOfTransaction(tx: NftTransaction): NftTableView {
  const table: number[] = [];
  const declared = new Set<string>();
  tx.ops.forEach(({ object: o }, i) => {
    if (o.kind === 'table') table.push(i);
    else if (o.kind === 'chain' && o.base !== undefined) declared.add(o.name);
  });
  const find = (matches: (o: NftOperation['object']) => boolean): number[] | undefined => {
    const out: number[] = [];
    tx.ops.forEach(({ object: o }, i) => {
      if (matches(o)) out.push(i);
    });
    return out.length > 0 ? out : undefined;
  };
  let asked = 0;
  let index: OpsByName | undefined;
  const byName = (): OpsByName | undefined => (index ??= ++asked > PASSES ? opsByName(tx) : undefined);
  const finder: OpFinder = {
    table,
    declared,
    chain: (name) => {
      const i = byName();
      return i ? i.chains.get(name) : find((o) => (o.kind === 'chain' && o.name === name) || (o.kind === 'rule' && o.chain === name));
    },
    set: (name) => {
      const i = byName();
      return i ? i.sets.get(name) : find((o) => ((o.kind === 'set' || o.kind === 'map') && o.name === name) || (o.kind === 'element' && o.container === name));
    },
  };
  return new LazyTable(tx.family, tx.table, finder, (positions) => positions.map((i) => tx.ops[i]!));
}

/** How many objects a built transaction's view finds by a pass each before it indexes them all. */
const PASSES = 64;

/** Each chain's and set's operations (their positions, in order), as the view's passes find them. */
interface OpsByName {
  chains: Map<string, number[]>;
  sets: Map<string, number[]>;
}

function opsByName(tx: NftTransaction): OpsByName {
  const chains = new Map<string, number[]>();
  const sets = new Map<string, number[]>();
  const note = (map: Map<string, number[]>, name: string, i: number) => {
    const at = map.get(name);
    if (at) at.push(i);
    else map.set(name, [i]);
  };
  tx.ops.forEach(({ object: o }, i) => {
    if (o.kind === 'chain') note(chains, o.name, i);
    else if (o.kind === 'rule') note(chains, o.chain, i);
    else if (o.kind === 'set' || o.kind === 'map') note(sets, o.name, i);
    else if (o.kind === 'element') note(sets, o.container, i);
  });
  return { chains, sets };
}

// ---------------------------------------------------------------------------------------------
// knftables' form
// ---------------------------------------------------------------------------------------------

const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);
const VERBS = new Set(['add', 'flush', 'delete']);
const KINDS = new Set(['table', 'chain', 'set', 'map', 'counter', 'element', 'rule']);
/** What parseCommand splits a line into: verb, kind, family, table, the rest. */
const HEAD = /^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/;

/** A line whose first words readTransaction refuses (the whole text is then read eagerly). */
class Unindexable extends Error {}

/** An object's lines as the index keeps them: a chain's with its rules, a set's or map's, a set's elements. */
type Group = 'chain' | 'set' | 'element';

/** The index's group of a kind: chains (with their rules), sets (with their elements), or neither. */
function groupOf(kind: string): Group | undefined {
  return kind === 'chain' || kind === 'rule' ? 'chain' : kind === 'set' || kind === 'map' ? 'set' : kind === 'element' ? 'element' : undefined;
}

/** The kinds fastHead tells, by their number in its answer. */
const FAST_KINDS = ['', 'rule', 'element', 'chain', 'set', 'map'] as const;
/** Each kind with the space after it, and its first character's code (-1 for none). */
const FAST_WORDS = FAST_KINDS.map((kind) => `${kind} `);
const FAST_INITIALS = FAST_KINDS.map((kind) => (kind === '' ? -1 : kind.charCodeAt(0)));

/**
 * The fast path of the index: where the name starts in `VERB KIND FAMILY TABLE NAME…` written
 * with single spaces, as kpc and knftables write it, times 8, plus the kind's number in
 * FAST_KINDS; -1 for anything else (other spacing, tabs, a comment, another table, `table` and
 * `counter` lines), which `slowLine` reads as parseCommand does. (A number, not an object: it
 * is asked of each of a million lines.)
 */
function fastHead(text: string | AsciiBytes, start: number, prefix: string): number {
  let p: number;
  const verb = text.charCodeAt(start);
  if (verb === 0x61 && text.startsWith('add ', start)) p = start + 4;
  else if (verb === 0x66 && text.startsWith('flush ', start)) p = start + 6;
  else if (verb === 0x64 && text.startsWith('delete ', start)) p = start + 7;
  else return -1;
  // The kinds' initials differ, so one character picks the only word to compare.
  const kind = FAST_INITIALS.indexOf(text.charCodeAt(p));
  if (kind <= 0 || !text.startsWith(FAST_WORDS[kind]!, p)) return -1;
  p += FAST_WORDS[kind]!.length;
  if (!text.startsWith(prefix, p)) return -1;
  return (p + prefix.length) * 8 + kind;
}

/**
 * Whether the name at `at` ends where the fast path can take it: at the line's end, or at one
 * space followed by more (not by a space: the slow path trims and splits that).
 */
function endsCleanly(text: string | AsciiBytes, q: number, end: number): boolean {
  return q === end || (text.charCodeAt(q) === 32 && q + 1 < end && text.charCodeAt(q + 1) !== 32);
}

const NEWLINE = 10;

/** Any line: its kind and object name as parseCommand reads them (undefined: nothing of this table). */
function slowLine(raw: string, family: string, table: string): { kind: string; name: string; fields: boolean } | undefined {
  const l = raw.trim();
  if (l === '' || l.startsWith('#')) return undefined;
  const m = HEAD.exec(l);
  if (!m || !VERBS.has(m[1]!) || !FAMILIES.has(m[3]!)) throw new Unindexable();
  if (m[3] !== family || m[4] !== table) return undefined;
  if (!KINDS.has(m[2]!)) throw new Unindexable();
  if (m[2] === 'table') return { kind: 'table', name: '', fields: false };
  const nm = /^(\S+)\s*(.*)$/.exec(m[5]!);
  if (!nm) throw new Unindexable();
  return { kind: m[2]!, name: nm[1]!, fields: nm[2] !== '' };
}

/**
 * knftables' form → the table, read lazily (see the top of this file). The text is indexed
 * in one pass; nothing is parsed until trace or explain asks for an object.
 */
export function readTransactionLazily(text: TextSource, family: NftFamily, table: string): NftTableView {
  const index = new OpIndex(text);
  const prefix = `${family} ${table} `;
  // The run under way: its group (undefined: none) and object, whose name is at lastAt in a
  // file's bytes (-1: a string, lastName). kpc writes an object's lines together (add, flush,
  // its rules), so most lines are matched against it without a lookup.
  let lastName = '';
  let lastAt = -1;
  let lastLength = 0;
  let lastGroup: Group | undefined;
  // The line the slow path reads (where an unindexable line is).
  let slowAt = 0;
  try {
    if (!(text instanceof PiecedText)) indexPiece(text, 0, true);
    else text.pieces.forEach((piece, k) => indexPiece(piece, text.base(k), k === text.pieces.length - 1));
  } catch (e) {
    if (e instanceof Unindexable) return eagerOrThrow(text, family, table, slowAt);
    throw e;
  }

  /**
   * The lines of `piece`: all of the text (a string or a file's bytes), or a piece that starts
   * at `base` and ends a line.
   */
  function indexPiece(piece: string | AsciiBytes, base: number, last: boolean): void {
    // A file's bytes (143 MB at 20,000 Services): line ends and a run's name are found and
    // compared where they lie, without a string per line or per run.
    const bytes = piece instanceof AsciiBytes ? piece.bytes : undefined;
    // A line's position is the offset where it starts.
    for (let start = 0; last ? start <= piece.length : start < piece.length; ) {
      let end = bytes ? bytes.indexOf(NEWLINE, start) : piece.indexOf('\n', start);
      if (end < 0) end = piece.length;
      const lineStart = start;
      start = end + 1;
      // A line ending in a space or a carriage return: trimmed by the slow path.
      const lastChar = end === lineStart ? 0 : bytes ? bytes[end - 1]! : piece.charCodeAt(end - 1);
      const fast = lastChar <= 32 ? -1 : fastHead(piece, lineStart, prefix);
      if (fast >= 0) {
        const kind = FAST_KINDS[fast & 7]!;
        const at = (fast - (fast & 7)) / 8;
        const group = groupOf(kind)!;
        const q = at + lastLength;
        if (group === lastGroup && q <= end && (lastAt >= 0 ? (piece as AsciiBytes).sameRange(lastAt, at, lastLength) : piece.startsWith(lastName, at)) && endsCleanly(piece, q, end)) {
          index.runs[group].extend(base + end);
          if (kind === 'chain' && q < end) index.declared.add(piece.slice(at, q));
          continue;
        }
        // The name: printable ASCII without spaces, hashed as it is checked (anything else: the slow path).
        let n = at;
        let hash = HASH_START;
        if (bytes) for (let c = bytes[n]!; n < end && c > 32 && c < 127; c = bytes[++n]!) hash = hashWith(hash, c);
        else for (let c = piece.charCodeAt(n); n < end && c > 32 && c < 127; c = piece.charCodeAt(++n)) hash = hashWith(hash, c);
        n -= at;
        if (n === 0 || !endsCleanly(piece, at + n, end)) {
          if (!indexSlow(piece.slice(lineStart, end), base + lineStart, base + end)) lastGroup = undefined;
          continue;
        }
        if (bytes) lastAt = at;
        else lastName = piece.slice(at, at + n);
        lastLength = n;
        lastGroup = group;
        if (kind === 'chain' && at + n < end) index.declared.add(piece.slice(at, at + n));
        index.runs[group].begin(index.names[group].addAt(base + at, n, hash), base + lineStart, base + end);
        continue;
      }
      if (!indexSlow(piece.slice(lineStart, end), base + lineStart, base + end)) lastGroup = undefined;
    }
  }

  /** A line read as parseCommand reads it; true when it begins a run (false: it is no object's). */
  function indexSlow(raw: string, lineStart: number, end: number): boolean {
    slowAt = lineStart;
    const head = slowLine(raw, family, table);
    if (head === undefined) return false;
    if (head.kind === 'table') index.table.push(lineStart);
    const group = groupOf(head.kind);
    if (group === undefined) return false;
    if (head.kind === 'chain' && head.fields) index.declared.add(head.name);
    index.runs[group].begin(index.names[group].add(head.name), lineStart, end);
    lastName = head.name;
    lastAt = -1;
    lastLength = head.name.length;
    lastGroup = group;
    return true;
  }

  const lineAt = (at: number): string => {
    const end = text.indexOf('\n', at);
    return text.slice(at, end < 0 ? text.length : end);
  };
  /** The operations of these lines; `lineOf` numbers them (only for an error: counting lines costs a scan). */
  const read = (positions: readonly number[], lineOf: (at: number) => number): NftOperation[] => {
    // Set types as declared by the lines before (only an object's own lines declare its type).
    const types = new Map<string, string>();
    const ops: NftOperation[] = [];
    for (const at of positions) {
      const op = readCommandLine(lineAt(at).trim(), lineOf(at), family, table, types);
      if (op) ops.push(op);
    }
    return ops;
  };
  index.byKey = {
    declarations: (name) => index.lines('set', name),
    elementsWith: (name, word) => (index.lines('element', name) ?? []).filter((at) => lineAt(at).includes(word)),
  };
  return new LazyTable(family, table, index, (positions) => {
    try {
      return read(positions, () => 0);
    } catch (e) {
      if (!isKpcError(e, 'previous.unreadable')) throw e;
      // The eager reading's first error; it finds this one if no other (the same checks, the same
      // set types). A text too long to be a string has no eager reading: this error is reported.
      const whole = oneString(text);
      if (whole !== undefined) readTransaction(whole, family, table);
      return read(positions, (at) => lineNumber(text, at));
    }
  });
}

/** The line (from 1) that starts at offset `at`. */
function lineNumber(text: TextSource, at: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * A line the index cannot take (the one at `at`): the eager reading, which reports its first
 * error (the one readTransaction gives), or, should it accept the line after all, reads the
 * whole table. A text too long to be a string has no eager reading: refused at that line.
 */
function eagerOrThrow(text: TextSource, family: NftFamily, table: string, at: number): NftTableView {
  const whole = oneString(text);
  if (whole === undefined) throw notATransaction(text, lineNumber(text, at), 'this line is not of that form');
  return viewOfState(readTransaction(whole, family, table));
}

/** A text too long to be a string is read only as a transaction, line by line: the refusal of another, at `line`. */
export function notATransaction(text: TextSource, line: number, why: string): KpcError {
  return lineError(line, `a text of ${text.length} characters (longer than one string can be) is read only as knftables writes a transaction (kpc, kube-proxy), and ${why}`);
}

/** Any of the three forms (read.ts readNftState) → the table; knftables' form is read lazily. */
export function readNftView(text: TextSource, family: NftFamily, table: string): NftTableView {
  if (typeof text === 'string') {
    return nftStateForm(text) === 'transaction' ? readTransactionLazily(text, family, table) : viewOfState(readNftState(text, family, table).state);
  }
  // The form is told by the first line that is not blank or a comment (the text is not decoded for it).
  if (nftStateForm(firstSignificantLine(text) ?? '') === 'transaction') return readTransactionLazily(text, family, table);
  const whole = oneString(text);
  if (whole === undefined) throw notATransaction(text, 1, 'this text is not one');
  return viewOfState(readNftState(whole, family, table).state);
}

/**
 * A previous transaction in kpc's form read beside the new one, object by object: the lines
 * that name one object (a chain and its rules, a set or map and its elements, a counter) are
 * that object's group, and an object whose group has the same lines in both texts is the same
 * in both states, so only the groups that differ are read.
 *
 * Why: `compile --previous` and `kpc diff` in nftables mode with one Service changed at
 * 20,000 Services read a 29 MB transaction of 210,000 lines whole to find a few changed
 * chains and elements. nft applies a transaction's operations in order, and each one changes
 * only the object it names (the table's own operations aside), so an object's final state is
 * its group's lines applied in order: equal groups, equal objects.
 *
 * Two readers over that matching:
 *   readChangedTransactions  only the objects whose groups differ, on both sides (for the
 *                            delta, which looks only at what differs);
 *   readPreviousBeside       the whole previous state, its equal objects being the new
 *                            state's (the same objects: consumers skip them by identity).
 * Both give what reading the text whole (readTransaction) gives, in the same order of objects.
 * The texts are aligned as lines first (text-lines.ts): a previous line the alignment pairs
 * with a new one is that operation's line, in its group, and is never read; the others must
 * be lines `add|flush|delete KIND FAMILY TABLE [NAME …]` of the table asked for, with a plain
 * name. The table lines must be the new text's (blank and comment lines are skipped, as the
 * whole reader does); any other text, a group the reader refuses (its line
 * numbers would be the group's), or (for the delta) a set or map declared otherwise gives
 * undefined, and the caller reads the text whole, errors included. They never throw.
 */

import {
  applyTransaction,
  emptyState,
  NftTransaction,
  NFT_NAME,
  readTransaction,
  renderTransactionText,
  sameSetDeclaration,
  type NftFamily,
  type NftOperation,
  type NftState,
} from '../../lang/nftables/index.js';
import type { Change } from '../sequence.js';
import { lineChanges, TextLines } from '../text-lines.js';

/** An object's group: `t` the table, `c:NAME` a chain, `s:NAME` a set or map, `n:NAME` a counter. */
type GroupKey = string;

const KIND_GROUP: Readonly<Record<string, string>> = { chain: 'c:', rule: 'c:', set: 's:', map: 's:', element: 's:', counter: 'n:' };
const VERBS = new Set(['add', 'flush', 'delete']);

function groupOfOperation(op: NftOperation): GroupKey {
  const o = op.object;
  switch (o.kind) {
    case 'table':
      return 't';
    case 'chain':
      return `c:${o.name}`;
    case 'rule':
      return `c:${o.chain}`;
    case 'set':
    case 'map':
      return `s:${o.name}`;
    case 'element':
      return `s:${o.container}`;
    case 'counter':
      return `n:${o.name}`;
  }
}

/** A previous line's group, '' for a line the whole reader skips, undefined for one left to it. */
function groupOfLine(line: string, head: string): GroupKey | undefined {
  if (line === '' || line.startsWith('#')) return '';
  const verbEnd = line.indexOf(' ');
  const kindEnd = verbEnd < 0 ? -1 : line.indexOf(' ', verbEnd + 1);
  if (kindEnd < 0 || !VERBS.has(line.slice(0, verbEnd)) || !line.startsWith(head, kindEnd)) return undefined;
  const kind = line.slice(verbEnd + 1, kindEnd);
  const at = kindEnd + head.length;
  if (kind === 'table') return at === line.length || line.charCodeAt(at) === 32 ? 't' : undefined;
  const prefix = KIND_GROUP[kind];
  if (prefix === undefined || line.charCodeAt(at) !== 32) return undefined;
  const end = line.indexOf(' ', at + 1);
  const name = line.slice(at + 1, end < 0 ? line.length : end);
  return NFT_NAME.test(name) ? prefix + name : undefined;
}

/** What both texts' groups are, and which differ. */
interface Matched {
  /** The previous text's lines: each one's group ('' for skipped lines), and its text (lineOf). */
  groups: GroupKey[];
  /** Per previous line, the new operation the alignment pairs it with (its text and meaning), or -1. */
  opOf: Int32Array;
  /** The text of each previous line not paired with an operation (the others are holes). */
  read: string[];
  /** The new transaction's text: line i is operation i. */
  printed: TextLines;
  /** The new transaction's operations and their groups. */
  ops: readonly NftOperation[];
  opGroups: GroupKey[];
  /** Groups whose lines differ (or are in one text only). */
  differ: Set<GroupKey>;
}

function sameLines(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Past this many changed lines the texts are not aligned (Myers' cost grows with them) and
 * every group is compared.
 */
const MAX_ALIGNED_EDITS = 1024;

function matchGroups(previous: string, next: NftTransaction): Matched | undefined {
  const ops = next.ops;
  const opGroups: GroupKey[] = new Array(ops.length);
  for (let i = 0; i < ops.length; i++) opGroups[i] = groupOfOperation(ops[i]!);
  const a = new TextLines(previous);
  // Printed as compile prints it, in chunks: no string per line is kept (210,000 at 20,000
  // Services, for the collector to move); a line's text is cut from the whole when compared.
  const b = new TextLines(renderTransactionText(next));
  // An operation printed on more than one line would put the lines out of step.
  if (b.count !== ops.length) return undefined;
  // Aligned, a previous line paired with a new one is that operation's line (same text, same
  // group); only the others are read. Too far apart, every line is read and every group compared.
  const changes = lineChanges(a, b, MAX_ALIGNED_EDITS);
  const p = groupPrevious(a, changes, ` ${next.family} ${next.table}`, opGroups);
  if (!p) return undefined;
  // Only groups with a line the two texts do not share can differ: a group whose every line
  // pairs with an equal line of the other text, in order, has the same lines on both sides.
  // Those (and the table's) are compared; all of them when the texts are too far apart.
  const compared = (g: GroupKey) => changes === undefined || g === 't' || p.changed.has(g);
  const before = new Map<GroupKey, string[]>();
  const m: Matched = { groups: p.groups, opOf: p.opOf, read: p.read, printed: b, ops, opGroups, differ: new Set<GroupKey>() };
  for (let i = 0; i < p.groups.length; i++) {
    const g = p.groups[i]!;
    if (g !== '' && compared(g)) (before.get(g) ?? before.set(g, []).get(g)!).push(lineOf(m, i));
  }
  const after = new Map<GroupKey, string[]>();
  for (let i = 0; i < ops.length; i++) {
    const g = opGroups[i]!;
    if (compared(g)) (after.get(g) ?? after.set(g, []).get(g)!).push(b.bare(i));
  }
  // The table's lines decide what the whole text leaves (a delete or flush of it clears all).
  if (!sameLines(before.get('t'), after.get('t')) || after.get('t')!.some((l) => !l.startsWith('add '))) return undefined;
  for (const [g, l] of before) if (!sameLines(l, after.get(g))) m.differ.add(g);
  for (const g of after.keys()) if (!before.has(g)) m.differ.add(g);
  return m;
}

/** Previous line x's verb and kind: its operation's when paired, else its first two words. */
function commandOf(m: Matched, x: number): { verb: string; kind: string } {
  const y = m.opOf[x]!;
  if (y >= 0) return { verb: m.ops[y]!.verb, kind: m.ops[y]!.object.kind };
  const line = m.read[x]!;
  const verbEnd = line.indexOf(' ');
  return { verb: line.slice(0, verbEnd), kind: line.slice(verbEnd + 1, line.indexOf(' ', verbEnd + 1)) };
}

/** Previous line x's text. */
function lineOf(m: Matched, x: number): string {
  const y = m.opOf[x]!;
  return y >= 0 ? m.printed.bare(y) : m.read[x]!;
}

/**
 * The previous text's lines: their groups, the operation each kept one is, the text of the
 * others; and the groups of the lines the changes delete or insert (`changed`). A line the
 * changes keep is its new operation's printed line, in its group; a deleted one is grouped by
 * reading it (undefined when it cannot be). Without changes (the texts too far apart to
 * align) every line is read.
 */
function groupPrevious(a: TextLines, changes: readonly Change[] | undefined, head: string, opGroups: readonly GroupKey[]): { groups: GroupKey[]; opOf: Int32Array; read: string[]; changed: Set<GroupKey> } | undefined {
  const groups: GroupKey[] = new Array(a.count);
  const opOf = new Int32Array(a.count).fill(-1);
  const read: string[] = new Array(a.count);
  const changed = new Set<GroupKey>();
  let c = 0;
  for (let x = 0, y = 0; x < a.count; ) {
    const ch = changes?.[c];
    if (ch?.op === 'insert' && ch.x === x) {
      changed.add(opGroups[y++]!);
      c++;
    } else if (changes === undefined || (ch?.op === 'delete' && ch.x === x)) {
      const line = a.bare(x);
      const g = groupOfLine(line, head);
      if (g === undefined) return undefined;
      read[x] = line;
      groups[x] = g;
      if (g !== '') changed.add(g);
      x++;
      if (changes !== undefined) c++;
    } else {
      opOf[x] = y;
      groups[x] = opGroups[y]!;
      x++;
      y++;
    }
  }
  // Inserts after the last previous line.
  for (; changes !== undefined && c < changes.length; c++) changed.add(opGroups[changes[c]!.y]!);
  return { groups, opOf, read, changed };
}

/** The previous text's differing groups read as one text (the table's lines first), or undefined when the reader refuses it. */
function readDiffering(m: Matched, family: NftFamily, table: string): NftState | undefined {
  const kept: string[] = [];
  for (let i = 0; i < m.groups.length; i++) {
    const g = m.groups[i]!;
    if (g === 't' || m.differ.has(g)) kept.push(lineOf(m, i));
  }
  try {
    return readTransaction(kept.join('\n'), family, table);
  } catch {
    return undefined;
  }
}

/** The new transaction's operations of the differing groups (and the table's), applied. */
function applyDiffering(m: Matched, next: NftTransaction): NftState {
  const tx = new NftTransaction(next.family, next.table);
  for (let i = 0; i < m.ops.length; i++) {
    const g = m.opGroups[i]!;
    if (g === 't' || m.differ.has(g)) tx.ops.push(m.ops[i]!);
  }
  return applyTransaction(emptyState(next.family, next.table), tx);
}

/**
 * Only the objects whose groups differ, on both sides (see the file comment), or undefined.
 * Also undefined when a set or map is declared otherwise: the delta then rewrites every chain
 * that names it, differing or not, so it needs the whole states.
 */
export function readChangedTransactions(previous: string, next: NftTransaction): { before: NftState; after: NftState } | undefined {
  const m = matchGroups(previous, next);
  if (!m) return undefined;
  const before = readDiffering(m, next.family, next.table);
  if (!before) return undefined;
  const after = applyDiffering(m, next);
  for (const [name, s] of after.sets) {
    const prev = before.sets.get(name);
    if (prev && !sameSetDeclaration(prev, s)) return undefined;
  }
  return { before, after };
}

/**
 * The whole previous state (see the file comment), or undefined. `nextState` is the new
 * transaction applied to an empty table: an object whose group is equal on both sides is its.
 */
export function readPreviousBeside(previous: string, next: NftTransaction, nextState: NftState): NftState | undefined {
  const m = matchGroups(previous, next);
  if (!m) return undefined;
  const differing = readDiffering(m, next.family, next.table);
  if (!differing) return undefined;
  // The order objects are made in (what the whole reader's maps iterate in): an add of an
  // absent object puts it last, a delete takes it out.
  const order = new Map<GroupKey, true>();
  for (let i = 0; i < m.groups.length; i++) {
    const g = m.groups[i]!;
    if (g === '' || g === 't') continue;
    const { verb, kind } = commandOf(m, i);
    if (kind === 'rule' || kind === 'element') continue;
    if (verb === 'add') {
      if (!order.has(g)) order.set(g, true);
    } else if (verb === 'delete') order.delete(g);
  }
  const state = emptyState(next.family, next.table);
  state.exists = differing.exists;
  if (differing.comment !== undefined) state.comment = differing.comment;
  for (const g of order.keys()) {
    const name = g.slice(2);
    const from = m.differ.has(g) ? differing : nextState;
    if (g.startsWith('c:')) {
      const c = from.chains.get(name);
      if (!c) return undefined;
      state.chains.set(name, c);
    } else if (g.startsWith('s:')) {
      const s = from.sets.get(name);
      if (!s) return undefined;
      state.sets.set(name, s);
    } else {
      if (!from.counters.has(name)) return undefined;
      state.counters.add(name);
    }
  }
  return state;
}

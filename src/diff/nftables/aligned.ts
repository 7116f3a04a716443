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
 *   readBeside               the whole previous and new states, each object made when
 *                            asked for, the equal ones being the new state's on both sides
 *                            (the same objects: consumers skip them by identity).
 * Both give what reading the text whole (readTransaction) gives, in the same order of objects.
 * The new transaction is given as compile prints it (line i is operation i) with what each
 * operation does and names (named.ts), not as its operations: its objects are read from their
 * groups' lines too, when asked for.
 * The texts are aligned as lines first (text-lines.ts): a previous line the alignment pairs
 * with a new one is that operation's line, in its group, and is never read; the others must
 * be lines `add|flush|delete KIND FAMILY TABLE [NAME …]` of the table asked for, with a plain
 * name. The table lines must be the new text's (blank and comment lines are skipped, as the
 * whole reader does); any other text, a group the reader refuses (its line
 * numbers would be the group's), or (for the delta) a set or map declared otherwise gives
 * undefined, and the caller reads the text whole, errors included. They never throw (but for a
 * refusal of kpc's own printed lines, a bug).
 */

import { emptyState, NFT_NAME, readTransaction, sameSetDeclaration, type NftState, type NftStateView, type StateObjects } from '../../lang/nftables/index.js';
import type { Change } from '../sequence.js';
import { Class, type RecordedOperations } from './named.js';
import { lineChanges, TextLines, type LineText } from '../text-lines.js';

/**
 * An object's group, as a number: TABLE_GROUP for the table's, SKIPPED for a line the whole
 * reader skips (blank, comment), else one per class (chain, set or map, counter) and name.
 */
type Group = number;
const SKIPPED = -1;
/** An operation not numbered: its object is named by no changed line, so it is the same on both sides (numberChanged). */
const UNCHANGED = -2;
const TABLE_GROUP = 0;

const KIND_CLASS: Readonly<Record<string, Class>> = { chain: Class.Chain, rule: Class.Chain, set: Class.Set, map: Class.Set, element: Class.Set, counter: Class.Counter };
const VERBS = new Set(['add', 'flush', 'delete']);

/**
 * The groups of both texts, numbered by class and object name. The names are the strings the
 * operations already hold, so numbering 210,000 operations makes no string.
 */
class Groups {
  private readonly byName = [new Map<string, Group>(), new Map<string, Group>(), new Map<string, Group>(), new Map<string, Group>()];
  /** Group g's class and object name. */
  readonly classes: Class[] = [Class.Table];
  readonly names: string[] = [''];

  /**
   * Per class, the last group asked for: a chain's rules come one after the other, between
   * the elements its port adds to the shared maps.
   */
  private readonly lastName: Array<string | undefined> = [undefined, undefined, undefined, undefined];
  private readonly last: Group[] = [TABLE_GROUP, TABLE_GROUP, TABLE_GROUP, TABLE_GROUP];

  of(cls: Class, name: string): Group {
    if (cls === Class.Table) return TABLE_GROUP;
    if (name === this.lastName[cls]) return this.last[cls]!;
    const byName = this.byName[cls]!;
    let g = byName.get(name);
    if (g === undefined) {
      g = this.names.length;
      byName.set(name, g);
      this.names.push(name);
      this.classes.push(cls);
    }
    this.lastName[cls] = name;
    this.last[cls] = g;
    return g;
  }

  /** The group of a chain, set or counter named `name`, if some line names it. */
  find(cls: Class, name: string): Group | undefined {
    return this.byName[cls]!.get(name);
  }

  /** The group of operation i of `next`. */
  ofOperation(next: RecordedOperations, i: number): Group {
    return this.of(next.classAt(i), next.nameAt(i));
  }

  /** A previous line's group, SKIPPED for a line the whole reader skips, undefined for one left to it. */
  ofLine(line: string, head: string): Group | undefined {
    if (line === '' || line.startsWith('#')) return SKIPPED;
    const verbEnd = line.indexOf(' ');
    const kindEnd = verbEnd < 0 ? -1 : line.indexOf(' ', verbEnd + 1);
    if (kindEnd < 0 || !VERBS.has(line.slice(0, verbEnd)) || !line.startsWith(head, kindEnd)) return undefined;
    const kind = line.slice(verbEnd + 1, kindEnd);
    const at = kindEnd + head.length;
    if (kind === 'table') return at === line.length || line.charCodeAt(at) === 32 ? TABLE_GROUP : undefined;
    const cls = KIND_CLASS[kind];
    if (cls === undefined || line.charCodeAt(at) !== 32) return undefined;
    const end = line.indexOf(' ', at + 1);
    const name = line.slice(at + 1, end < 0 ? line.length : end);
    return NFT_NAME.test(name) ? this.of(cls, name) : undefined;
  }
}

/** What both texts' groups are, and which differ. */
interface Matched {
  /** The groups' numbers. */
  ids: Groups;
  /** The previous text's lines: each one's group (SKIPPED for skipped lines), and its text (lineOf). */
  groups: Int32Array;
  /** Per previous line, the new operation the alignment pairs it with (its text and meaning), or -1. */
  opOf: Int32Array;
  /** The text of each previous line not paired with an operation (the others are holes). */
  read: string[];
  /** The new transaction's text: line i is operation i. */
  printed: TextLines;
  /** The new transaction's operations (what each names) and their groups (UNCHANGED for those not numbered). */
  next: RecordedOperations;
  opGroups: Int32Array;
  /** Groups whose lines differ (or are in one text only). */
  differ: Set<Group>;
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

/**
 * `printed` is the new transaction's text (line i is operation i of `next`). `everyGroup`:
 * number every operation's group (readBeside makes the whole states from them); else only the
 * groups the changed lines name are numbered and every other operation is UNCHANGED
 * (readChangedTransactions looks at nothing else: see numberChanged).
 */
function matchGroups(previous: LineText, printed: LineText, next: RecordedOperations, everyGroup: boolean): Matched | undefined {
  const ids = new Groups();
  const head = ` ${next.family} ${next.table}`;
  const a = new TextLines(previous);
  const b = new TextLines(printed);
  // An operation printed on more than one line would put the lines out of step.
  if (b.count !== next.count) return undefined;
  // Aligned, a previous line paired with a new one is that operation's line (same text, same
  // group); only the others are read. Too far apart, every line is read and every group compared.
  const changes = lineChanges(a, b, MAX_ALIGNED_EDITS);
  const opGroups = everyGroup || changes === undefined ? numberEvery(next, ids) : numberChanged(next, a, changes, head, ids);
  if (!opGroups) return undefined;
  const p = groupPrevious(a, changes, head, opGroups, ids);
  if (!p) return undefined;
  // Only groups with a line the two texts do not share can differ: a group whose every line
  // pairs with an equal line of the other text, in order, has the same lines on both sides.
  // Those (and the table's) are compared; all of them when the texts are too far apart.
  const compared = (g: Group) => g !== UNCHANGED && (changes === undefined || g === TABLE_GROUP || p.changed.has(g));
  const before = new Map<Group, string[]>();
  const m: Matched = { ids, groups: p.groups, opOf: p.opOf, read: p.read, printed: b, next, opGroups, differ: new Set<Group>() };
  for (let i = 0; i < p.groups.length; i++) {
    const g = p.groups[i]!;
    if (g !== SKIPPED && compared(g)) (before.get(g) ?? before.set(g, []).get(g)!).push(lineOf(m, i));
  }
  const after = new Map<Group, string[]>();
  for (let i = 0; i < next.count; i++) {
    const g = opGroups[i]!;
    if (compared(g)) (after.get(g) ?? after.set(g, []).get(g)!).push(b.bare(i));
  }
  // The table's lines decide what the whole text leaves (a delete or flush of it clears all).
  if (!sameLines(before.get(TABLE_GROUP), after.get(TABLE_GROUP)) || after.get(TABLE_GROUP)!.some((l) => !l.startsWith('add '))) return undefined;
  for (const [g, l] of before) if (!sameLines(l, after.get(g))) m.differ.add(g);
  for (const g of after.keys()) if (!before.has(g)) m.differ.add(g);
  return m;
}

/** Every operation's group. */
function numberEvery(next: RecordedOperations, ids: Groups): Int32Array {
  const opGroups = new Int32Array(next.count);
  for (let i = 0; i < next.count; i++) opGroups[i] = ids.ofOperation(next, i);
  return opGroups;
}

/**
 * The groups of the operations whose objects a changed line names (an inserted line's
 * operation, a deleted line read: undefined when one cannot be), the table's, and UNCHANGED
 * for every other operation. An object no changed line names has the same lines on both
 * sides, so the delta never looks at it; numbering only the few that may differ spares a
 * lookup among 60,000 names per operation (210,000 at 20,000 Services). `ids` is empty when
 * called, so the groups it holds after the changed lines are numbered are those lines'.
 */
function numberChanged(next: RecordedOperations, a: TextLines, changes: readonly Change[], head: string, ids: Groups): Int32Array | undefined {
  for (const ch of changes) {
    const g = ch.op === 'insert' ? ids.ofOperation(next, ch.y) : ids.ofLine(a.bare(ch.x), head);
    if (g === undefined) return undefined;
  }
  const opGroups = new Int32Array(next.count);
  for (let i = 0; i < next.count; i++) {
    const cls = next.classAt(i);
    opGroups[i] = cls === Class.Table ? TABLE_GROUP : ids.find(cls, next.nameAt(i)) ?? UNCHANGED;
  }
  return opGroups;
}

/** Previous line x's verb and kind: its operation's when paired, else its first two words. */
function commandOf(m: Matched, x: number): { verb: string; kind: string } {
  const y = m.opOf[x]!;
  if (y >= 0) return { verb: m.next.verbAt(y), kind: m.next.kindAt(y) };
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
function groupPrevious(a: TextLines, changes: readonly Change[] | undefined, head: string, opGroups: Int32Array, ids: Groups): { groups: Int32Array; opOf: Int32Array; read: string[]; changed: Set<Group> } | undefined {
  const groups = new Int32Array(a.count);
  const opOf = new Int32Array(a.count).fill(-1);
  const read: string[] = new Array(a.count);
  const changed = new Set<Group>();
  let c = 0;
  for (let x = 0, y = 0; x < a.count; ) {
    const ch = changes?.[c];
    if (ch?.op === 'insert' && ch.x === x) {
      changed.add(opGroups[y++]!);
      c++;
    } else if (changes === undefined || (ch?.op === 'delete' && ch.x === x)) {
      const line = a.bare(x);
      const g = ids.ofLine(line, head);
      if (g === undefined) return undefined;
      read[x] = line;
      groups[x] = g;
      if (g !== SKIPPED) changed.add(g);
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

/**
 * One text's lines of the differing groups (and the table's) read as one text, or undefined
 * when the reader refuses them: line i's group is groups[i], its text line(i). The previous
 * text's (previousDiffering) and the new one's (newDiffering) are read alike.
 */
function readDiffering(m: Matched, groups: Int32Array, line: (i: number) => string): NftState | undefined {
  const kept: string[] = [];
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!;
    if (g === TABLE_GROUP || m.differ.has(g)) kept.push(line(i));
  }
  try {
    return readTransaction(kept.join('\n'), m.next.family, m.next.table);
  } catch {
    return undefined;
  }
}

const previousDiffering = (m: Matched) => readDiffering(m, m.groups, (i) => lineOf(m, i));
const newDiffering = (m: Matched) => readDiffering(m, m.opGroups, (i) => m.printed.bare(i));

/**
 * Only the objects whose groups differ, on both sides (see the file comment), or undefined.
 * The new transaction is its printed text (line i is operation i of `next`), the differing
 * groups' lines read as the previous ones are. Also undefined when a set or map is declared
 * otherwise: the delta then rewrites every chain that names it, differing or not, so it needs
 * the whole states.
 */
export function readChangedTransactions(previous: LineText, printed: LineText, next: RecordedOperations): { before: NftState; after: NftState } | undefined {
  const m = matchGroups(previous, printed, next, false);
  if (!m) return undefined;
  const before = previousDiffering(m);
  if (!before) return undefined;
  const after = newDiffering(m);
  if (!after) return undefined;
  for (const [name, s] of after.sets) {
    const prev = before.sets.get(name);
    if (prev && !sameSetDeclaration(prev, s)) return undefined;
  }
  return { before, after };
}

/**
 * A state's chains or sets by name, each made when first asked for and the same object after:
 * the report of one changed Service reads a few of 60,000. Listed whole (values, entries),
 * every one is made, in the order the whole reader's map holds them.
 */
class LazyObjects<T> implements StateObjects<T> {
  private readonly made = new Map<string, T>();
  private readonly names: string[] = [];
  /** Per group: 1 when its object is in the state (a Set of every name took 0.43 s to make at 100,000 Services). */
  private readonly present: Uint8Array;

  /** The objects of class `cls` among `groups` (in the state's order), group g's made by make(g, name). */
  constructor(
    private readonly ids: Groups,
    private readonly cls: Class,
    groups: readonly Group[],
    private readonly make: (g: Group, name: string) => T,
  ) {
    this.present = new Uint8Array(ids.names.length);
    for (const g of groups) {
      if (ids.classes[g] !== cls) continue;
      this.present[g] = 1;
      this.names.push(ids.names[g]!);
    }
  }

  /** The group of the object named `name` in the state, if it is there. */
  private groupOf(name: string): Group | undefined {
    const g = this.ids.find(this.cls, name);
    return g !== undefined && this.present[g] === 1 ? g : undefined;
  }

  get size(): number {
    return this.names.length;
  }

  has(name: string): boolean {
    return this.groupOf(name) !== undefined;
  }

  get(name: string): T | undefined {
    let o = this.made.get(name);
    if (o === undefined) {
      const g = this.groupOf(name);
      if (g === undefined) return undefined;
      o = this.make(g, name);
      this.made.set(name, o);
    }
    return o;
  }

  keys(): Iterable<string> {
    return this.names;
  }

  *values(): IterableIterator<T> {
    for (const name of this.names) yield this.get(name)!;
  }

  *[Symbol.iterator](): IterableIterator<[string, T]> {
    for (const name of this.names) yield [name, this.get(name)!];
  }
}

/**
 * The groups whose objects a text leaves, in the order it makes them (what the whole reader's
 * maps iterate in): an add of an absent object puts it last, a delete takes it out. `command`
 * gives line (or operation) i's group, verb and kind, or undefined for one that makes nothing.
 */
function madeOrder(groups: number, count: number, command: (i: number) => { g: Group; verb: string; kind: string } | undefined): Group[] {
  // A Map's order (an add of an absent key goes last, a delete takes it out), over the dense
  // group numbers: each group's place in `order`, or -1; a deleted one's place is left -1.
  const at = new Int32Array(groups).fill(-1);
  const order: Group[] = [];
  for (let i = 0; i < count; i++) {
    const c = command(i);
    if (c === undefined || c.kind === 'rule' || c.kind === 'element') continue;
    if (c.verb === 'add') {
      if (at[c.g]! < 0) {
        at[c.g] = order.length;
        order.push(c.g);
      }
    } else if (c.verb === 'delete' && at[c.g]! >= 0) {
      order[at[c.g]!] = -1;
      at[c.g] = -1;
    }
  }
  return order.filter((g) => g >= 0);
}

/** The names of the groups of class `cls` among `groups`. */
function namesOf(m: Matched, groups: readonly Group[], cls: Class): string[] {
  return groups.filter((g) => m.ids.classes[g] === cls).map((g) => m.ids.names[g]!);
}

/**
 * The new transaction's state, each chain and set read from its group's printed lines when
 * first asked for: an object's final state is its group's operations applied in order (the
 * file comment), and the table's operations are adds only (matchGroups), which touch no object.
 */
function lazyNewState(m: Matched): NftStateView {
  const { family, count } = m.next;
  // The operations of each group, in order: a counting sort of their group numbers.
  const n = m.ids.names.length;
  const starts = new Int32Array(n + 1);
  for (let i = 0; i < m.opGroups.length; i++) starts[m.opGroups[i]! + 1]!++;
  for (let g = 0; g < n; g++) starts[g + 1]! += starts[g]!;
  const at = starts.slice(0, n);
  const opsOf = new Int32Array(count);
  for (let i = 0; i < count; i++) opsOf[at[m.opGroups[i]!]!++] = i;
  // kpc's own lines, which the reader takes (a refusal would be kpc's bug, and is thrown).
  const applied = (g: Group): NftState => {
    const lines: string[] = [];
    for (let k = starts[g]!; k < starts[g + 1]!; k++) lines.push(m.printed.bare(opsOf[k]!));
    return readTransaction(lines.join('\n'), family, m.next.table);
  };
  const order = madeOrder(n, count, (i) => ({ g: m.opGroups[i]!, verb: m.next.verbAt(i), kind: m.next.kindAt(i) }));
  const table = applied(TABLE_GROUP);
  return {
    ...table,
    chains: new LazyObjects(m.ids, Class.Chain, order, (g, name) => applied(g).chains.get(name)!),
    sets: new LazyObjects(m.ids, Class.Set, order, (g, name) => applied(g).sets.get(name)!),
    counters: new Set(namesOf(m, order, Class.Counter)),
  };
}

/** Both states of a previous text read beside the new transaction, and the names that may differ. */
export interface Beside {
  before: NftStateView;
  after: NftStateView;
  /** The chains and sets whose groups differ: any other is the same object on both sides. */
  differing: { chains: string[]; sets: string[] };
}

/**
 * The whole previous state and the whole new one (see the file comment), or undefined. Their
 * chains and sets are made when first asked for: an object whose group is equal on both sides
 * is the new state's, the same object in both (consumers skip it by identity); the differing
 * ones are read. At 20,000 Services the report of one changed Service looks at a few of
 * 60,000 objects; applying the whole new transaction (with its 100,000 map elements) took
 * ~150 ms and held their memory through the report.
 */
export function readBeside(previous: LineText, printed: LineText, next: RecordedOperations): Beside | undefined {
  const m = matchGroups(previous, printed, next, true);
  if (!m) return undefined;
  const differing = previousDiffering(m);
  if (!differing) return undefined;
  const after = lazyNewState(m);
  const order = madeOrder(m.ids.names.length, m.groups.length, (i) => {
    const g = m.groups[i]!;
    return g === SKIPPED || g === TABLE_GROUP ? undefined : { g, ...commandOf(m, i) };
  });
  // Every object the previous text leaves is in the differing state (its group differs) or
  // the new one's (its group is the same, so is what it leaves); else the text is read whole.
  const from = (g: Group) => (m.differ.has(g) ? differing : after);
  for (const g of order) {
    const name = m.ids.names[g]!;
    const cls = m.ids.classes[g]!;
    const there = cls === Class.Chain ? from(g).chains.has(name) : cls === Class.Set ? from(g).sets.has(name) : from(g).counters.has(name);
    if (!there) return undefined;
  }
  const before: NftStateView = {
    ...emptyState(next.family, next.table),
    exists: differing.exists,
    ...(differing.comment !== undefined ? { comment: differing.comment } : {}),
    chains: new LazyObjects(m.ids, Class.Chain, order, (g, name) => from(g).chains.get(name)!),
    sets: new LazyObjects(m.ids, Class.Set, order, (g, name) => from(g).sets.get(name)!),
    counters: new Set(namesOf(m, order, Class.Counter)),
  };
  const differ = [...m.differ];
  return { before, after, differing: { chains: namesOf(m, differ, Class.Chain), sets: namesOf(m, differ, Class.Set) } };
}

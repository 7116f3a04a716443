/**
 * A YAML List whose items hold anchors and aliases (hand-written manifests sharing a port list),
 * read item by item as a plain List is (yaml-documents.ts YamlListObjects): the block reader
 * reads every item that holds none, and only the items tied to anchors are read again, in
 * groups, by js-yaml and by the precise `yaml` package (issue 19: fall back per item, not per
 * file).
 *
 * What it gives is what readYAMLMixed (yaml-documents.ts), which has js-yaml read the whole file
 * first, gives — the same values and the same locators — or it gives up (`open` gives undefined,
 * or `take` a failure) and that path decides:
 *
 *   - The possible anchors and aliases (yaml-fast.ts anchorTokens: false alarms included) are
 *     tied to the items holding them, and an alias to the item of the latest anchor of its name
 *     before it, as readListMixed ties them; tokens outside the items, and an alias with no
 *     anchor before it, give up there and here.
 *   - An item tied to none is read by the block reader, or by js-yaml alone when the reader
 *     gives up on it (as YamlListObjects reads it): js-yaml's value in the whole file, spans
 *     included.
 *   - A group's items are read by js-yaml and by the `yaml` package from the group's lines
 *     alone (readPieces: what readListMixed reads), and must agree as JSON, as readListMixed
 *     requires of the `yaml` package's values against js-yaml's of the whole file. The two
 *     js-yaml readings are the same when every anchor of an alias's name before it is in the
 *     alias's group (then the alias names the same anchor in the group's lines as in the whole
 *     document: anchors are document-scoped and an alias names the latest one before it);
 *     when one is not (a name anchored in two items of different groups), `open` gives up.
 */

import type { LazyObjects, ObjectFailure, ReadOutcome } from './json-objects.js';
import { LineIndex } from './lines.js';
import { inheritListType, LIMITS, listItemType, type Locator, type RawObject, type ReadResult } from './raw-objects.js';
import type { BlockList } from './yaml-block.js';
import { anchorTokens, blockListItem, parseItemsFast } from './yaml-fast.js';
import { fastLocator, joinPieces, linePiece, readJoined } from './yaml-precise.js';

/**
 * The List as objects to take one by one, or undefined when its anchors and aliases are not
 * tied to its items as this reader needs (see the module's comment). `fallback` reads the file
 * as if this reader did not exist (readYAMLMixed's path).
 */
export function openAnchoredList(name: string, text: string, list: BlockList, fallback: () => ReadResult): AnchoredListObjects | undefined {
  const groupOf = tieItems(text, list);
  return groupOf && new AnchoredListObjects(name, text, list, groupOf, fallback);
}

/**
 * Each item's group (its index in the groups, each a sorted list of items), -1 for an item tied
 * to no token; undefined to give up.
 */
function tieItems(text: string, list: BlockList): { of: Int32Array; members: number[][] } | undefined {
  const count = list.count;
  if (count === 0) return undefined;
  const first = list.itemRange(0).start;
  const end = list.itemRange(count - 1).end;
  const parent = new Int32Array(count);
  for (let i = 0; i < count; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const tied = new Uint8Array(count);
  const lastAnchor = new Map<string, number>();
  const anchorsOf = new Map<string, number[]>(); // the items of each name's anchors so far
  const aliases: Array<{ item: number; before: number[] }> = [];
  let k = 0;
  for (const tok of anchorTokens(text)) {
    // readListMixed's rule: a token before the first item or after the last gives up.
    if (tok.offset < first || tok.offset >= end) return undefined;
    while (k + 1 < count && list.itemRange(k + 1).start <= tok.offset) k++;
    tied[k] = 1;
    if (tok.alias) {
      const d = lastAnchor.get(tok.name);
      if (d === undefined) return undefined;
      parent[find(k)] = find(d);
      aliases.push({ item: k, before: anchorsOf.get(tok.name)!.slice() });
    } else {
      lastAnchor.set(tok.name, k);
      const items = anchorsOf.get(tok.name);
      if (items) items.push(k);
      else anchorsOf.set(tok.name, [k]);
    }
  }
  // Every anchor of an alias's name before it in the alias's group (see the module's comment).
  for (const a of aliases) for (const d of a.before) if (find(d) !== find(a.item)) return undefined;
  const of = new Int32Array(count).fill(-1);
  const members: number[][] = [];
  const index = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    if (!tied[i]) continue;
    const root = find(i);
    let g = index.get(root);
    if (g === undefined) {
      g = members.length;
      index.set(root, g);
      members.push([]);
    }
    members[g]!.push(i);
    of[i] = g;
  }
  return { of, members };
}

export class AnchoredListObjects implements LazyObjects {
  private readonly lines: LineIndex;
  private readonly type: { kind: string; apiVersion: string } | undefined;
  /** The items of groups read but not taken yet (dropped when taken). */
  private readonly read = new Map<number, { value: object; locate: Locator }>();

  constructor(
    private readonly name: string,
    private readonly text: string,
    private readonly list: BlockList,
    private readonly groups: { of: Int32Array; members: number[][] },
    private readonly fallback: () => ReadResult,
  ) {
    this.lines = new LineIndex(text);
    this.type = listItemType(list.root.kind, list.root.apiVersion);
  }

  get count(): number {
    return this.list.count;
  }

  take(index: number): RawObject | ObjectFailure {
    const g = this.groups.of[index]!;
    if (g >= 0) {
      if (!this.read.has(index) && !this.readGroup(g)) return { failed: 'syntax', index };
      const item = this.read.get(index)!;
      this.read.delete(index);
      inheritListType(item.value, this.type);
      return { value: item.value, origin: { file: this.name, locate: item.locate } };
    }
    const item = blockListItem(this.list, this.text, index, LIMITS);
    if (!item) return { failed: 'syntax', index };
    const { value, spans } = item;
    // readListMixed, the path this one stands for, takes objects only (their spans locate them);
    // a plain List (YamlListObjects) hands any item on to decoding.
    if (value === null || typeof value !== 'object') return { failed: 'syntax', index };
    inheritListType(value, this.type);
    return { value, origin: { file: this.name, locate: fastLocator(this.text, this.lines, { spans }, value) } };
  }

  /**
   * Group `g`'s items from its lines alone: the `yaml` package's values and locators, when
   * js-yaml reads the same lines to the same values (as JSON), each an object of its own.
   */
  private readGroup(g: number): boolean {
    const members = this.groups.members[g]!;
    const pieces = members.map((i) => {
      const r = this.list.itemRange(i);
      return linePiece(this.text, r.start, r.end);
    });
    const joined = joinPieces(this.text, this.lines, pieces);
    const fast = parseItemsFast(joined.text, members.length, LIMITS);
    if (!fast) return false;
    const seen = new Set<object>();
    for (const v of fast.values) {
      if (v === null || typeof v !== 'object' || seen.has(v)) return false;
      seen.add(v);
    }
    const precise = readJoined(joined, true);
    if (!precise || precise.values.length !== members.length) return false;
    for (let m = 0; m < members.length; m++) if (JSON.stringify(precise.values[m]) !== JSON.stringify(fast.values[m])) return false;
    for (let m = 0; m < members.length; m++) this.read.set(members[m]!, { value: precise.values[m] as object, locate: precise.locators[m]! });
    return true;
  }

  /** Read the file as if this reader had given up on it from the start. */
  failure(): ReadOutcome {
    return { read: this.fallback() };
  }

  readAll(): ReadResult {
    const objects: RawObject[] = [];
    for (let i = 0; i < this.count; i++) {
      const object = this.take(i);
      if ('failed' in object) return this.fallback();
      objects.push(object);
    }
    return { objects, diagnostics: [] };
  }
}

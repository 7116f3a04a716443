/**
 * YAML input: a stream of documents (`---`), each an object or a List. Read by a fast path
 * (the block reader, yaml-block.ts, then js-yaml, for plain YAML) or, when a document is not
 * plain (anchors, aliases, merge keys, problems to report), by the `yaml` package, which gives
 * every problem its position (yaml-precise.ts). A List is read item by item, its items with
 * anchors too (yaml-anchored-list.ts).
 *
 * Defences, because manifests may come from anywhere: aliases are expanded with a budget
 * (billion laughs), nesting depth, line length and scalar size are capped, and plain scalars
 * that YAML 1.1 (what kubectl uses) and YAML 1.2 (what this parser uses) read differently are
 * refused rather than guessed.
 */

import { LineIndex } from './lines.js';
import { diagnosticAt, inheritListType, isListObject, LIMITS, listItemType, type Locator, type RawObject, type ReadResult } from './raw-objects.js';
import type { LazyObjects, ObjectFailure, ReadOutcome } from './json-objects.js';
import { openAnchoredList } from './yaml-anchored-list.js';
import { blockDocuments, openYAMLBlock, parseYAMLBlock, type BlockList } from './yaml-block.js';
import { anchorTokens, blockListItem, isCleanValue, mayHoldAnchors, mayHoldDirectives, parseDocumentFast, parseYAMLFast, parseYAMLFastUnchecked, type FastDocument } from './yaml-fast.js';
import { fastLocator, linePiece, lineStartOf, listItemLocator, readPieces, readYAMLPrecisely, splitList } from './yaml-precise.js';
import { append } from '../arrays.js';

/**
 * Above this size only the fast YAML path runs: the precise one needs about 60 times the
 * input in memory and 1 s per MB. A large file that is not plainly clean is refused with
 * the first reason found instead.
 */
const MAX_PRECISE_YAML_BYTES = 32 << 20;

/**
 * A YAML input: a List the block reader reads item by item (yaml-block.ts, openYAMLBlock),
 * or read in full as readYAML reads it.
 */
export function openYAML(name: string, text: string): ReadOutcome {
  const block = openYAMLBlock(text, LIMITS);
  if (block && 'list' in block) return { json: new YamlListObjects(name, text, block.list) };
  if (block) return { read: readYAMLFrom(name, text, block.documents) };
  if (mayHoldAnchors(text) && !mayHoldDirectives(text)) {
    // A List with anchors: item by item too, only the items tied to anchors read precisely.
    const anchored = openYAMLBlock(text, LIMITS, { anchors: true });
    const list = anchored && 'list' in anchored ? openAnchoredList(name, text, anchored.list, () => readYAMLFrom(name, text, undefined)) : undefined;
    if (list) return { json: list };
  }
  return { read: readYAMLFrom(name, text, parseYAMLFast(text, LIMITS)) };
}

/** A YAML List's items, each read by the block reader when taken (see LazyObjects). */
class YamlListObjects implements LazyObjects {
  private readonly lines: LineIndex;
  private readonly type: { kind: string; apiVersion: string } | undefined;

  constructor(
    private readonly name: string,
    private readonly text: string,
    private readonly list: BlockList,
  ) {
    this.lines = new LineIndex(text);
    this.type = listItemType(list.root.kind, list.root.apiVersion);
  }

  get count(): number {
    return this.list.count;
  }

  take(index: number): RawObject | ObjectFailure {
    const item = blockListItem(this.list, this.text, index, LIMITS);
    if (!item) return { failed: 'syntax', index };
    const { value, spans } = item;
    inheritListType(value, this.type);
    const locate = value !== null && typeof value === 'object' ? fastLocator(this.text, this.lines, { spans }, value) : listItemLocator(this.text, this.lines, this.list.itemRange(index));
    return { value, origin: { file: this.name, locate } };
  }

  /** Read the file as if the block reader had given up on it from the start. */
  failure(): ReadOutcome {
    return { read: readYAMLFrom(this.name, this.text, parseYAMLFast(this.text, LIMITS)) };
  }

  readAll(): ReadResult {
    const objects: RawObject[] = [];
    for (let i = 0; i < this.count; i++) {
      const object = this.take(i);
      if ('failed' in object) return (this.failure() as { read: ReadResult }).read;
      objects.push(object);
    }
    return { objects, diagnostics: [] };
  }
}

export function readYAML(name: string, text: string): ReadResult {
  // The block-YAML reader first (kubectl's, Helm's output); js-yaml where it gives up.
  return readYAMLFrom(name, text, parseYAMLBlock(text, LIMITS) ?? parseYAMLFast(text, LIMITS));
}

/** readYAML without the block reader: js-yaml's path alone (the reference the tests compare it with). */
export function readYAMLWithoutBlockReader(name: string, text: string): ReadResult {
  return readYAMLFrom(name, text, parseYAMLFast(text, LIMITS), false);
}

/**
 * readYAML, given what the block reader or js-yaml read (undefined: neither could). `byDocument`:
 * a file with anchors is read document by document (readYAMLMixed), not by js-yaml whole.
 */
function readYAMLFrom(name: string, text: string, fast: FastDocument[] | undefined, byDocument = true): ReadResult {
  if (fast) {
    const objects: RawObject[] = [];
    // One index for the file: each located object counts lines from the nearest checkpoint,
    // not from the start of the file (20,000 located warnings were quadratic).
    const lines = new LineIndex(text);
    for (const doc of fast) {
      if (doc.value === null || doc.value === undefined) continue; // an empty document
      const locatorOf = (obj: unknown): Locator => fastLocator(text, lines, doc, obj);
      if (isListObject(doc.value)) {
        const type = listItemType(doc.value.kind, doc.value.apiVersion);
        for (const item of doc.value.items) {
          inheritListType(item, type);
          objects.push({ value: item, origin: { file: name, locate: locatorOf(item) } });
        }
      } else {
        objects.push({ value: doc.value, origin: { file: name, locate: locatorOf(doc.value) } });
      }
    }
    return { objects, diagnostics: [] };
  }
  // Anchors or aliases somewhere: only the documents (or, in a List, the items) that hold
  // them need the precise path; the rest stays on the fast one.
  if (mayHoldAnchors(text)) {
    const mixed = readYAMLMixed(name, text, byDocument);
    if (mixed) return mixed;
  }
  if (text.length > MAX_PRECISE_YAML_BYTES) {
    return { objects: [], diagnostics: [diagnosticAt(name, 1, 1, `YAML: a file of ${text.length} bytes must be plain YAML (no anchors or aliases, no scalars YAML 1.1 and 1.2 read differently, no syntax errors) for kpc to read it quickly; run kpc validate on a smaller part to see the problem, or use JSON (kubectl get -o json)`)] };
  }
  return readYAMLPrecisely(name, text);
}

/**
 * A file that holds anchors or aliases, read with the precise path only where they are.
 * (A single List at column 0 is first tried item by item, without js-yaml reading the whole
 * text: yaml-anchored-list.ts, which gives what this gives or gives up to this.)
 *
 * js-yaml's reading of the whole text comes first (as on the fast path), giving every document
 * and every List item its span: found document by document (documentsOneByOne, `byDocument`),
 * or by js-yaml over the whole text. The possible anchors and aliases (`&name`, `*name` wherever a
 * node can start; false alarms included) are then tied to the document, or the List item,
 * holding them, and an alias to the item holding the latest anchor of its name before it:
 * items tied together form a group. Each group's lines, and each document that holds
 * anchors outside a List's items, are read again with the `yaml` package, exactly as the
 * precise path reads the whole file (the same options, merge keys, alias budget); their
 * values come from there. Everything else keeps js-yaml's value, as on the fast path.
 *
 * The precise reading must agree with js-yaml's on every value it replaces (as JSON), find
 * no problem, and every other value must be clean; otherwise this gives up (undefined) and
 * the whole file takes the precise path, which then reports every problem with its position.
 * Anchors are document-scoped and an alias names an anchor before it, so a group holds every
 * node its aliases can reach, and the yaml package's per-anchor alias count is the same in
 * the group as in the whole document.
 */
function readYAMLMixed(name: string, text: string, byDocument: boolean): ReadResult | undefined {
  if (mayHoldDirectives(text)) return undefined; // directives: documents are not independent
  const docs = (byDocument ? documentsOneByOne(text) : undefined) ?? parseYAMLFastUnchecked(text, LIMITS);
  if (!docs) return undefined;
  const tokens = anchorTokens(text);
  const lines = new LineIndex(text);
  const objects: RawObject[] = [];
  let t = 0; // next token
  for (const doc of docs) {
    if (doc.value === null || doc.value === undefined) continue;
    if (typeof doc.value !== 'object') return undefined;
    const span = doc.spans.get(doc.value);
    if (!span) return undefined;
    // Tokens before this document (between documents, in comments): give up.
    if (t < tokens.length && tokens[t]!.offset < span.start) return undefined;
    let u = t;
    while (u < tokens.length && tokens[u]!.offset < span.end) u++;
    const mine = tokens.slice(t, u);
    t = u;
    const located = (obj: object): Locator => fastLocator(text, lines, doc, obj);
    if (mine.length === 0) {
      if (!isCleanValue(doc.value, LIMITS.maxScalarBytes)) return undefined;
      pushFast(objects, name, doc.value, located);
      continue;
    }
    if (isListObject(doc.value)) {
      const listed = readListMixed(name, text, lines, doc, doc.value, span, mine, located);
      if (!listed) return undefined;
      for (const o of listed) objects.push(o);
      continue;
    }
    // A document holding anchors outside a List: the whole document, precisely.
    const piece = linePiece(text, span.start, span.end);
    const precise = readPieces(text, lines, [piece], false);
    if (!precise || JSON.stringify(precise.values[0]) !== JSON.stringify(doc.value)) return undefined;
    append(objects, splitList(precise.values[0], name, precise.locators[0]!));
  }
  if (t < tokens.length) return undefined; // tokens after the last document
  return { objects, diagnostics: [] };
}

/**
 * The documents js-yaml reads in the whole text (parseYAMLFastUnchecked), found document by
 * document: the block reader's where it reads one (what js-yaml builds: yaml-block.ts), js-yaml's
 * of the document's lines alone where it gives up (the documents holding anchors, for one).
 * Undefined when the stream cannot be cut into documents so (see blockDocuments) or js-yaml
 * refuses a document: js-yaml then reads the whole text.
 */
function documentsOneByOne(text: string): FastDocument[] | undefined {
  const pieces = blockDocuments(text, LIMITS);
  if (!pieces) return undefined;
  const docs: FastDocument[] = [];
  for (const p of pieces) {
    const doc = p.doc === undefined ? parseDocumentFast(text, p.start, p.end, LIMITS) : p.doc;
    if (doc === undefined) return undefined;
    if (doc !== null) docs.push(doc);
  }
  return docs;
}

/** A List's items: those tied to anchors precisely (in groups), the others as js-yaml read them. */
function readListMixed(
  name: string,
  text: string,
  lines: LineIndex,
  doc: FastDocument,
  list: { kind: string; apiVersion?: unknown; items: unknown[] },
  span: { start: number; end: number },
  tokens: Array<{ offset: number; alias: boolean; name: string }>,
  located: (obj: object) => Locator,
): RawObject[] | undefined {
  const items = list.items;
  const starts: number[] = [];
  const seen = new Set<object>();
  for (const item of items) {
    if (item === null || typeof item !== 'object' || seen.has(item)) return undefined;
    seen.add(item);
    const s = doc.spans.get(item);
    if (!s || (starts.length > 0 && s.start <= starts[starts.length - 1]!)) return undefined;
    starts.push(s.start);
  }
  if (items.length === 0) return undefined;
  const lastEnd = doc.spans.get(items[items.length - 1] as object)!.end;
  // Each token's item; tokens outside the items (the List's own fields) give up.
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const tied = new Set<number>();
  const lastAnchor = new Map<string, number>();
  let k = 0;
  for (const tok of tokens) {
    if (tok.offset < starts[0]! || tok.offset >= lastEnd) return undefined;
    while (k + 1 < starts.length && starts[k + 1]! <= tok.offset) k++;
    tied.add(k);
    if (tok.alias) {
      const d = lastAnchor.get(tok.name);
      if (d === undefined) return undefined; // an alias before its anchor (or a false alarm): precisely, all of it
      parent[find(k)] = find(d);
    } else {
      lastAnchor.set(tok.name, k);
    }
  }
  for (let i = 0; i < items.length; i++) if (!tied.has(i) && !isCleanValue(items[i], LIMITS.maxScalarBytes)) return undefined;
  // The groups, each read precisely as one sequence of its items' lines.
  const groups = new Map<number, number[]>();
  for (const i of [...tied].sort((a, b) => a - b)) {
    const root = find(i);
    const g = groups.get(root);
    if (g) g.push(i);
    else groups.set(root, [i]);
  }
  const replaced = new Map<number, { value: unknown; locate: Locator }>();
  for (const members of groups.values()) {
    const pieces = members.map((i) => linePiece(text, starts[i]!, i + 1 < starts.length ? lineStartOf(text, starts[i + 1]!) : lastEnd));
    const precise = readPieces(text, lines, pieces, true);
    if (!precise || precise.values.length !== members.length) return undefined;
    for (let m = 0; m < members.length; m++) {
      if (JSON.stringify(precise.values[m]) !== JSON.stringify(items[members[m]!])) return undefined;
      replaced.set(members[m]!, { value: precise.values[m], locate: precise.locators[m]! });
    }
  }
  const type = listItemType(list.kind, list.apiVersion);
  const out: RawObject[] = [];
  for (let i = 0; i < items.length; i++) {
    const r = replaced.get(i);
    const value = r ? r.value : items[i];
    inheritListType(value, type);
    out.push({ value, origin: { file: name, locate: r ? r.locate : located(items[i] as object) } });
  }
  return out;
}

function pushFast(objects: RawObject[], name: string, value: object, located: (obj: object) => Locator): void {
  if (isListObject(value)) {
    const type = listItemType(value.kind, value.apiVersion);
    for (const item of value.items) {
      inheritListType(item, type);
      objects.push({ value: item, origin: { file: name, locate: item !== null && typeof item === 'object' ? located(item) : () => ({ line: 1, column: 1 }) } });
    }
  } else {
    objects.push({ value, origin: { file: name, locate: located(value) } });
  }
}


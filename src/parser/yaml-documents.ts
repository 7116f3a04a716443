/**
 * YAML input: a stream of documents (`---`), each an object or a List. Read by a fast path
 * (js-yaml, for plain YAML) or, when a document is not plain (anchors, aliases, merge keys,
 * problems to report), by the `yaml` package, which gives every problem its position.
 *
 * Defences, because manifests may come from anywhere: aliases are expanded with a budget
 * (billion laughs), nesting depth, line length and scalar size are capped, and plain scalars
 * that YAML 1.1 (what kubectl uses) and YAML 1.2 (what this parser uses) read differently are
 * refused rather than guessed.
 */

import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar, type Document, type Node as YamlNode } from 'yaml';
import type { Diagnostic, FieldPath } from '../diagnostics.js';
import { LineIndex } from './lines.js';
import { DEPTH_MESSAGE, diagnosticAt, inheritListType, isListObject, LIMITS, listItemType, type Locator, type RawObject, type ReadResult } from './raw-objects.js';
import { yaml11Reading } from './yaml-ambiguity.js';
import type { LazyObjects, ObjectFailure, ReadOutcome } from './json-objects.js';
import { openYAMLBlock, parseYAMLBlock, type BlockList } from './yaml-block.js';
import { anchorTokens, isCleanValue, mayHoldAnchors, objectText, parseYAMLFast, parseYAMLFastUnchecked, type FastDocument } from './yaml-fast.js';

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
  return { read: readYAMLFrom(name, text, block ? block.documents : parseYAMLFast(text, LIMITS)) };
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
    let value = this.list.item(index);
    let spans = this.list.spans;
    if (value === undefined) {
      // The block reader gave up on this item: js-yaml reads the item's lines alone.
      const alone = this.itemByJsYaml(index);
      if (!alone) return { failed: 'syntax', index };
      ({ value, spans } = alone);
    }
    inheritListType(value, this.type);
    return { value, origin: { file: this.name, locate: fastLocator(this.text, this.lines, { spans }, value) } };
  }

  /**
   * Item `index` as js-yaml reads it in the whole text (the fast path), from its lines alone:
   * they are a sequence at column 0 of one item, read as the List's sequence reads it (the
   * same indentation; the item ends where the next line at column 0 starts, which is where
   * its lines end). It is one level less deep alone, so the depth limit is one less; its span
   * is shifted by where its lines start. Undefined when js-yaml refuses the lines or the item
   * is not clean: the whole file is then not clean for the fast path either.
   */
  private itemByJsYaml(index: number): { value: unknown; spans: FastDocument['spans'] } | undefined {
    const { start, end } = this.list.itemRange(index);
    const docs = parseYAMLFastUnchecked(this.text.slice(start, end), { maxDepth: LIMITS.maxDepth - 1, maxScalarBytes: LIMITS.maxScalarBytes });
    if (!docs || docs.length !== 1 || !Array.isArray(docs[0]!.value) || docs[0]!.value.length !== 1) return undefined;
    const value: unknown = docs[0]!.value[0];
    if (!isCleanValue(value, LIMITS.maxScalarBytes)) return undefined;
    const spans = new WeakMap<object, { start: number; end: number }>();
    const span = value !== null && typeof value === 'object' ? docs[0]!.spans.get(value) : undefined;
    if (span) spans.set(value as object, { start: span.start + start, end: span.end + start });
    return { value, spans };
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

/** readYAML as it was before the block reader: js-yaml's path alone (for tests that compare the two). */
export function readYAMLWithoutBlockReader(name: string, text: string): ReadResult {
  return readYAMLFrom(name, text, parseYAMLFast(text, LIMITS));
}

/** readYAML, given what the block reader or js-yaml read (undefined: neither could). */
function readYAMLFrom(name: string, text: string, fast: FastDocument[] | undefined): ReadResult {
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
    const mixed = readYAMLMixed(name, text);
    if (mixed) return mixed;
  }
  if (text.length > MAX_PRECISE_YAML_BYTES) {
    return { objects: [], diagnostics: [diagnosticAt(name, 1, 1, `YAML: a file of ${text.length} bytes must be plain YAML (no anchors or aliases, no scalars YAML 1.1 and 1.2 read differently, no syntax errors) for kpc to read it quickly; run kpc validate on a smaller part to see the problem, or use JSON (kubectl get -o json)`)] };
  }
  return readYAMLPrecisely(name, text);
}

/** The options of every precise parse (readYAMLPrecisely and the pieces of readYAMLMixed). */
const PRECISE_OPTIONS = { prettyErrors: false, uniqueKeys: false, merge: true, stringKeys: true, version: '1.2' } as const;

/** A piece of the file, whole lines, re-read precisely: its offset and its first line. */
interface Piece {
  start: number;
  end: number;
}

/**
 * A file that holds anchors or aliases, read with the precise path only where they are.
 *
 * js-yaml reads the whole text first (as the fast path does), giving every document and
 * every List item its span. The possible anchors and aliases (`&name`, `*name` wherever a
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
function readYAMLMixed(name: string, text: string): ReadResult | undefined {
  if (/^%/m.test(text)) return undefined; // directives: documents are not independent
  const docs = parseYAMLFastUnchecked(text, LIMITS);
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
    objects.push(...splitList(precise.values[0], name, precise.locators[0]!));
  }
  if (t < tokens.length) return undefined; // tokens after the last document
  return { objects, diagnostics: [] };
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

/** The fast path's locator: the object's own text parsed again on first use. */
function fastLocator(text: string, lines: LineIndex, doc: Pick<FastDocument, 'spans'>, obj: unknown): Locator {
  const span = obj !== null && typeof obj === 'object' ? doc.spans.get(obj) : undefined;
  if (!span) return () => ({ line: 1, column: 1 });
  let located: Locator | undefined;
  return (path) => {
    if (!located) {
      const piece = objectText(text, span, lines);
      located = yamlLocator(() => piece.text, { line: piece.firstLine, column: 1 });
    }
    return located(path);
  };
}

function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** The whole lines from the one holding `start` up to `end` (cut back to a line start when only blanks follow it). */
function linePiece(text: string, start: number, end: number): Piece {
  const from = lineStartOf(text, start);
  const lastLine = lineStartOf(text, end);
  const to = lastLine > from && /^[ \t]*$/.test(text.slice(lastLine, end)) ? lastLine : end;
  return { start: from, end: to };
}

/**
 * Pieces of the file read precisely as one document: as a sequence of the pieces (`seq`, each
 * a List item's `- ` lines) or as the one piece's document. Undefined on any problem.
 */
function readPieces(text: string, lines: LineIndex, pieces: Piece[], seq: boolean): { values: unknown[]; locators: Locator[] } | undefined {
  let joined = '';
  const pieceLine: Array<{ at: number; fileLine: number }> = []; // the joined text's line `at` is the file's `fileLine`
  let lineCount = 1;
  for (const p of pieces) {
    let body = text.slice(p.start, p.end);
    if (!body.endsWith('\n')) body += '\n';
    pieceLine.push({ at: lineCount, fileLine: lines.at(p.start).line });
    joined += body;
    for (let i = body.indexOf('\n'); i >= 0; i = body.indexOf('\n', i + 1)) lineCount++;
  }
  const lc = new LineCounter();
  let parsed: Document.Parsed[];
  try {
    const r = parseAllDocuments(joined, { lineCounter: lc, ...PRECISE_OPTIONS });
    parsed = Array.isArray(r) ? r : [];
  } catch {
    return undefined;
  }
  if (parsed.length !== 1) return undefined;
  const doc = parsed[0]!;
  if (doc.errors.length > 0 || doc.warnings.length > 0 || doc.contents === null) return undefined;
  if (checkNodes(doc.contents as YamlNode, [], 0).length > 0) return undefined;
  if (seq && (!isSeq(doc.contents) || doc.contents.items.length !== pieces.length)) return undefined;
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: LIMITS.maxAliasCount });
  } catch {
    return undefined;
  }
  const toFile = (p: { line: number; column: number }) => {
    let k = 0;
    while (k + 1 < pieceLine.length && pieceLine[k + 1]!.at <= p.line) k++;
    return { line: pieceLine[k]!.fileLine + p.line - pieceLine[k]!.at, column: p.column };
  };
  if (!seq) return { values: [value], locators: [(path) => toFile(locateInDocument(doc, lc, path))] };
  if (!Array.isArray(value) || value.length !== pieces.length) return undefined;
  return { values: value, locators: value.map((_, m) => (path: FieldPath) => toFile(locateInDocument(doc, lc, [m, ...path]))) };
}

/** The precise path: the `yaml` package, every problem with its position. */
function readYAMLPrecisely(name: string, text: string): ReadResult {
  const lc = new LineCounter();
  const diagnostics: Diagnostic[] = [];
  const objects: RawObject[] = [];
  let docs: Document.Parsed[];
  try {
    // Duplicate keys are found by checkNodes (with their field path); `<<` merge keys are
    // resolved as kubectl's YAML reader (go-yaml, YAML 1.1) resolves them.
    const parsed = parseAllDocuments(text, { lineCounter: lc, ...PRECISE_OPTIONS });
    docs = Array.isArray(parsed) ? parsed : [];
  } catch (e) {
    // The parser recurses; hostile nesting can exhaust the stack before our depth check runs.
    const why = e instanceof RangeError ? `nesting is too deep to parse; no Kubernetes object is deeper than ${LIMITS.maxDepth} levels` : `cannot parse: ${(e as Error).message}`;
    return { objects, diagnostics: [diagnosticAt(name, 1, 1, `YAML: ${why}`)] };
  }
  const at = (offset: number) => {
    const p = lc.linePos(offset);
    return { line: p.line, column: p.col };
  };
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const { line, column } = at(e.pos[0]);
        // The composer recurses and reports a stack overflow as an error of its own.
        const message = /Maximum call stack size exceeded/.test(e.message) ? DEPTH_MESSAGE : `YAML: ${yamlMessage(e.message)}`;
        diagnostics.push(diagnosticAt(name, line, column, message));
        if (message === DEPTH_MESSAGE) break;
      }
      continue;
    }
    if (doc.contents === null) continue; // an empty document between `---` lines
    const problems = checkNodes(doc.contents as YamlNode, [], 0);
    if (problems.length > 0) {
      for (const p of problems) {
        const { line, column } = at(p.offset);
        diagnostics.push({ file: name, line, column, path: p.path, message: p.message, severity: 'error' });
      }
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: LIMITS.maxAliasCount });
    } catch (e) {
      const { line, column } = at(doc.contents.range?.[0] ?? 0);
      const why = e instanceof ReferenceError ? `more than ${LIMITS.maxAliasCount} alias expansions (an alias bomb?)` : (e as Error).message;
      diagnostics.push(diagnosticAt(name, line, column, `YAML: ${why}`));
      continue;
    }
    objects.push(...splitList(value, name, (path) => locateInDocument(doc, lc, path)));
  }
  return { objects, diagnostics };
}

/** The yaml package's message without its trailing "at line L, column C" part. */
function yamlMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+:?[\s\S]*$/, '');
}

const MERGE_KEY = '<<';

interface NodeProblem {
  offset: number;
  path: string;
  message: string;
}

/** Depth, scalar size and YAML 1.1/1.2 ambiguity over the node tree (aliases not followed). */
function checkNodes(node: YamlNode, path: Array<string | number>, depth: number): NodeProblem[] {
  const offset = node.range?.[0] ?? 0;
  if (depth > LIMITS.maxDepth) return [{ offset, path: renderPath(path), message: `nesting is deeper than ${LIMITS.maxDepth} levels; no Kubernetes object is` }];
  if (isScalar(node)) return checkScalar(node, path);
  if (isAlias(node)) return [];
  const out: NodeProblem[] = [];
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as YamlNode | null;
      const keyText = isScalar(key) ? String(key.value) : '?';
      // A merge key may repeat and its keys may be overridden; a plain key may not repeat.
      if (keyText !== MERGE_KEY) {
        if (seen.has(keyText)) {
          const dupPath = renderPath([...path, keyText]);
          out.push({ offset: key?.range?.[0] ?? offset, path: dupPath, message: `duplicate field "${dupPath}"` });
        }
        seen.add(keyText);
      }
      if (isScalar(key)) out.push(...checkScalar(key, [...path, keyText]));
      if (pair.value) out.push(...checkNodes(pair.value as YamlNode, [...path, keyText], depth + 1));
      if (out.length >= 20) break;
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      if (item && out.length < 20) out.push(...checkNodes(item as YamlNode, [...path, i], depth + 1));
    });
  }
  return out;
}

function checkScalar(node: Scalar, path: Array<string | number>): NodeProblem[] {
  const offset = node.range?.[0] ?? 0;
  const value = node.value;
  if (typeof value === 'string' && value.length > LIMITS.maxScalarBytes) {
    return [{ offset, path: renderPath(path), message: `value is ${value.length} characters long; kpc accepts at most ${LIMITS.maxScalarBytes} (the API server caps a whole request at 3 MiB)` }];
  }
  if (node.type !== Scalar.PLAIN || typeof node.source !== 'string') return [];
  const reading = yaml11Reading(node.source);
  if (reading === undefined) return [];
  const as12 = typeof value === 'string' ? `the string "${value}"` : `${typeof value === 'number' ? 'the number ' : ''}${String(value)}`;
  return [
    {
      offset,
      path: renderPath(path),
      message: `ambiguous YAML scalar ${node.source}: kubectl (YAML 1.1) reads ${reading}, YAML 1.2 reads ${as12}; quote it or write it unambiguously`,
    },
  ];
}

function renderPath(path: Array<string | number>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out;
}

/** The node a field path points at, or the deepest existing ancestor when it is missing. */
function locateInDocument(doc: Document, lc: LineCounter, path: FieldPath): { line: number; column: number } {
  let node: unknown = doc.contents;
  let offset = (node as YamlNode | null)?.range?.[0] ?? 0;
  for (const part of path) {
    const key = typeof part === 'object' ? part.key : part;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(key));
      if (pair) {
        // A map key's value when present; the key itself when the value is empty.
        next = pair.value ?? pair.key;
      }
    } else if (isSeq(node) && typeof key === 'number') {
      next = node.items[key];
    }
    if (!next || !(next as YamlNode).range) break;
    node = next;
    offset = (next as YamlNode).range![0];
  }
  const p = lc.linePos(offset);
  return { line: p.line, column: p.col };
}

/** A list yields its items (typed-list items take the list's type); anything else itself. */
function splitList(value: unknown, file: string, locate: Locator): RawObject[] {
  if (isListObject(value)) {
    const type = listItemType(value.kind, value.apiVersion);
    return value.items.map((item, i) => {
      inheritListType(item, type);
      return { value: item, origin: { file, locate: (path: FieldPath) => locate(['items', i, ...path]) } };
    });
  }
  return [{ value, origin: { file, locate } }];
}

/** A locator that parses `text` as YAML on first use; positions are shifted to the file. */
export function yamlLocator(text: () => string, shift: { line: number; column: number } = { line: 1, column: 1 }): Locator {
  let locateIn: Locator | undefined;
  return (path) => {
    if (!locateIn) {
      const lc = new LineCounter();
      const docs = parseAllDocuments(text(), { lineCounter: lc, prettyErrors: false, uniqueKeys: false });
      const doc = Array.isArray(docs) ? docs[0] : undefined;
      locateIn = doc ? (p) => locateInDocument(doc, lc, p) : () => ({ line: 1, column: 1 });
    }
    const at = locateIn(path);
    return at.line === 1 ? { line: shift.line, column: shift.column + at.column - 1 } : { line: shift.line + at.line - 1, column: at.column };
  };
}


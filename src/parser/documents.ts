/**
 * Text → documents: YAML streams (`---`), JSON, and `kind: List`, each object with an
 * origin that can turn a field path back into file:line:column.
 *
 * Defences, because manifests may come from anywhere: aliases are expanded with a budget
 * (billion laughs), nesting depth, line length and scalar size are capped, and plain
 * scalars that YAML 1.1 (what kubectl uses) and YAML 1.2 (what this parser uses) read
 * differently are refused rather than guessed.
 */

import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar, type Document, type Node as YamlNode } from 'yaml';
import { fieldError, locateError, type Diagnostic, type FieldPath, type ObjectOrigin } from './diagnostics.js';
import { Buffer } from 'node:buffer';
import type { Source } from './input-files.js';
import { findJsonSyntaxError, scanJsonList } from './json-list.js';
import { LineIndex, scanLines } from './lines.js';
import { countKeysInText, countKeysInValue, findDuplicateKey, type DuplicateKey } from './json-duplicates.js';
import { yaml11Reading } from './yaml-ambiguity.js';
import { objectText, parseYAMLFast } from './yaml-fast.js';

export const LIMITS = {
  /** Longest accepted line; a real manifest's longest lines are certificates and JSON annotations. */
  maxLineBytes: 1 << 20,
  /** Largest accepted scalar (annotations are capped at 256 KiB in total by the API server). */
  maxScalarBytes: 1 << 20,
  /** Deepest accepted nesting (Kubernetes objects are about 10 deep; a List adds 2). */
  maxDepth: 64,
  /** Alias expansions per document (the yaml package's default; manifests rarely use any). */
  maxAliasCount: 100,
};

/** One top-level object found in the input, still untyped. */
export interface RawObject {
  value: unknown;
  origin: ObjectOrigin;
  /** Problems of the object's text that parsing let through (a duplicate key); not decoded then. */
  problems?: Diagnostic[];
}

export interface ReadResult {
  objects: RawObject[];
  diagnostics: Diagnostic[];
}

/**
 * An opened input: either read in full (YAML, a single JSON document, or a problem found while
 * reading), or a JSON List whose items the caller parses one at a time (JsonListItems).
 */
export type OpenedDocuments = { read: ReadResult } | { list: JsonListItems };

type Locator = (path: FieldPath) => { line: number; column: number };

/** Larger single documents are refused: they would not fit in one JavaScript string (~512 MiB). */
const MAX_DOCUMENT_BYTES = 500 << 20;

/**
 * Above this size only the fast YAML path runs: the precise one needs about 60 times the
 * input in memory and 1 s per MB. A large file that is not plainly clean is refused with
 * the first reason found instead.
 */
const MAX_PRECISE_YAML_BYTES = 32 << 20;

const DEPTH_MESSAGE = `nesting is deeper than ${LIMITS.maxDepth} levels; no Kubernetes object is`;

const utf8 = new TextDecoder();

/** Parse one source into its objects (a `kind: List` yields its items). */
export function readDocuments(src: Source): ReadResult {
  const opened = openDocuments(src);
  return 'list' in opened ? opened.list.readAll() : opened.read;
}

/**
 * Like readDocuments, but a JSON List comes back unparsed (see JsonListItems), so that its
 * items can be parsed, decoded and dropped one at a time. `guessItemEnds`: see json-list.ts;
 * only JsonListItems turns it off, when a guess fails.
 */
export function openDocuments(src: Source, guessItemEnds = true): OpenedDocuments {
  const lines = scanLines(src.bytes, LIMITS.maxLineBytes);
  if ('tooLong' in lines) {
    const { line, length } = lines.tooLong;
    return { read: { objects: [], diagnostics: [diagnosticAt(src.name, line, 1, `line is ${length} characters long; kpc accepts at most ${LIMITS.maxLineBytes} per line (no Kubernetes object needs more)`)] } };
  }
  if (looksLikeJSON(src)) {
    const list = openJSONList(src, lines.index, guessItemEnds);
    if (list) return { list };
  }
  return { read: readWholeFile(src) };
}

/** The file as one text: one JSON document, else YAML (which also reports JSON syntax errors). */
function readWholeFile(src: Source): ReadResult {
  if (src.bytes.length > MAX_DOCUMENT_BYTES) {
    return { objects: [], diagnostics: [diagnosticAt(src.name, 1, 1, `file is ${src.bytes.length} bytes; kpc reads larger inputs only as a JSON List (kubectl get -o json) or split into several files`)] };
  }
  const text = utf8.decode(src.bytes);
  if (startsWithBrace(src.bytes)) {
    // kubectl's reader (YAMLOrJSONDecoder) takes input that starts with `{` as JSON, never as
    // YAML: a comment or a trailing comma is a JSON syntax error, not a YAML flow mapping.
    const read = readJSON(src.name, text);
    if (read) return read;
    const e = findJsonSyntaxError(src.bytes, firstNonSpace(src.bytes), src.bytes.length);
    const at = new LineIndex(src.bytes).at(e.offset);
    return { objects: [], diagnostics: [diagnosticAt(src.name, at.line, at.column, `JSON: ${e.message}`)] };
  }
  if (looksLikeJSON(src)) {
    const fast = readJSON(src.name, text);
    if (fast) return fast;
  }
  return readYAML(src.name, text);
}

function firstNonSpace(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return i;
}

function startsWithBrace(bytes: Uint8Array): boolean {
  return bytes[firstNonSpace(bytes)] === 0x7b;
}

function looksLikeJSON(src: Source): boolean {
  if (src.name.endsWith('.json')) return true;
  for (const b of src.bytes.subarray(0, 4096)) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    return b === 0x7b || b === 0x5b; // { or [
  }
  return false;
}

function diagnosticAt(file: string, line: number, column: number, message: string): Diagnostic {
  return { file, line, column, path: '', message, severity: 'error' };
}

// ---------------------------------------------------------------------------------------
// JSON: parsed with JSON.parse for speed; positions are found only when an error needs one,
// by parsing the same text again as YAML (JSON is YAML 1.2).

/** A locator that parses `text` as YAML on first use; positions are shifted to the file. */
function lazyLocator(text: () => string, shift: { line: number; column: number } = { line: 1, column: 1 }): Locator {
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

/** A JSON `kind: List`, split into items at the byte level (see json-list.ts). */
function openJSONList(src: Source, lines: LineIndex, guessItemEnds: boolean): JsonListItems | undefined {
  const scan = scanJsonList(src.bytes, guessItemEnds);
  if (!scan || !scan.items || !scan.kind?.endsWith('List')) return undefined;
  return new JsonListItems(src, scan.items, scan.guessed, lines);
}

/** Why an item of a JSON List spoils the whole file. */
export interface ItemFailure {
  failed: 'syntax' | 'depth';
  index: number;
}

/**
 * The items of a JSON List, each parsed only when asked for.
 *
 * Why: parsing every item up front kept all raw values (hundreds of MB for a large cluster)
 * alive while the typed copies were built, which made the garbage collector copy and mark
 * them again and again. Parsed one at a time, right before decoding, a raw value dies young.
 *
 * The outcome is the same as parsing all items first: an item that does not parse or nests too
 * deeply spoils the whole file. The caller then drops what it made of the other items and
 * reads the file as `failure(...)` says instead (readAll does exactly that).
 *
 * When the scan guessed item ends from the layout (json-list.ts), an item that parses proves
 * its range right; one that does not may only prove the guess wrong, so `failure` then says
 * to read the file again without guessing, which gives exactly the old outcome.
 */
export class JsonListItems {
  private readonly text: (start: number, end: number) => string;

  constructor(
    private readonly src: Source,
    private readonly ranges: ReadonlyArray<readonly [number, number]>,
    private readonly guessed: boolean,
    private readonly lines: LineIndex,
  ) {
    const bytes = src.bytes;
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Buffer's UTF-8 slicing is about twice as fast as TextDecoder for small pieces. TextDecoder
    // also drops a leading byte-order mark, which Buffer keeps: a piece starting with one
    // (0xEF) still goes through TextDecoder so that JSON.parse sees the same text as before.
    this.text = (start, end) => (bytes[start] === 0xef ? utf8.decode(bytes.subarray(start, end)) : buffer.toString('utf8', start, end));
  }

  get count(): number {
    return this.ranges.length;
  }

  /** Item `index`, parsed now; every call parses anew, so the caller decides what stays alive. */
  take(index: number): RawObject | ItemFailure {
    const [start, end] = this.ranges[index]!;
    let value: unknown;
    const text = this.text(start, end);
    try {
      value = JSON.parse(text);
    } catch {
      return { failed: 'syntax', index };
    }
    if (nestsTooDeep(value, 0)) return { failed: 'depth', index };
    let locate: Locator | undefined;
    const item: RawObject = {
      value,
      origin: {
        file: this.src.name,
        locate: (path) => (locate ??= lazyLocator(() => this.text(start, end), this.lines.at(start)))(path),
      },
    };
    const duplicate = duplicateKeyIn(text, value);
    if (duplicate) {
      const at = this.lines.at(start + Buffer.byteLength(text.slice(0, duplicate.offset)));
      item.problems = [duplicateDiagnostic(this.src.name, at, duplicate.path)];
    }
    return item;
  }

  /** How to read the file once an item has failed: again without guesses, or its problem. */
  failure(f: ItemFailure): OpenedDocuments {
    if (this.guessed) return openDocuments(this.src, false);
    return { read: this.problem(f) };
  }

  /** The file's read problem when item `f.index` failed (the file gives no objects then). */
  private problem(f: ItemFailure): ReadResult {
    const [start, end] = this.ranges[f.index]!;
    if (f.failed === 'depth') {
      const at = this.lines.at(start);
      return { objects: [], diagnostics: [diagnosticAt(this.src.name, at.line, at.column, DEPTH_MESSAGE)] };
    }
    // A file that fits in one string is read whole, as before the List path existed, so its
    // syntax errors come from the YAML parser with their positions. A larger one cannot be:
    // the error is found in the item itself.
    if (this.src.bytes.length <= MAX_DOCUMENT_BYTES) return readWholeFile(this.src);
    const e = findJsonSyntaxError(this.src.bytes, start, end);
    const at = this.lines.at(e.offset);
    return { objects: [], diagnostics: [diagnosticAt(this.src.name, at.line, at.column, `JSON: ${e.message}`)] };
  }

  /** Every item parsed, or the first failure's result: readDocuments for a JSON List. */
  readAll(): ReadResult {
    const objects: RawObject[] = [];
    for (let i = 0; i < this.count; i++) {
      const item = this.take(i);
      if ('failed' in item) {
        const next = this.failure(item);
        return 'list' in next ? next.list.readAll() : next.read;
      }
      objects.push(item);
    }
    return { objects, diagnostics: [] };
  }
}

function readJSON(name: string, text: string): ReadResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // let the YAML parser report the syntax error with its position
  }
  if (nestsTooDeep(value, 0)) return { objects: [], diagnostics: [diagnosticAt(name, 1, 1, DEPTH_MESSAGE)] };
  const duplicate = duplicateKeyIn(text, value);
  if (duplicate) return { objects: [], diagnostics: [duplicateDiagnostic(name, new LineIndex(text).at(duplicate.offset), duplicate.path)] };
  return { objects: splitList(value, name, lazyLocator(() => text)), diagnostics: [] };
}

/** A duplicate key of a JSON text that JSON.parse took (see json-duplicates.ts), if any. */
function duplicateKeyIn(text: string, value: unknown): DuplicateKey | undefined {
  return countKeysInText(text) === countKeysInValue(value) ? undefined : findDuplicateKey(text);
}

/** The API server's strict-decoding words (kubectl --validate=strict), for JSON and YAML alike. */
function duplicateDiagnostic(file: string, at: { line: number; column: number }, path: string): Diagnostic {
  return { file, line: at.line, column: at.column, path, message: `duplicate field "${path}"`, severity: 'error' };
}

/**
 * True when objects or arrays nest deeper than LIMITS.maxDepth below `value` (at `depth`).
 * Recursive, but it stops at the limit, so a hostile input cannot overflow the stack.
 */
function nestsTooDeep(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > LIMITS.maxDepth) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (nestsTooDeep(child, depth + 1)) return true;
  } else {
    for (const key in value) if (nestsTooDeep((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// YAML

function readYAML(name: string, text: string): ReadResult {
  const fast = parseYAMLFast(text, LIMITS);
  if (fast) {
    const objects: RawObject[] = [];
    // One index for the file: each located object counts lines from the nearest checkpoint,
    // not from the start of the file (20,000 located warnings were quadratic).
    const lines = new LineIndex(text);
    for (const doc of fast) {
      if (doc.value === null || doc.value === undefined) continue; // an empty document
      const locatorOf = (obj: unknown): Locator => {
        const span = obj !== null && typeof obj === 'object' ? doc.spans.get(obj) : undefined;
        if (!span) return () => ({ line: 1, column: 1 });
        let located: Locator | undefined;
        return (path) => {
          if (!located) {
            const piece = objectText(text, span, lines);
            located = lazyLocator(() => piece.text, { line: piece.firstLine, column: 1 });
          }
          return located(path);
        };
      };
      if (isListObject(doc.value)) {
        (doc.value as { items: unknown[] }).items.forEach((item) => objects.push({ value: item, origin: { file: name, locate: locatorOf(item) } }));
      } else {
        objects.push({ value: doc.value, origin: { file: name, locate: locatorOf(doc.value) } });
      }
    }
    return { objects, diagnostics: [] };
  }
  if (text.length > MAX_PRECISE_YAML_BYTES) {
    return { objects: [], diagnostics: [diagnosticAt(name, 1, 1, `YAML: a file of ${text.length} bytes must be plain YAML (no anchors or aliases, no scalars YAML 1.1 and 1.2 read differently, no syntax errors) for kpc to read it quickly; run kpc validate on a smaller part to see the problem, or use JSON (kubectl get -o json)`)] };
  }
  return readYAMLPrecisely(name, text);
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
    const parsed = parseAllDocuments(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: false, merge: true, stringKeys: true, version: '1.2' });
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

/** A `kind: List` (as `kubectl get -o yaml` prints) yields its items; anything else itself. */
function splitList(value: unknown, file: string, locate: Locator): RawObject[] {
  if (isListObject(value)) {
    const items = (value as { items: unknown[] }).items;
    return items.map((item, i) => ({ value: item, origin: { file, locate: (path: FieldPath) => locate(['items', i, ...path]) } }));
  }
  return [{ value, origin: { file, locate } }];
}

function isListObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}

/** Turn a field error on one object into a located diagnostic. */
export function diagnose(obj: RawObject, path: FieldPath, message: string): Diagnostic {
  return locateError(obj.origin, fieldError(path, message));
}

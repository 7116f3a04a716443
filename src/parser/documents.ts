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
import type { Source } from './input-files.js';
import { LineIndex, scanJsonList } from './json-list.js';
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
}

export interface ReadResult {
  objects: RawObject[];
  diagnostics: Diagnostic[];
}

type Locator = (path: FieldPath) => { line: number; column: number };

/** Larger single documents are refused: they would not fit in one JavaScript string (~512 MiB). */
const MAX_DOCUMENT_BYTES = 500 << 20;

/**
 * Above this size only the fast YAML path runs: the precise one needs about 60 times the
 * input in memory and 1 s per MB. A large file that is not plainly clean is refused with
 * the first reason found instead.
 */
const MAX_PRECISE_YAML_BYTES = 32 << 20;

const utf8 = new TextDecoder();

/** Parse one source into its objects (a `kind: List` yields its items). */
export function readDocuments(src: Source): ReadResult {
  const lineError = checkLineLengths(src);
  if (lineError) return { objects: [], diagnostics: [lineError] };
  if (looksLikeJSON(src)) {
    const list = readJSONList(src);
    if (list) return list;
  }
  if (src.bytes.length > MAX_DOCUMENT_BYTES) {
    return { objects: [], diagnostics: [diagnosticAt(src.name, 1, 1, `file is ${src.bytes.length} bytes; kpc reads larger inputs only as a JSON List (kubectl get -o json) or split into several files`)] };
  }
  const text = utf8.decode(src.bytes);
  if (looksLikeJSON(src)) {
    const fast = readJSON(src.name, text);
    if (fast) return fast;
  }
  return readYAML(src.name, text);
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

function checkLineLengths(src: Source): Diagnostic | undefined {
  const bytes = src.bytes;
  let start = 0;
  let line = 1;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    if (end - start > LIMITS.maxLineBytes) {
      return diagnosticAt(src.name, line, 1, `line is ${end - start} characters long; kpc accepts at most ${LIMITS.maxLineBytes} per line (no Kubernetes object needs more)`);
    }
    start = end + 1;
    line++;
  }
  return undefined;
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
function readJSONList(src: Source): ReadResult | undefined {
  const scan = scanJsonList(src.bytes);
  if (!scan || !scan.items || !scan.kind?.endsWith('List')) return undefined;
  const objects: RawObject[] = [];
  const lines = new LineIndex(src.bytes);
  for (const [start, end] of scan.items) {
    const slice = src.bytes.subarray(start, end);
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(slice));
    } catch {
      return undefined; // the whole-file path reports the syntax error with its position
    }
    const shift = () => lines.at(start);
    const depthError = checkDepth(value);
    if (depthError) {
      const at = shift();
      return { objects: [], diagnostics: [diagnosticAt(src.name, at.line, at.column, depthError)] };
    }
    let locate: Locator | undefined;
    objects.push({
      value,
      origin: {
        file: src.name,
        locate: (path) => (locate ??= lazyLocator(() => utf8.decode(slice), shift()))(path),
      },
    });
  }
  return { objects, diagnostics: [] };
}

function readJSON(name: string, text: string): ReadResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // let the YAML parser report the syntax error with its position
  }
  const depthError = checkDepth(value);
  if (depthError) return { objects: [], diagnostics: [diagnosticAt(name, 1, 1, depthError)] };
  return { objects: splitList(value, name, lazyLocator(() => text)), diagnostics: [] };
}

/** Depth of nesting, iteratively (a hostile input must not overflow our stack either). */
function checkDepth(root: unknown): string | undefined {
  const stack: Array<{ v: unknown; d: number }> = [{ v: root, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (d > LIMITS.maxDepth) return `nesting is deeper than ${LIMITS.maxDepth} levels; no Kubernetes object is`;
    if (v !== null && typeof v === 'object') {
      for (const child of Object.values(v as object)) if (child !== null && typeof child === 'object') stack.push({ v: child, d: d + 1 });
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// YAML

function readYAML(name: string, text: string): ReadResult {
  const fast = parseYAMLFast(text, LIMITS);
  if (fast) {
    const objects: RawObject[] = [];
    for (const doc of fast) {
      if (doc.value === null || doc.value === undefined) continue; // an empty document
      const locatorOf = (obj: unknown): Locator => {
        const span = obj !== null && typeof obj === 'object' ? doc.spans.get(obj) : undefined;
        if (!span) return () => ({ line: 1, column: 1 });
        let located: Locator | undefined;
        return (path) => {
          if (!located) {
            const piece = objectText(text, span);
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
    const parsed = parseAllDocuments(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true, merge: false, stringKeys: true, version: '1.2' });
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
        diagnostics.push(diagnosticAt(name, line, column, `YAML: ${yamlMessage(e.message)}`));
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
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as YamlNode | null;
      const keyText = isScalar(key) ? String(key.value) : '?';
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

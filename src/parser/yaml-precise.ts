/**
 * The precise YAML path: the `yaml` package, which gives every problem its position (line and
 * column, a field path), and the locators built on it. Slow (about 1 MB/s of manifests, some 60
 * times the input in memory), so it reads whole files only when they are small and not plain,
 * and otherwise only pieces: the documents or List items that hold anchors (readPieces), and
 * one object's own text when a diagnostic needs its position (fastLocator).
 */

import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar, type Document, type Node as YamlNode } from 'yaml';
import type { Diagnostic, FieldPath } from '../diagnostics.js';
import type { LineIndex } from './lines.js';
import { DEPTH_MESSAGE, diagnosticAt, inheritListType, isListObject, LIMITS, listItemType, type Locator, type RawObject, type ReadResult } from './raw-objects.js';
import { yaml11Reading } from './yaml-ambiguity.js';
import { objectText, type FastDocument } from './yaml-fast.js';
import { append } from '../arrays.js';

/** The options of every precise parse (readYAMLPrecisely and the pieces of readYAMLMixed). */
const PRECISE_OPTIONS = { prettyErrors: false, uniqueKeys: false, merge: true, stringKeys: true, version: '1.2' } as const;

/** A piece of the file, whole lines, re-read precisely: its offset and its first line. */
export interface Piece {
  start: number;
  end: number;
}


/** The fast path's locator: the object's own text parsed again on first use. */
export function fastLocator(text: string, lines: LineIndex, doc: Pick<FastDocument, 'spans'>, obj: unknown): Locator {
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

/**
 * The locator of a List item that is not an object (a string, say: the fast path keeps no span
 * for it): the item's `- ` lines, whole lines from `range.start`, parsed again on first use as
 * a one-item sequence, so it is placed where the precise path places it.
 */
export function listItemLocator(text: string, lines: LineIndex, range: Piece): Locator {
  const inSequence = yamlLocator(() => text.slice(range.start, range.end), { line: lines.at(range.start).line, column: 1 });
  return (path) => inSequence([0, ...path]);
}

export function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** The whole lines from the one holding `start` up to `end` (cut back to a line start when only blanks follow it). */
export function linePiece(text: string, start: number, end: number): Piece {
  const from = lineStartOf(text, start);
  const lastLine = lineStartOf(text, end);
  const to = lastLine > from && /^[ \t]*$/.test(text.slice(lastLine, end)) ? lastLine : end;
  return { start: from, end: to };
}

/**
 * Pieces of the file read precisely as one document: as a sequence of the pieces (`seq`, each
 * a List item's `- ` lines) or as the one piece's document. Undefined on any problem.
 */
export function readPieces(text: string, lines: LineIndex, pieces: Piece[], seq: boolean): { values: unknown[]; locators: Locator[] } | undefined {
  return readJoined(joinPieces(text, lines, pieces), seq);
}

/** Pieces of the file as one text (each piece ending with a newline), and where their lines are in the file. */
export interface JoinedPieces {
  text: string;
  count: number;
  /** The joined text's line `at` is the file's `fileLine`, one entry per piece. */
  pieceLine: Array<{ at: number; fileLine: number }>;
}

export function joinPieces(text: string, lines: LineIndex, pieces: Piece[]): JoinedPieces {
  let joined = '';
  const pieceLine: Array<{ at: number; fileLine: number }> = [];
  let lineCount = 1;
  for (const p of pieces) {
    let body = text.slice(p.start, p.end);
    if (!body.endsWith('\n')) body += '\n';
    pieceLine.push({ at: lineCount, fileLine: lines.at(p.start).line });
    joined += body;
    for (let i = body.indexOf('\n'); i >= 0; i = body.indexOf('\n', i + 1)) lineCount++;
  }
  return { text: joined, count: pieces.length, pieceLine };
}

/** readPieces, given the pieces joined. */
export function readJoined(pieces: JoinedPieces, seq: boolean): { values: unknown[]; locators: Locator[] } | undefined {
  const { text: joined, pieceLine } = pieces;
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
  if (checkNodes(doc.contents as YamlNode, [], 0, noAnchors()).length > 0) return undefined;
  if (seq && (!isSeq(doc.contents) || doc.contents.items.length !== pieces.count)) return undefined;
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
  if (!Array.isArray(value) || value.length !== pieces.count) return undefined;
  return { values: value, locators: value.map((_, m) => (path: FieldPath) => toFile(locateInDocument(doc, lc, [m, ...path]))) };
}

/** The precise path: the `yaml` package, every problem with its position. */
export function readYAMLPrecisely(name: string, text: string): ReadResult {
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
    const problems = checkNodes(doc.contents as YamlNode, [], 0, noAnchors());
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
      const why = /Excessive alias count/.test((e as Error).message) ? `more than ${LIMITS.maxAliasCount} alias expansions (an alias bomb?)` : (e as Error).message;
      diagnostics.push(diagnosticAt(name, line, column, `YAML: ${why}`));
      continue;
    }
    append(objects, splitList(value, name, (path) => locateInDocument(doc, lc, path)));
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

/** The anchors of one document met so far: each name's latest node, and the nodes still open. */
interface Anchors {
  latest: Map<string, YamlNode>;
  open: Set<YamlNode>;
}

const noAnchors = (): Anchors => ({ latest: new Map(), open: new Set() });

/**
 * Depth, scalar size, YAML 1.1/1.2 ambiguity and aliases, over the node tree in document order
 * (aliases not followed). An alias may only name an anchor set before it in the same document,
 * and not one whose node holds the alias (a value that contains itself has no JSON form).
 */
function checkNodes(node: YamlNode, path: Array<string | number>, depth: number, anchors: Anchors): NodeProblem[] {
  const offset = node.range?.[0] ?? 0;
  if (depth > LIMITS.maxDepth) return [{ offset, path: renderPath(path), message: `nesting is deeper than ${LIMITS.maxDepth} levels; no Kubernetes object is` }];
  if (isAlias(node)) return aliasProblems(node.source, offset, path, anchors);
  if (node.anchor) anchors.latest.set(node.anchor, node);
  if (isScalar(node)) return checkScalar(node, path);
  anchors.open.add(node);
  const out = checkChildren(node, path, depth, anchors);
  anchors.open.delete(node);
  return out;
}

/** go-yaml's words (kubectl's reader): `unknown anchor 'x' referenced`, `anchor 'x' value contains itself`. */
function aliasProblems(source: string, offset: number, path: Array<string | number>, anchors: Anchors): NodeProblem[] {
  const target = anchors.latest.get(source);
  if (target === undefined) return [{ offset, path: renderPath(path), message: `YAML: unknown anchor '${source}' referenced (an alias *${source} needs an anchor &${source} before it in the same document)` }];
  if (anchors.open.has(target)) return [{ offset, path: renderPath(path), message: `YAML: anchor '${source}' value contains itself` }];
  return [];
}

function checkChildren(node: YamlNode, path: Array<string | number>, depth: number, anchors: Anchors): NodeProblem[] {
  const offset = node.range?.[0] ?? 0;
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
      // A key may hold an anchor (an alias as a key is refused by the parser: keys are strings);
      // its depth is its value's, reported once, at the value.
      if (isScalar(key)) {
        if (key.anchor) anchors.latest.set(key.anchor, key);
        out.push(...checkScalar(key, [...path, keyText]));
      }
      if (pair.value) out.push(...checkNodes(pair.value as YamlNode, [...path, keyText], depth + 1, anchors));
      if (out.length >= 20) break;
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      if (item && out.length < 20) out.push(...checkNodes(item as YamlNode, [...path, i], depth + 1, anchors));
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
export function splitList(value: unknown, file: string, locate: Locator): RawObject[] {
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


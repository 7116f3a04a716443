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
import { objectText, parseYAMLFast } from './yaml-fast.js';

/**
 * Above this size only the fast YAML path runs: the precise one needs about 60 times the
 * input in memory and 1 s per MB. A large file that is not plainly clean is refused with
 * the first reason found instead.
 */
const MAX_PRECISE_YAML_BYTES = 32 << 20;

export function readYAML(name: string, text: string): ReadResult {
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
            located = yamlLocator(() => piece.text, { line: piece.firstLine, column: 1 });
          }
          return located(path);
        };
      };
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


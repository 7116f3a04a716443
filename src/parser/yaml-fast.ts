/**
 * The fast YAML path: js-yaml for clean input, the `yaml` package for everything else.
 *
 * Why two parsers: the `yaml` package gives precise positions and error codes, but it reads
 * about 1 MB/s of manifests and a 20,000-Service `kubectl get -o yaml` (67 MB) took 60 s and
 * 4.2 GB; js-yaml reads the same in about 2 s and 0.4 GB (BENCHMARKS.md). So js-yaml reads the
 * input first, and gives up — handing the whole text to the precise path, which then reports
 * with positions — whenever the input is not plainly clean:
 *
 *   - anchors or aliases (the precise path expands them with a budget),
 *   - a plain scalar that YAML 1.1 (kubectl) and 1.2 read differently,
 *   - a syntax error, a duplicate key, nesting or a scalar beyond the limits.
 *
 * For clean input the two parsers agree on values (YAML 1.2 core schema, plain scalars only
 * resolved where both resolve them alike). Positions, which only diagnostics need, are found
 * lazily: each top-level object's byte range is recorded while parsing, and on first use
 * that range alone is parsed again with the `yaml` package.
 */

import * as jsyaml from 'js-yaml';
import { isYaml11Ambiguous } from './yaml-ambiguity.js';
import type { LineIndex } from './lines.js';
import type { BlockList } from './yaml-block.js';

/** What the fast path found: each top-level document's value and where each object starts. */
export interface FastDocument {
  value: unknown;
  /** Node start/end offsets of objects at depth ≤ 3 (document roots and List items). */
  spans: WeakMap<object, { start: number; end: number }>;
}

/** A plain scalar the precise path must look at (YAML 1.1 vs 1.2). */
class Ambiguous {
  constructor(readonly text: string) {}
}

const ambiguousType = new jsyaml.Type('tag:kpc.invalid,2026:ambiguous', {
  kind: 'scalar',
  resolve: (data: string | null) => data !== null && isYaml11Ambiguous(data),
  construct: (data: string) => new Ambiguous(data),
});

/** YAML 1.2 core, with the ambiguity check tried before the core's own resolvers. */
const SCHEMA = new jsyaml.Schema({
  implicit: [ambiguousType, ...(jsyaml.CORE_SCHEMA as unknown as { implicit: jsyaml.Type[] }).implicit],
  explicit: (jsyaml.CORE_SCHEMA as unknown as { explicit: jsyaml.Type[] }).explicit,
});

const IMPLICIT_TYPES = (SCHEMA as unknown as { compiledImplicit: jsyaml.Type[] }).compiledImplicit;

/**
 * A plain scalar's value as js-yaml resolves it under SCHEMA (the implicit types in js-yaml's
 * own order, as its composer tries them), or UNCLEAN when it is YAML 1.1/1.2-ambiguous (the
 * fast path would give up on it). For yaml-block.ts, which must build what js-yaml builds.
 */
export function resolvePlainScalar(source: string): unknown {
  for (let i = 0; i < IMPLICIT_TYPES.length; i++) {
    const type = IMPLICIT_TYPES[i]!;
    if (type.resolve(source)) {
      const value: unknown = type.construct(source);
      return value instanceof Ambiguous ? UNCLEAN : value;
    }
  }
  return source;
}

/** resolvePlainScalar's answer for a scalar the fast path would not accept. */
export const UNCLEAN: unique symbol = Symbol('unclean');

/** A `&name` or `*name` where a node can start; false alarms only cost the fast path. */
const ANCHOR_OR_ALIAS = /(?:^|[\s[{,:-])[&*][^\s,[\]{}]/;

interface ListenerState {
  depth: number;
  position: number;
  result: unknown;
}

/**
 * Parse every document, or return undefined when the precise path must decide. `limits`
 * bound nesting and scalar size as the precise path does.
 */
export function parseYAMLFast(text: string, limits: { maxDepth: number; maxScalarBytes: number }): FastDocument[] | undefined {
  if (ANCHOR_OR_ALIAS.test(text)) return undefined;
  const docs = loadFast(text, limits);
  if (!docs) return undefined;
  for (const doc of docs) if (!isClean(doc.value, limits.maxScalarBytes)) return undefined;
  return docs;
}

/** True when the text may hold an anchor or an alias (false alarms possible, misses not). */
export function mayHoldAnchors(text: string): boolean {
  return ANCHOR_OR_ALIAS.test(text);
}

/**
 * Every `&name` and `*name` where a node can start (a superset of the real ones: the same
 * test as ANCHOR_OR_ALIAS, so a real anchor or alias is never missed), by offset of the sigil.
 *
 * The tokens `/(?:^|[\s[{,:-])([&*])([^\s,[\]{}]+)/g` finds (each search from just after the
 * last sigil), found from the sigils (indexOf) instead of by the expression over the whole
 * text: a 67 MB file holds a hundred of them. A sigil is a token when it starts the text or
 * follows a space or `[{,:-`, and a name follows it; the search from just after the previous
 * sigil misses none of them (the character before a sigil found that way is never a sigil).
 */
export function anchorTokens(text: string): Array<{ offset: number; alias: boolean; name: string }> {
  const out: Array<{ offset: number; alias: boolean; name: string }> = [];
  const len = text.length;
  let amp = text.indexOf('&');
  let star = text.indexOf('*');
  while (amp >= 0 || star >= 0) {
    let p: number;
    if (star < 0 || (amp >= 0 && amp < star)) {
      p = amp;
      amp = text.indexOf('&', amp + 1);
    } else {
      p = star;
      star = text.indexOf('*', star + 1);
    }
    if (p > 0 && !isTokenPrefix(text.charCodeAt(p - 1))) continue;
    let e = p + 1;
    while (e < len && !isNameStop(text.charCodeAt(e))) e++;
    if (e === p + 1) continue;
    out.push({ offset: p, alias: text.charCodeAt(p) === 0x2a, name: text.slice(p + 1, e) });
  }
  return out;
}

const WHITE_SPACE = /\s/;

/** `[\s[{,:-]`: what may come before a token's sigil. */
function isTokenPrefix(c: number): boolean {
  if (c === 0x5b || c === 0x7b || c === 0x2c || c === 0x3a || c === 0x2d) return true;
  return WHITE_SPACE.test(String.fromCharCode(c));
}

/** `[\s,[\]{}]`: what ends a token's name. */
function isNameStop(c: number): boolean {
  if (c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) return true;
  if (c > 0x20 && c < 0x7f) return false;
  return WHITE_SPACE.test(String.fromCharCode(c));
}

/** Whether a line may start with `%` (`/^%/m`: a directive; documents are not independent then). */
export function mayHoldDirectives(text: string): boolean {
  for (let i = text.indexOf('%'); i >= 0; i = text.indexOf('%', i + 1)) {
    if (i === 0) return true;
    const c = text.charCodeAt(i - 1);
    if (c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029) return true;
  }
  return false;
}

/**
 * js-yaml over the whole text, anchors and aliases included, without the cleanliness check:
 * for readers that check (and re-read precisely) the parts that hold anchors themselves.
 */
export function parseYAMLFastUnchecked(text: string, limits: { maxDepth: number; maxScalarBytes: number }): FastDocument[] | undefined {
  return loadFast(text, limits);
}

/**
 * The items of a List whose `- ` lines at column 0 are `text` (one item's lines, or several
 * items' lines joined), as js-yaml reads them in the whole List: the same sequence at column
 * 0, the same indentation, each item ending where the next `- ` line (or the text) ends. They
 * are one level less deep than in the List (the List's mapping is missing), so the depth
 * limit is one less. Spans are offsets in `text`. Undefined when js-yaml refuses the text or
 * it is not one sequence of `count` items.
 */
export function parseItemsFast(text: string, count: number, limits: { maxDepth: number; maxScalarBytes: number }): { values: unknown[]; spans: FastDocument['spans'] } | undefined {
  const docs = loadFast(text, { maxDepth: limits.maxDepth - 1, maxScalarBytes: limits.maxScalarBytes });
  if (!docs || docs.length !== 1 || !Array.isArray(docs[0]!.value) || docs[0]!.value.length !== count) return undefined;
  return { values: docs[0]!.value as unknown[], spans: docs[0]!.spans };
}

/**
 * List item `index` as js-yaml reads it in the whole List (see parseItemsFast), from its lines
 * `start`..`end` alone, with its span shifted to the file. Undefined when js-yaml refuses the
 * lines or the item is not clean: the whole file is then not clean for the fast path either.
 */
/**
 * Item `index` of a List the block reader read: its value, or, where the reader gave up on the
 * item, js-yaml's value of the item's lines alone; undefined when js-yaml finds that unclean.
 */
export function blockListItem(list: BlockList, text: string, index: number, limits: { maxDepth: number; maxScalarBytes: number }): { value: unknown; spans: FastDocument['spans'] } | undefined {
  const value = list.item(index);
  if (value !== undefined) return { value, spans: list.spans };
  const { start, end } = list.itemRange(index);
  return parseItemFast(text, start, end, limits);
}

export function parseItemFast(text: string, start: number, end: number, limits: { maxDepth: number; maxScalarBytes: number }): { value: unknown; spans: FastDocument['spans'] } | undefined {
  const read = parseItemsFast(text.slice(start, end), 1, limits);
  if (!read) return undefined;
  const value = read.values[0];
  if (!isClean(value, limits.maxScalarBytes)) return undefined;
  const spans = new WeakMap<object, { start: number; end: number }>();
  const span = value !== null && typeof value === 'object' ? read.spans.get(value) : undefined;
  if (span) spans.set(value as object, { start: span.start + start, end: span.end + start });
  return { value, spans };
}

/**
 * The document in `text`'s piece `start`..`end` (one document of a stream: see yaml-block.ts
 * blockDocuments) as js-yaml reads it alone, spans in the file's offsets, anchors included and
 * without the cleanliness check (as parseYAMLFastUnchecked); null when the piece holds none.
 * Undefined when js-yaml refuses it or finds more than one document.
 */
export function parseDocumentFast(text: string, start: number, end: number, limits: { maxDepth: number; maxScalarBytes: number }): FastDocument | null | undefined {
  const docs = loadFast(text.slice(start, end), limits, start);
  if (!docs || docs.length > 1) return undefined;
  return docs.length === 0 ? null : docs[0]!;
}

/** Whether a value holds no ambiguity marker and no oversized scalar (see isClean). */
export function isCleanValue(value: unknown, maxScalar: number): boolean {
  return isClean(value, maxScalar);
}

/** js-yaml's documents of `text`; spans are shifted by `offset` (where `text` is in the file). */
function loadFast(text: string, limits: { maxDepth: number; maxScalarBytes: number }, offset = 0): FastDocument[] | undefined {
  const spans = new WeakMap<object, { start: number; end: number }>();
  const starts: number[] = [];
  const listener = (event: 'open' | 'close', state: ListenerState) => {
    if (event === 'open') {
      starts[state.depth] = state.position + offset;
    } else if (state.depth <= 3 && state.result !== null && typeof state.result === 'object') {
      spans.set(state.result as object, { start: starts[state.depth]!, end: state.position + offset });
    }
  };
  let values: unknown[];
  try {
    values = jsyaml.loadAll(text, undefined, {
      schema: SCHEMA,
      json: false,
      maxDepth: limits.maxDepth + 1,
      listener: listener as unknown as jsyaml.LoadOptions['listener'],
    } as jsyaml.LoadOptions) as unknown[];
  } catch {
    return undefined;
  }
  return values.map((value) => ({ value, spans }));
}

/** No Ambiguous marker and no oversized string anywhere (iterative: no recursion to exhaust). */
function isClean(root: unknown, maxScalar: number): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v instanceof Ambiguous) return false;
    if (typeof v === 'string') {
      if (v.length > maxScalar) return false;
    } else if (v !== null && typeof v === 'object') {
      for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
      if (!Array.isArray(v)) for (const key of Object.keys(v)) if (key.length > maxScalar) return false;
    }
  }
  return true;
}

/**
 * The text of one object re-parsable on its own with unchanged line and column numbers:
 * the lines it spans, with everything before it on its first line blanked (a `- ` marker).
 */
export function objectText(text: string, span: { start: number; end: number }, lines: LineIndex): { text: string; firstLine: number } {
  const lineStart = text.lastIndexOf('\n', span.start - 1) + 1;
  const firstLine = lines.at(lineStart).line;
  const lead = text.slice(lineStart, span.start).replace(/[^\s]/g, ' ');
  return { text: lead + text.slice(span.start, span.end), firstLine };
}

/**
 * Split JSON input into the objects it holds, at the byte level, without parsing the whole.
 *
 * JSON input is what kubectl's reader (YAMLOrJSONDecoder) takes as JSON: text whose first
 * non-space character is `{`. It is a stream of top-level values, one after another
 * (`jq '.items[]'`, `kubectl get -o json` run in a loop, pages of one list concatenated), each
 * a plain object or a List: `kind: List` as `kubectl get -o json` prints it, or a typed list
 * (`ServiceList`, ...) as the API returns it (`kubectl get --raw /api/v1/services`), whose items
 * carry no kind and apiVersion of their own.
 *
 * Why bytes: `kubectl get -o json` of a 100,000-Service cluster is about 750 MB, more than a
 * JavaScript string can hold (~512 MiB), and parsing it whole would need several times its
 * size in memory. One scan finds each object's byte range; each object is then parsed on its
 * own with JSON.parse (documents.ts, JsonObjects), and dies young.
 *
 * Walking every byte in JavaScript costs a few ns a byte, so for the items of a List, which
 * are nearly all of the file, the scan may guess each end from the layout of pretty-printed
 * JSON (guessObjectEnd). A guess is only a guess until JSON.parse has taken the object: the
 * reader parses every object before trusting the scan, and scans again without guessing at
 * the first one that does not parse. Compact JSON (one line) is scanned byte by byte.
 *
 * The bytes may be the whole input or a window of a large file that slides forward
 * (ScanBytes; file-window.ts): a large `kubectl get -o json` is scanned without being held
 * whole. Each step of the scan (a top-level key and value, a list item, the space after it)
 * runs on the window; a step that runs past the window's end throws NEED_MORE, and is run
 * again from its start once the window reaches further. A step's result does not depend on
 * where the window ends, so the ranges are the same as from the whole input.
 */

import { TextDecoder } from 'node:util';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isJsonSpace, NEWLINE, OPEN_BRACE, OPEN_BRACKET, QUOTE, SPACE } from './json-bytes.js';
import { listItemType } from './raw-objects.js';

export interface JsonObjectRange {
  /** Byte range [start, end) of the object's text. */
  start: number;
  end: number;
  /**
   * An item of a list: the kind and apiVersion it takes when it names neither (apimachinery's
   * unstructured list decoding: the list's kind without "List", and the list's apiVersion).
   */
  inherit?: { kind: string; apiVersion: string };
}

export interface JsonStreamScan {
  /** The objects to decode, in input order: top-level values, lists replaced by their items. */
  objects: JsonObjectRange[];
  /** True when some item's end was guessed from the layout rather than found byte by byte. */
  guessed: boolean;
}

/**
 * The input's bytes as the scan sees them: `buf` holds input bytes [base, base + buf.length);
 * `eof` says that it reaches the input's end. `more(from)` makes buf hold the bytes from
 * `from` (or a little before, for the look back at an item's indent) and further on; it is
 * called only when eof is false.
 */
export interface ScanBytes {
  readonly buf: Uint8Array;
  readonly base: number;
  readonly eof: boolean;
  more(from: number): void;
}

/** The whole input at once. */
export function wholeBytes(buf: Uint8Array): ScanBytes {
  return {
    buf,
    base: 0,
    eof: true,
    more() {
      throw new Error('unreachable: the whole input has no more');
    },
  };
}

/** Thrown by a step that needs bytes past the window (never escapes the scan). */
const NEED_MORE = Symbol('need more input');

/** At the window's end: the input's end (-1: cut short), or a step to run again. */
function cutShort(eof: boolean): -1 {
  if (!eof) throw NEED_MORE;
  return -1;
}

/**
 * Run a step at input offset `from`: `fn` gets the window, `from` within it, eof and the
 * window's base. When the step needs more than the window holds, the window slides and the
 * step runs again.
 */
function step<T>(src: ScanBytes, from: number, fn: (buf: Uint8Array, i: number, eof: boolean, base: number) => T): T {
  for (;;) {
    try {
      return fn(src.buf, from - src.base, src.eof, src.base);
    } catch (e) {
      if (e !== NEED_MORE) throw e;
      src.more(from);
    }
  }
}

function skipSpace(buf: Uint8Array, i: number, eof: boolean): number {
  while (i < buf.length && isJsonSpace(buf[i])) i++;
  if (i >= buf.length) cutShort(eof);
  return i;
}

/** Index just past the string starting at `i` (which holds a quote); -1 when cut short. */
function skipString(buf: Uint8Array, i: number, eof: boolean): number {
  let j = i + 1;
  while (j < buf.length) {
    const b = buf[j]!;
    if (b === BACKSLASH) j += 2;
    else if (b === QUOTE) return j + 1;
    else j++;
  }
  return cutShort(eof);
}

/** Index just past the JSON value starting at `i`; -1 when malformed or cut short. */
function skipValue(buf: Uint8Array, i: number, eof: boolean): number {
  if (i >= buf.length) return cutShort(eof);
  const b = buf[i];
  if (b === QUOTE) return skipString(buf, i, eof);
  if (b === OPEN_BRACE || b === OPEN_BRACKET) {
    let depth = 0;
    let j = i;
    while (j < buf.length) {
      const c = buf[j]!;
      if (c === QUOTE) {
        j = skipString(buf, j, eof);
        if (j < 0) return -1;
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return cutShort(eof);
  }
  // number, true, false, null
  let j = i;
  while (j < buf.length && !isJsonSpace(buf[j]) && buf[j] !== COMMA && buf[j] !== CLOSE_BRACE && buf[j] !== CLOSE_BRACKET) j++;
  if (j >= buf.length) cutShort(eof);
  return j > i ? j : -1;
}

/** True when what follows an item ending at `end` is ',' or ']'. */
function isItemEnd(buf: Uint8Array, end: number, eof: boolean): boolean {
  const next = buf[skipSpace(buf, end, eof)];
  return next === COMMA || next === CLOSE_BRACKET;
}

/**
 * Where the object starting at `i` probably ends, judged by its layout; undefined when the
 * layout gives no hint.
 *
 * Pretty-printed JSON (kubectl, jq, JSON.stringify with an indent) puts an item's `{` last on
 * its line and its `}` first on a later line, indented as far as the `{`; nothing in between
 * is indented that little. Newlines never occur inside JSON strings, so this needs no look
 * at the content: a search for '}' (native, memchr speed) and a look at the spaces before each.
 * (An indent reaching back past a window's start gives no hint: the scan goes on exactly.)
 */
function guessObjectEnd(buf: Uint8Array, i: number, eof: boolean): number | undefined {
  if (i + 1 >= buf.length) cutShort(eof);
  if (buf[i] !== OPEN_BRACE || buf[i + 1] !== NEWLINE) return undefined;
  let lineStart = i;
  while (lineStart > 0 && buf[lineStart - 1] === SPACE) lineStart--;
  if (lineStart === 0 || buf[lineStart - 1] !== NEWLINE) return undefined;
  const indent = i - lineStart;
  for (let k = buf.indexOf(CLOSE_BRACE, i); k >= 0; k = buf.indexOf(CLOSE_BRACE, k + 1)) {
    let spaces = 0;
    while (spaces < indent && buf[k - spaces - 1] === SPACE) spaces++;
    if (spaces === indent && buf[k - spaces - 1] === NEWLINE) return k + 1;
  }
  cutShort(eof);
  return undefined;
}

/** What the scan of one top-level object found. */
interface TopLevel {
  end: number;
  kind: string | undefined;
  apiVersion: string | undefined;
  /** Element ranges of a top-level `items` array. */
  items: Array<[number, number]> | undefined;
}

interface ScanState {
  guessing: boolean;
  guessed: boolean;
}

/**
 * Scan the JSON stream: every top-level value, and the items of those that are lists. Returns
 * undefined when the text is not a well-formed stream of objects (the caller then finds the
 * error and its position with findJsonSyntaxError). With `guessItemEnds`, item ends come
 * from the layout while it keeps making sense (see guessObjectEnd and the file comment).
 * Offsets are the input's (a window's base added).
 */
export function scanJsonStream(input: Uint8Array | ScanBytes, guessItemEnds: boolean): JsonStreamScan | undefined {
  const src = input instanceof Uint8Array ? wholeBytes(input) : input;
  const objects: JsonObjectRange[] = [];
  const state: ScanState = { guessing: guessItemEnds, guessed: false };
  const decoder = new TextDecoder();
  for (let i = nextValue(src, 0); i >= 0; i = nextValue(src, i)) {
    if (byteAt(src, i) !== OPEN_BRACE) return undefined;
    const top = scanTopLevel(src, i, state, decoder);
    if (!top) return undefined;
    if (top.items !== undefined && top.kind?.endsWith('List')) {
      const inherit = listItemType(top.kind, top.apiVersion);
      for (const [start, end] of top.items) objects.push(inherit ? { start, end, inherit } : { start, end });
    } else {
      objects.push({ start: i, end: top.end });
    }
    i = top.end;
  }
  return { objects, guessed: state.guessed };
}

/** The offset of the next top-level value at or after `i`, or -1 at the input's end. */
function nextValue(src: ScanBytes, i: number): number {
  return step(src, i, (buf, r, eof, base) => {
    while (r < buf.length && isJsonSpace(buf[r])) r++;
    if (r < buf.length) return base + r;
    return cutShort(eof);
  });
}

/** The byte at input offset `i` (read within a step), undefined past the input's end. */
function byteAt(src: ScanBytes, i: number): number | undefined {
  return step(src, i, (buf, r, eof) => {
    if (r >= buf.length) cutShort(eof);
    return buf[r];
  });
}

/** One top-level object at `start` (a `{`): its end, its kind and apiVersion, its items. */
function scanTopLevel(src: ScanBytes, start: number, state: ScanState, decoder: TextDecoder): TopLevel | undefined {
  const top: TopLevel = { end: -1, kind: undefined, apiVersion: undefined, items: undefined };
  let i = step(src, start + 1, (buf, r, eof, base) => base + skipSpace(buf, r, eof));
  if (byteAt(src, i) === CLOSE_BRACE) {
    top.end = i + 1;
    return top;
  }
  for (;;) {
    // The key, and where its value starts.
    const key = step(src, i, (buf, r, eof, base) => {
      if (r >= buf.length) cutShort(eof);
      if (buf[r] !== QUOTE) return undefined;
      const keyEnd = skipString(buf, r, eof);
      if (keyEnd < 0) return undefined;
      const colon = skipSpace(buf, keyEnd, eof);
      if (buf[colon] !== COLON) return undefined;
      return { name: decoder.decode(buf.subarray(r + 1, keyEnd - 1)), value: base + skipSpace(buf, colon + 1, eof) };
    });
    if (!key) return undefined;
    if (key.name === 'items' && byteAt(src, key.value) === OPEN_BRACKET) {
      const items = scanItems(src, key.value, state);
      if (!items) return undefined;
      top.items = items.ranges;
      i = items.end;
    } else {
      const value = step(src, key.value, (buf, r, eof, base) => {
        const end = skipValue(buf, r, eof);
        if (end < 0) return undefined;
        const text = buf[r] === QUOTE && (key.name === 'kind' || key.name === 'apiVersion') ? decoder.decode(buf.subarray(r + 1, end - 1)) : undefined;
        return { end: base + end, text };
      });
      if (!value) return undefined;
      if (value.text !== undefined && key.name === 'kind') top.kind = value.text;
      if (value.text !== undefined && key.name === 'apiVersion') top.apiVersion = value.text;
      i = value.end;
    }
    // What follows the value: ',' and the next key, or the object's '}'.
    const next = step(src, i, (buf, r, eof, base) => {
      const at = skipSpace(buf, r, eof);
      if (buf[at] === COMMA) return { comma: true, at: base + skipSpace(buf, at + 1, eof) };
      return { comma: false, at: buf[at] === CLOSE_BRACE ? base + at : -1 };
    });
    if (next.comma) {
      i = next.at;
      continue;
    }
    if (next.at < 0) return undefined;
    top.end = next.at + 1;
    return top;
  }
}

/** The elements of the array at `open` (a `[`), and the offset just past it. */
function scanItems(src: ScanBytes, open: number, state: ScanState): { ranges: Array<[number, number]>; end: number } | undefined {
  const ranges: Array<[number, number]> = [];
  let i = step(src, open + 1, (buf, r, eof, base) => base + skipSpace(buf, r, eof));
  if (byteAt(src, i) === CLOSE_BRACKET) return { ranges, end: i + 1 };
  for (;;) {
    // One item: its end (guessed or found), and what follows it. The state changes only once
    // the step is done (a step may run more than once).
    const item = step(src, i, (buf, r, eof, base) => {
      let end = state.guessing ? guessObjectEnd(buf, r, eof) : undefined;
      // A guess must at least be followed by ',' or ']'; at the first that is not, or when
      // there is none, the rest of the input is scanned byte by byte.
      if (end !== undefined && !isItemEnd(buf, end, eof)) end = undefined;
      const guessed = end !== undefined;
      if (end === undefined) {
        end = skipValue(buf, r, eof);
        if (end < 0) return undefined;
      }
      const after = skipSpace(buf, end, eof);
      const sep = buf[after];
      const next = sep === COMMA ? skipSpace(buf, after + 1, eof) : after;
      return { end: base + end, guessed, sep, next: base + next };
    });
    if (!item) return undefined;
    if (item.guessed) state.guessed = true;
    else state.guessing = false;
    ranges.push([i, item.end]);
    if (item.sep === COMMA) i = item.next;
    else if (item.sep === CLOSE_BRACKET) return { ranges, end: item.next + 1 };
    else return undefined;
  }
}

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



export function skipJsonSpace(buf: Uint8Array, i: number): number {
  while (i < buf.length && isJsonSpace(buf[i])) i++;
  return i;
}

/** Index just past the string starting at `i` (which holds a quote); -1 when cut short. */
function skipString(buf: Uint8Array, i: number): number {
  let j = i + 1;
  while (j < buf.length) {
    const b = buf[j]!;
    if (b === BACKSLASH) j += 2;
    else if (b === QUOTE) return j + 1;
    else j++;
  }
  return -1;
}

/** Index just past the JSON value starting at `i`; -1 when malformed or cut short. */
function skipValue(buf: Uint8Array, i: number): number {
  const b = buf[i];
  if (b === QUOTE) return skipString(buf, i);
  if (b === OPEN_BRACE || b === OPEN_BRACKET) {
    let depth = 0;
    let j = i;
    while (j < buf.length) {
      const c = buf[j]!;
      if (c === QUOTE) {
        j = skipString(buf, j);
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
    return -1;
  }
  // number, true, false, null
  let j = i;
  while (j < buf.length && !isJsonSpace(buf[j]) && buf[j] !== COMMA && buf[j] !== CLOSE_BRACE && buf[j] !== CLOSE_BRACKET) j++;
  return j > i ? j : -1;
}

/** True when what follows an item ending at `end` is ',' or ']'. */
function isItemEnd(buf: Uint8Array, end: number): boolean {
  const next = buf[skipJsonSpace(buf, end)];
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
 */
function guessObjectEnd(buf: Uint8Array, i: number): number | undefined {
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

/**
 * Scan the JSON stream: every top-level value, and the items of those that are lists. Returns
 * undefined when the text is not a well-formed stream of objects (the caller then finds the
 * error and its position with findJsonSyntaxError). With `guessItemEnds`, item ends come
 * from the layout while it keeps making sense (see guessObjectEnd and the file comment).
 */
export function scanJsonStream(buf: Uint8Array, guessItemEnds: boolean): JsonStreamScan | undefined {
  const objects: JsonObjectRange[] = [];
  const state = { guessing: guessItemEnds, guessed: false };
  const decoder = new TextDecoder();
  for (let i = skipJsonSpace(buf, 0); i < buf.length; i = skipJsonSpace(buf, i)) {
    if (buf[i] !== OPEN_BRACE) return undefined;
    const top = scanTopLevel(buf, i, state, decoder);
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

/** One top-level object at `i` (a `{`): its end, its kind and apiVersion, its items. */
function scanTopLevel(buf: Uint8Array, start: number, state: { guessing: boolean; guessed: boolean }, decoder: TextDecoder): TopLevel | undefined {
  const top: TopLevel = { end: -1, kind: undefined, apiVersion: undefined, items: undefined };
  let i = skipJsonSpace(buf, start + 1);
  if (buf[i] === CLOSE_BRACE) {
    top.end = i + 1;
    return top;
  }
  for (;;) {
    if (buf[i] !== QUOTE) return undefined;
    const keyEnd = skipString(buf, i);
    if (keyEnd < 0) return undefined;
    const key = decoder.decode(buf.subarray(i + 1, keyEnd - 1));
    i = skipJsonSpace(buf, keyEnd);
    if (buf[i] !== COLON) return undefined;
    i = skipJsonSpace(buf, i + 1);
    if (key === 'items' && buf[i] === OPEN_BRACKET) {
      const items = scanItems(buf, i, state);
      if (!items) return undefined;
      top.items = items.ranges;
      i = items.end;
    } else {
      const end = skipValue(buf, i);
      if (end < 0) return undefined;
      if (buf[i] === QUOTE && key === 'kind') top.kind = decoder.decode(buf.subarray(i + 1, end - 1));
      if (buf[i] === QUOTE && key === 'apiVersion') top.apiVersion = decoder.decode(buf.subarray(i + 1, end - 1));
      i = end;
    }
    i = skipJsonSpace(buf, i);
    if (buf[i] === COMMA) {
      i = skipJsonSpace(buf, i + 1);
      continue;
    }
    if (buf[i] !== CLOSE_BRACE) return undefined;
    top.end = i + 1;
    return top;
  }
}

/** The elements of the array at `i` (a `[`), and the index just past it. */
function scanItems(buf: Uint8Array, open: number, state: { guessing: boolean; guessed: boolean }): { ranges: Array<[number, number]>; end: number } | undefined {
  const ranges: Array<[number, number]> = [];
  let i = skipJsonSpace(buf, open + 1);
  if (buf[i] === CLOSE_BRACKET) return { ranges, end: i + 1 };
  for (;;) {
    let end = state.guessing ? guessObjectEnd(buf, i) : undefined;
    // A guess must at least be followed by ',' or ']'; at the first that is not, or when
    // there is none, the rest of the input is scanned byte by byte.
    if (end !== undefined && !isItemEnd(buf, end)) end = undefined;
    if (end === undefined) {
      state.guessing = false;
      end = skipValue(buf, i);
      if (end < 0) return undefined;
    } else {
      state.guessed = true;
    }
    ranges.push([i, end]);
    i = skipJsonSpace(buf, end);
    if (buf[i] === COMMA) i = skipJsonSpace(buf, i + 1);
    else if (buf[i] === CLOSE_BRACKET) return { ranges, end: i + 1 };
    else return undefined;
  }
}

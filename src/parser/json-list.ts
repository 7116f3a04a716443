/**
 * Split a JSON `kind: List` into its items at the byte level, without parsing the whole.
 *
 * Why: `kubectl get -o json` of a 100,000-Service cluster is about 750 MB, more than a
 * JavaScript string can hold (~512 MiB), and parsing it whole would also need several
 * times its size in memory. Scanning the bytes once for the top-level structure (strings,
 * escapes and bracket depth) finds each item's byte range; each item is then parsed on its
 * own with JSON.parse.
 */

export interface JsonListScan {
  /** The top-level `kind` value, when it is a string. */
  kind: string | undefined;
  /** Byte ranges [start, end) of the `items` array elements; undefined when there is none. */
  items: Array<[number, number]> | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Index just past the string starting at `i` (which holds a quote). */
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
  while (j < buf.length && !isSpace(buf[j]!) && buf[j] !== COMMA && buf[j] !== CLOSE_BRACE && buf[j] !== CLOSE_BRACKET) j++;
  return j > i ? j : -1;
}

function skipSpace(buf: Uint8Array, i: number): number {
  while (i < buf.length && isSpace(buf[i]!)) i++;
  return i;
}

/**
 * Scan a top-level JSON object for `kind` and the elements of `items`. Returns undefined when
 * the text is not a well-formed top-level object (the caller then parses it normally, which
 * reports the error with a position).
 */
export function scanJsonList(buf: Uint8Array): JsonListScan | undefined {
  const decoder = new TextDecoder();
  let i = skipSpace(buf, 0);
  if (buf[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(buf, i + 1);
  const scan: JsonListScan = { kind: undefined, items: undefined };
  if (buf[i] === CLOSE_BRACE) return scan;
  for (;;) {
    if (buf[i] !== QUOTE) return undefined;
    const keyEnd = skipString(buf, i);
    if (keyEnd < 0) return undefined;
    const key = decoder.decode(buf.subarray(i + 1, keyEnd - 1));
    i = skipSpace(buf, keyEnd);
    if (buf[i] !== COLON) return undefined;
    i = skipSpace(buf, i + 1);
    if (key === 'items' && buf[i] === OPEN_BRACKET) {
      const items: Array<[number, number]> = [];
      i = skipSpace(buf, i + 1);
      if (buf[i] === CLOSE_BRACKET) {
        i++;
      } else {
        for (;;) {
          const end = skipValue(buf, i);
          if (end < 0) return undefined;
          items.push([i, end]);
          i = skipSpace(buf, end);
          if (buf[i] === COMMA) i = skipSpace(buf, i + 1);
          else if (buf[i] === CLOSE_BRACKET) {
            i++;
            break;
          } else return undefined;
        }
      }
      scan.items = items;
    } else {
      const end = skipValue(buf, i);
      if (end < 0) return undefined;
      if (key === 'kind' && buf[i] === QUOTE) scan.kind = decoder.decode(buf.subarray(i + 1, end - 1));
      i = end;
    }
    i = skipSpace(buf, i);
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1);
      continue;
    }
    if (buf[i] === CLOSE_BRACE) return skipSpace(buf, i + 1) === buf.length ? scan : undefined;
    return undefined;
  }
}

/** Byte offsets of every line start, found once, for line/column look-ups by binary search. */
export class LineIndex {
  private starts: number[] | undefined;

  constructor(private readonly buf: Uint8Array) {}

  /** 1-based line and column of a byte offset (columns in bytes). */
  at(offset: number): { line: number; column: number } {
    const starts = (this.starts ??= this.scan());
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  }

  private scan(): number[] {
    const starts = [0];
    for (let k = this.buf.indexOf(0x0a); k >= 0; k = this.buf.indexOf(0x0a, k + 1)) starts.push(k + 1);
    return starts;
  }
}

/**
 * Split a JSON `kind: List` into its items at the byte level, without parsing the whole.
 *
 * Why: `kubectl get -o json` of a 100,000-Service cluster is about 750 MB, more than a
 * JavaScript string can hold (~512 MiB), and parsing it whole would also need several
 * times its size in memory. Scanning the bytes once for the top-level structure (strings,
 * escapes and bracket depth) finds each item's byte range; each item is then parsed on its
 * own with JSON.parse.
 *
 * Walking every byte in JavaScript costs about 2.5 ns a byte (0.4 s for 150 MB), so for the
 * items, which are nearly all of the file, the scan may instead guess each end from the layout
 * (guessObjectEnd). A guess is only a guess until JSON.parse has taken the item: the reader
 * must parse every item before trusting the scan, and read the file again without guessing
 * at the first item that does not parse (documents.ts, JsonListItems).
 */

export interface JsonListScan {
  /** The top-level `kind` value, when it is a string. */
  kind: string | undefined;
  /** Byte ranges [start, end) of the `items` array elements; undefined when there is none. */
  items: Array<[number, number]> | undefined;
  /** True when some item's end was guessed from the layout rather than found byte by byte. */
  guessed: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;
const NEWLINE = 0x0a;

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

/** True when what follows an item ending at `end` is ',' or ']'. */
function isItemEnd(buf: Uint8Array, end: number): boolean {
  const next = buf[skipSpace(buf, end)];
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

/**
 * Scan a top-level JSON object for `kind` and the elements of `items`. Returns undefined when
 * the text is not a well-formed top-level object (the caller then parses it normally, which
 * reports the error with a position). With `guessItemEnds`, item ends come from the layout
 * while it keeps making sense (see guessObjectEnd and the file comment).
 */
export function scanJsonList(buf: Uint8Array, guessItemEnds: boolean): JsonListScan | undefined {
  let scan = scanTopLevel(buf, guessItemEnds);
  // A wrong guess can make a List look like something else: only an exact scan may say so.
  if (scan.guessed && !(scan.complete && scan.items !== undefined && scan.kind?.endsWith('List'))) scan = scanTopLevel(buf, false);
  return scan.complete ? scan : undefined;
}

/** scanJsonList's walk; `complete` stays false when the text is not a well-formed object. */
function scanTopLevel(buf: Uint8Array, guessItemEnds: boolean): JsonListScan & { complete: boolean } {
  const decoder = new TextDecoder();
  const scan = { kind: undefined as string | undefined, items: undefined as Array<[number, number]> | undefined, guessed: false, complete: false };
  let i = skipSpace(buf, 0);
  if (buf[i] !== OPEN_BRACE) return scan;
  i = skipSpace(buf, i + 1);
  let guessing = guessItemEnds;
  if (buf[i] === CLOSE_BRACE) {
    scan.complete = true;
    return scan;
  }
  for (;;) {
    if (buf[i] !== QUOTE) return scan;
    const keyEnd = skipString(buf, i);
    if (keyEnd < 0) return scan;
    const key = decoder.decode(buf.subarray(i + 1, keyEnd - 1));
    i = skipSpace(buf, keyEnd);
    if (buf[i] !== COLON) return scan;
    i = skipSpace(buf, i + 1);
    if (key === 'items' && buf[i] === OPEN_BRACKET) {
      const items: Array<[number, number]> = [];
      i = skipSpace(buf, i + 1);
      if (buf[i] === CLOSE_BRACKET) {
        i++;
      } else {
        for (;;) {
          let end = guessing ? guessObjectEnd(buf, i) : undefined;
          // A guess must at least be followed by ',' or ']'; at the first that is not, or when
          // there is none, the rest of the file is scanned byte by byte.
          if (end !== undefined && !isItemEnd(buf, end)) end = undefined;
          if (end === undefined) {
            guessing = false;
            end = skipValue(buf, i);
            if (end < 0) return scan;
          } else {
            scan.guessed = true;
          }
          items.push([i, end]);
          i = skipSpace(buf, end);
          if (buf[i] === COMMA) i = skipSpace(buf, i + 1);
          else if (buf[i] === CLOSE_BRACKET) {
            i++;
            break;
          } else return scan;
        }
      }
      scan.items = items;
    } else {
      const end = skipValue(buf, i);
      if (end < 0) return scan;
      if (key === 'kind' && buf[i] === QUOTE) scan.kind = decoder.decode(buf.subarray(i + 1, end - 1));
      i = end;
    }
    i = skipSpace(buf, i);
    if (buf[i] === COMMA) {
      i = skipSpace(buf, i + 1);
      continue;
    }
    if (buf[i] === CLOSE_BRACE) scan.complete = skipSpace(buf, i + 1) === buf.length;
    return scan;
  }
}

/**
 * Where JSON that JSON.parse refused goes wrong: the byte offset of the first error in
 * buf[start, end) and what is wrong there. JSON.parse's own message does not always say
 * where; this walk over the grammar (RFC 8259) does. Only called after a failure, so it is
 * written to be read, not to be fast; it keeps its own stack, so deep nesting is no danger.
 */
export function findJsonSyntaxError(buf: Uint8Array, start: number, end: number): { offset: number; message: string } {
  const open: number[] = []; // the containers we are in: OPEN_BRACE or OPEN_BRACKET
  let i = start;
  const at = (message: string) => ({ offset: Math.min(i, end), message });
  /** The byte at k, or -1 past the item (the bytes after it belong to the file, not to it). */
  const byteAt = (k: number): number => (k < end ? buf[k]! : -1);
  const space = () => {
    while (isSpace(byteAt(i))) i++;
  };
  /** A string at i; false (i at the problem) when it is not one. */
  const string = (): boolean => {
    if (byteAt(i) !== QUOTE) return false;
    for (i++; i < end; i++) {
      const b = buf[i]!;
      if (b === QUOTE) {
        i++;
        return true;
      }
      if (b < 0x20) return false;
      if (b === BACKSLASH) {
        i++;
        const e = byteAt(i);
        if (e === 0x75 /* u */) {
          for (let k = 1; k <= 4; k++) if (!isHexDigit(byteAt(i + k))) return false;
          i += 4;
        } else if (e < 0 || !'"\\/bfnrt'.includes(String.fromCharCode(e))) return false;
      }
    }
    return false;
  };
  const digits = (): boolean => {
    const from = i;
    while (byteAt(i) >= 0x30 && byteAt(i) <= 0x39) i++;
    return i > from;
  };
  const number = (): boolean => {
    if (byteAt(i) === 0x2d /* - */) i++;
    if (byteAt(i) === 0x30) i++;
    else if (!digits()) return false;
    if (byteAt(i) === 0x2e /* . */) {
      i++;
      if (!digits()) return false;
    }
    if (byteAt(i) === 0x65 || byteAt(i) === 0x45 /* e E */) {
      i++;
      if (byteAt(i) === 0x2b || byteAt(i) === 0x2d) i++;
      if (!digits()) return false;
    }
    return true;
  };
  const literal = (word: string): boolean => {
    for (let k = 0; k < word.length; k++, i++) if (byteAt(i) !== word.charCodeAt(k)) return false;
    return true;
  };
  /** A member's name and colon, when inside an object. */
  const memberName = (): string | undefined => {
    space();
    if (!string()) return 'expected a double-quoted property name';
    space();
    if (byteAt(i) !== COLON) return "expected ':' after a property name";
    i++;
    return undefined;
  };

  for (;;) {
    // A value starts at i.
    space();
    if (i >= end) return at('unexpected end of input');
    const b = byteAt(i);
    if (b === OPEN_BRACE) {
      i++;
      space();
      if (byteAt(i) !== CLOSE_BRACE) {
        open.push(OPEN_BRACE);
        const bad = memberName();
        if (bad) return at(bad);
        continue;
      }
      i++;
    } else if (b === OPEN_BRACKET) {
      i++;
      space();
      if (byteAt(i) !== CLOSE_BRACKET) {
        open.push(OPEN_BRACKET);
        continue;
      }
      i++;
    } else if (b === QUOTE) {
      if (!string()) return at(i >= end ? 'unterminated string' : 'invalid character in string');
    } else if (b === 0x2d || (b >= 0x30 && b <= 0x39)) {
      if (!number()) return at('invalid number');
    } else if (b === 0x74 /* t */ || b === 0x66 /* f */ || b === 0x6e /* n */) {
      if (!literal(b === 0x74 ? 'true' : b === 0x66 ? 'false' : 'null')) return at('invalid literal');
    } else {
      return at(`unexpected character ${JSON.stringify(String.fromCharCode(b))}`);
    }
    // After a value: close containers, or go on to the next element.
    for (;;) {
      space();
      const inside = open[open.length - 1];
      if (inside === undefined) {
        // JSON.parse refused the text, so this walk should not get here: say so plainly.
        return i < end ? at('unexpected text after the value') : at('not valid JSON');
      }
      const c = byteAt(i);
      if (c === COMMA) {
        i++;
        if (inside === OPEN_BRACE) {
          const bad = memberName();
          if (bad) return at(bad);
        }
        break;
      }
      if ((inside === OPEN_BRACE && c === CLOSE_BRACE) || (inside === OPEN_BRACKET && c === CLOSE_BRACKET)) {
        open.pop();
        i++;
        continue;
      }
      if (i >= end) return at('unexpected end of input');
      return at(inside === OPEN_BRACE ? "expected ',' or '}' after a property value" : "expected ',' or ']' after an array element");
    }
  }
}

function isHexDigit(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

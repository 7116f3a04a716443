/**
 * Where JSON goes wrong, for the message: JSON.parse's own message does not always say where
 * (and differs between engine versions); this walk over the grammar (RFC 8259) does.
 */

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-bytes.js';

/**
 * The byte offset of the first error in buf[start, end) and what is wrong there. The text is
 * a stream of JSON objects (what kubectl's reader takes as JSON: json-stream.ts); at its top
 * level only objects may follow one another. Only called after a failure, so it is written to
 * be read, not to be fast; it keeps its own stack, so deep nesting is no danger.
 */
export function findJsonSyntaxError(buf: Uint8Array, start: number, end: number): { offset: number; message: string } {
  const open: number[] = []; // the containers we are in: OPEN_BRACE or OPEN_BRACKET
  let i = start;
  const at = (message: string) => ({ offset: Math.min(i, end), message });
  /** The byte at k, or -1 past the item (the bytes after it belong to the file, not to it). */
  const byteAt = (k: number): number => (k < end ? buf[k]! : -1);
  const space = () => {
    while (isJsonSpace(byteAt(i))) i++;
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
    if (open.length === 0 && b !== OPEN_BRACE) return at(`expected a JSON object, found ${JSON.stringify(String.fromCharCode(b))}`);
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
        // A top-level object is done: the next one, or the end of the input.
        if (i >= end) return at('not valid JSON');
        break;
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

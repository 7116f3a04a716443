/**
 * What the lazy readers read (iptables/indexed-read.ts, nftables/lazy-read.ts, text-names.ts):
 * a string, or a text in a form that answers the few methods of a string they use, at
 * positions in the whole text. The eager readers take strings only.
 */

import { constants } from 'node:buffer';
import { AsciiBytes } from './ascii-bytes.js';
import { PiecedText } from './pieced-text.js';

/**
 * One string; a text too long to be one, in pieces (PiecedText); or a file's ASCII bytes not
 * decoded (AsciiBytes).
 */
export type TextSource = string | PiecedText | AsciiBytes;

/** Whether `value` is a TextSource (and not, say, a rules object that holds one). */
export function isTextSource(value: unknown): value is TextSource {
  return typeof value === 'string' || value instanceof PiecedText || value instanceof AsciiBytes;
}

/**
 * The text as one string for a reader that takes only strings (an eager reading), or undefined
 * when it is in pieces (longer than one string can be).
 */
export function oneString(text: TextSource): string | undefined {
  if (typeof text === 'string') return text;
  return text instanceof AsciiBytes && text.length <= constants.MAX_STRING_LENGTH ? text.toString() : undefined;
}

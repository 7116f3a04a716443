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

/**
 * A text as strings: AsciiBytes decoded, into pieces of at most `maxPiece` characters when
 * longer than that (by default, when longer than one string can be).
 */
export function decodedText(text: TextSource, maxPiece: number = constants.MAX_STRING_LENGTH): string | PiecedText {
  if (!(text instanceof AsciiBytes)) return text;
  if (text.length <= maxPiece) return text.toString();
  const pieces = linePieces(text.bytes, maxPiece);
  // An ASCII file's lines are each shorter than a string can be, or it is not a rules text.
  if (!Array.isArray(pieces)) throw new RangeError(`a line from byte ${pieces.longLineFrom} on is longer than one string can be`);
  return new PiecedText(pieces.map((piece) => Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('latin1')));
}

/**
 * `bytes` cut after line feeds into pieces of at most `maxPiece` bytes (UTF-8 never holds a
 * line feed inside a character), or where a line longer than that begins.
 */
export function linePieces(bytes: Uint8Array, maxPiece: number): Uint8Array[] | { longLineFrom: number } {
  const pieces: Uint8Array[] = [];
  let start = 0;
  while (bytes.byteLength - start > maxPiece) {
    const cut = bytes.lastIndexOf(0x0a, start + maxPiece - 1);
    if (cut < start) return { longLineFrom: start };
    pieces.push(bytes.subarray(start, cut + 1));
    start = cut + 1;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

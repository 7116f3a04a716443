/**
 * A file of ASCII bytes read through the few methods of a string the lazy readers use
 * (TextSource), without decoding it first: `kpc trace --rules` of a node's 81 MB of
 * iptables-save indexes the bytes in one pass, and only the lines it follows become strings.
 * Decoding the whole file took as long as reading it (issue 19: trace --rules ≤ one read).
 *
 * In ASCII a byte is a character, so a position is the same in the bytes and in the text a
 * decoding would give, and a reader's line and column numbers do not change.
 */

import { isAscii } from 'node:buffer';

const NOT_ASCII = /[^\x00-\x7f]/;

export class AsciiBytes {
  readonly length: number;

  private constructor(readonly bytes: Buffer) {
    this.length = bytes.length;
  }

  /** `bytes` as an AsciiBytes, or undefined when any byte is not ASCII. */
  static of(bytes: Uint8Array): AsciiBytes | undefined {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return isAscii(buffer) ? new AsciiBytes(buffer) : undefined;
  }

  /**
   * Strings written one after the other (a printer's chunks) as one AsciiBytes, or undefined
   * when any character is not ASCII: a printed text held as bytes, of any length (kpc's
   * nftables output at 100,000 Services is 721 MB, longer than one string can be). `expected`
   * (a length the text is likely to have) spares growing the buffer.
   */
  static join(chunks: Iterable<string>, expected = 0): AsciiBytes | undefined {
    // A little over: a text a few bytes longer than expected would double the buffer.
    let bytes = Buffer.allocUnsafe(Math.max(expected + (expected >> 6), 1 << 16));
    let n = 0;
    for (const chunk of chunks) {
      // UTF-8 writes any other character as bytes of 0x80 and above, which isAscii refuses.
      // Measured only near the end: a chunk is at most 3 bytes a character.
      const need = n + 3 * chunk.length > bytes.length ? n + Buffer.byteLength(chunk, 'utf8') : 0;
      if (need > bytes.length) {
        const grown = Buffer.allocUnsafe(Math.max(2 * bytes.length, need));
        bytes.copy(grown, 0, 0, n);
        bytes = grown;
      }
      n += bytes.write(chunk, n, 'utf8');
    }
    return AsciiBytes.of(bytes.subarray(0, n));
  }

  /** Whether [at, at + length) holds what `other` holds at [otherAt, otherAt + length) (one memory compare). */
  sameBytes(at: number, other: AsciiBytes, otherAt: number, length: number): boolean {
    if (at < 0 || otherAt < 0 || at + length > this.length || otherAt + length > other.length) return false;
    return this.bytes.compare(other.bytes, otherAt, otherAt + length, at, at + length) === 0;
  }

  /** As a string's: NaN outside the text. */
  charCodeAt(at: number): number {
    return at >= 0 && at < this.length ? this.bytes[at]! : NaN;
  }

  /** As a string's, negative positions counted from the end. */
  slice(start = 0, end = this.length): string {
    const from = start < 0 ? Math.max(this.length + start, 0) : Math.min(start, this.length);
    const to = end < 0 ? Math.max(this.length + end, 0) : Math.min(end, this.length);
    return to <= from ? '' : this.bytes.toString('latin1', from, to);
  }

  /** As a string's (a position below 0 is 0; Buffer's would count it from the end). */
  indexOf(search: string, from = 0): number {
    const at = Math.max(0, from);
    if (search.length === 0) return Math.min(at, this.length);
    // One character is searched as a byte (memchr): the lazy readers' line feeds.
    if (search.length === 1) return search.charCodeAt(0) > 0x7f ? -1 : this.bytes.indexOf(search.charCodeAt(0), at);
    // latin1 would encode a character above U+00FF as its low byte: such a search finds nothing here.
    return NOT_ASCII.test(search) ? -1 : this.bytes.indexOf(search, at, 'latin1');
  }

  startsWith(search: string, at = 0): boolean {
    at = Math.min(Math.max(at, 0), this.length);
    if (at + search.length > this.length) return false;
    const bytes = this.bytes;
    for (let i = 0; i < search.length; i++) if (bytes[at + i] !== search.charCodeAt(i)) return false;
    return true;
  }

  /** Whether [a, a + length) and [b, b + length) hold the same characters (no string made). */
  sameRange(a: number, b: number, length: number): boolean {
    const bytes = this.bytes;
    if (a < 0 || b < 0 || a + length > this.length || b + length > this.length) return false;
    for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
    return true;
  }

  /** The whole text as one string (at most constants.MAX_STRING_LENGTH bytes). */
  toString(): string {
    return this.bytes.toString('latin1');
  }
}

/**
 * A previous output named by --previous, read only as far as it is needed.
 *
 * The common case of `compile --previous` and `kpc diff` is kpc's own output of the same input
 * (nothing changed, or one Service): comparing the new output with the file, chunk by chunk as
 * the new output is made, tells "nothing changed" without holding the file's 78 MB (at 20,000
 * Services) or decoding it, let alone reading it into a state. Only when the bytes differ is
 * the file read whole, by the reader of every named input (readNamedText), so every error it
 * gives (a missing file, too large, ...) is that reader's.
 *
 * A regular file is checked when opened (it exists, is a file, is under the size limit: else
 * it is read at once, which reports the problem); standard input is read at once (it cannot be
 * read twice).
 */

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { ByteWindow } from '../diff/byte-window.js';
import type { LineText } from '../diff/text-lines.js';
import { AsciiBytes } from '../lang/ascii-bytes.js';
import { DEFAULT_MAX_INPUT_BYTES, oneText, readNamedLineText } from '../parser/input-files.js';
import type { StdinReader } from './backend.js';

export class PreviousText {
  /** The whole text once read: a string, or ASCII bytes not decoded (lines()). */
  private decoded: LineText | undefined;

  private constructor(
    private readonly path: string,
    private readonly option: string,
    private readonly stdin: StdinReader,
  ) {}

  static open(path: string, option: string, stdin: StdinReader): PreviousText {
    const p = new PreviousText(path, option, stdin);
    let regular = false;
    if (path !== '-') {
      try {
        const st = statSync(path);
        regular = st.isFile() && st.size <= DEFAULT_MAX_INPUT_BYTES;
      } catch {
        regular = false;
      }
    }
    // Anything but a readable regular file is read now, so its errors are reported first.
    if (!regular) p.decoded = readNamedLineText(path, option, stdin);
    return p;
  }

  /** The whole text (read, and decoded, on first use), refused when longer than one string can be. */
  text(): string {
    const lines = this.lines();
    if (typeof lines === 'string') return lines;
    // Decoded once, the bytes let go (refused when longer than one string can be).
    return (this.decoded = oneText(this.path, this.option, lines));
  }

  /**
   * The whole text for a reader of lines (text-lines.ts): a file of ASCII (kpc's and nft's
   * own output) as its bytes, not decoded (at 20,000 Services, 143 MB of nftables text that
   * would be a string beside them: 270 MB less peak memory for compile --previous), and the
   * only form of one longer than a string can be; any other text as text() gives it.
   */
  lines(): LineText {
    return (this.decoded ??= readNamedLineText(this.path, this.option, this.stdin, undefined, 0));
  }

  /**
   * The bytes, for a reader that needs no decoded text and moves forward through them (a
   * regular file is read a window at a time: its 78 MB are never held, nor decoded), or
   * undefined when the file cannot be read now (text() then reports why). Close it after use.
   */
  window(): ByteWindow | undefined {
    // Read whole already (standard input, ...): the text's UTF-8 (the same bytes for ASCII; any
    // other character is bytes of 0x80 and above, which no reader of kpc's own text takes).
    if (this.decoded instanceof AsciiBytes) return ByteWindow.of(this.decoded.bytes);
    if (this.decoded !== undefined) return ByteWindow.of(Buffer.from(this.decoded, 'utf8'));
    return ByteWindow.file(this.path);
  }

  /**
   * Whether `chunks`, written as UTF-8 one after the other, are exactly the file's bytes. Reads
   * the file piece by piece alongside; stops at the first difference. A file that cannot be read
   * now is "not the same" (text() then reports why).
   */
  matches(chunks: Iterable<string>): boolean {
    if (this.decoded !== undefined) {
      // Already read whole: compare strings (the text was decoded from the bytes, or is ASCII bytes).
      const text = this.decoded;
      let at = 0;
      for (const chunk of chunks) {
        // A slice compared whole (one memory compare), not startsWith (character by character).
        if (text.slice(at, at + chunk.length) !== chunk) return false;
        at += chunk.length;
      }
      return at === text.length;
    }
    let want = Buffer.allocUnsafe(1 << 20);
    const pieces = function* (): Iterable<Uint8Array> {
      for (const chunk of chunks) {
        const n = Buffer.byteLength(chunk, 'utf8');
        if (n > want.length) want = Buffer.allocUnsafe(n);
        want.write(chunk, 0, 'utf8');
        yield want.subarray(0, n);
      }
    };
    return this.fileMatches(pieces());
  }

  /** Whether `text` (a whole output printed as bytes) is exactly the file's bytes: as matches(). */
  matchesBytes(text: AsciiBytes): boolean {
    const decoded = this.decoded;
    if (decoded instanceof AsciiBytes) return decoded.length === text.length && decoded.sameBytes(0, text, 0, text.length);
    if (decoded !== undefined) return decoded.length === text.length && decoded === text.slice();
    const pieces = function* (): Iterable<Uint8Array> {
      for (let at = 0; at < text.length; at += 1 << 20) yield text.bytes.subarray(at, Math.min(at + (1 << 20), text.length));
    };
    return this.fileMatches(pieces());
  }

  /**
   * The file's length in bytes as it was when opened, or as read; 0 when unknown. A printer
   * writing the text to compare with it makes its buffer this long (at 100,000 Services, 721
   * MB, where doubling would copy it and hold twice as much).
   */
  expectedLength(): number {
    if (this.decoded !== undefined) return this.decoded.length;
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /**
   * The text's first `n` bytes (fewer when shorter), for a look at its form; '' when the file
   * cannot be read now (text() then reports why). Bytes past ASCII come as latin1 characters.
   */
  head(n = 1 << 16): string {
    if (this.decoded !== undefined) return this.decoded.slice(0, n);
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return '';
    }
    try {
      const buf = Buffer.allocUnsafe(n);
      return buf.toString('latin1', 0, readFully(fd, buf, n, 0));
    } catch {
      return '';
    } finally {
      closeSync(fd);
    }
  }

  /** Whether `pieces`, one after the other, are exactly the file's bytes (false when it cannot be read now). */
  private fileMatches(pieces: Iterable<Uint8Array>): boolean {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return false;
    }
    try {
      let have = Buffer.allocUnsafe(1 << 20);
      let position = 0;
      for (const piece of pieces) {
        const n = piece.length;
        if (n > have.length) have = Buffer.allocUnsafe(n);
        if (readFully(fd, have, n, position) !== n) return false;
        if (Buffer.compare(piece, have.subarray(0, n)) !== 0) return false;
        position += n;
      }
      // Nothing more in the file.
      return readFully(fd, have, 1, position) === 0;
    } catch {
      return false;
    } finally {
      closeSync(fd);
    }
  }
}

/** Read `n` bytes at `position` into buf (fewer at the end of the file); how many were read. */
function readFully(fd: number, buf: Buffer, n: number, position: number): number {
  let got = 0;
  while (got < n) {
    const r = readSync(fd, buf, got, n - got, position + got);
    if (r === 0) break;
    got += r;
  }
  return got;
}

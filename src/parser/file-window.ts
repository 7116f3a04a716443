/**
 * A large input file read in pieces instead of whole: `kubectl get -o json` of 100,000
 * Services is ~750 MB, and a Buffer of all of it, outside V8's heap (no collection hurries to
 * free it), would stay alive until the rules are built: ~750 MB of the peak RSS.
 *
 *   InputFile   the open file: reads at an offset of its text (past a byte-order mark), finds
 *               newlines for the line index; released (closed) once the file is loaded, and
 *               opened again by name if a late diagnostic needs a position
 *   FileWindow  the scan's view (json-stream.ts ScanBytes): a window that slides forward,
 *               each new byte checked as checkText checks a whole file (no NUL, UTF-8)
 *   FileText    the objects' text, read window by window as the loader takes them in order
 *
 * Whatever is not the plain case (a NUL, bad UTF-8, the file growing past the limit) is
 * abandoned (StreamAbandoned): the caller then reads the file whole, the way that gives the
 * diagnostics.
 */

import { isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { ScanBytes } from './json-stream.js';

/**
 * The window size, and the size from which a file is read in pieces (a smaller one is one
 * read anyway). Tests make it small to slide the windows often.
 */
export const FILE_WINDOW = { bytes: 16 << 20 };

/** Bytes kept before a step's start when the window slides (the look back at an item's indent). */
const LOOK_BACK = 64 << 10;


/** The file is not the plain case: read it whole instead. */
export class StreamAbandoned extends Error {}

const NEWLINE = 0x0a;

export class InputFile {
  private fd: number | undefined;
  /** The block newlines are searched in (the line index walks forward through it), and the part read. */
  private block: Buffer | undefined;
  private blockRead: Buffer | undefined;
  private blockBase = 0;

  /** The file as it was when opened (see changed). */
  private readonly opened: string;

  /** `skip`: the byte-order mark's length (offsets are the text's, after it). */
  constructor(
    readonly path: string,
    fd: number,
    readonly skip: number,
  ) {
    this.fd = fd;
    this.opened = fileStamp(fd);
  }

  /**
   * Whether the file was written to (or replaced under its name and reopened) since it was
   * opened. The file is scanned first and its objects read back later, so an in-place rewrite
   * in between (`kubectl get -o json > file`) would mix two versions; every write moves mtime.
   */
  changed(): boolean {
    try {
      this.fd ??= openSync(this.path, 'r');
      return fileStamp(this.fd) !== this.opened;
    } catch {
      return true;
    }
  }

  /** Read text bytes from `offset` into buf[at, at + length); the count read, short only at the end. */
  read(buf: Uint8Array, at: number, length: number, offset: number): number {
    this.fd ??= openSync(this.path, 'r');
    let n = 0;
    while (n < length) {
      const got = readSync(this.fd, buf, at + n, length - n, this.skip + offset + n);
      if (got === 0) break;
      n += got;
    }
    return n;
  }

  /** The offset of the first `byte` at or after `from`, or -1 (for LineIndex). */
  indexOf(byte: number, from: number): number {
    for (;;) {
      if (this.blockRead === undefined || from < this.blockBase || from >= this.blockBase + this.blockRead.length) {
        this.block ??= Buffer.allocUnsafe(1 << 20);
        this.blockBase = from;
        this.blockRead = this.block.subarray(0, this.read(this.block, 0, this.block.length, from));
        if (this.blockRead.length === 0) return -1;
      }
      const k = this.blockRead.indexOf(byte, from - this.blockBase);
      if (k >= 0) return this.blockBase + k;
      from = this.blockBase + this.blockRead.length;
    }
  }

  /** Close the file and drop the buffers; a later read opens it again. */
  release(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.block = undefined;
    this.blockRead = undefined;
  }
}

/** Size, times and inode, to the nanosecond. */
export function fileStamp(fd: number): string {
  const st = fstatSync(fd, { bigint: true });
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

export const newlineIn = (file: InputFile) => (from: number) => file.indexOf(NEWLINE, from);

/**
 * The scan's window over the file's text. Every byte read is checked before the scan sees
 * it: no NUL, valid UTF-8 (checked up to the last character start, the rest with the next
 * piece, so a character split between two reads is checked whole), at most maxBytes in all.
 */
export class FileWindow implements ScanBytes {
  buf: Uint8Array;
  base = 0;
  eof = false;
  private storage: Buffer;
  /** Text offset up to which the bytes are known to be UTF-8. */
  private checked = 0;

  constructor(
    private readonly file: InputFile,
    private readonly maxBytes: number,
  ) {
    this.storage = Buffer.allocUnsafe(FILE_WINDOW.bytes);
    this.buf = this.storage.subarray(0, 0);
    this.fill(0);
  }

  more(from: number): void {
    const end = this.base + this.buf.length;
    const keep = Math.max(this.base, Math.min(from, end) - Math.min(LOOK_BACK, this.storage.length >> 3));
    const kept = end - keep;
    if (kept > this.storage.length / 2) {
      // One step needs more than half the window (a huge object): a larger window.
      const larger = Buffer.allocUnsafe(this.storage.length * 2);
      larger.set(this.storage.subarray(keep - this.base, end - this.base));
      this.storage = larger;
    } else {
      this.storage.copyWithin(0, keep - this.base, end - this.base);
    }
    this.base = keep;
    this.fill(kept);
  }

  /** Read after the first `kept` bytes of storage until it is full or the file ends. */
  private fill(kept: number): void {
    const n = this.file.read(this.storage, kept, this.storage.length - kept, this.base + kept);
    const length = kept + n;
    this.buf = this.storage.subarray(0, length);
    this.eof = length < this.storage.length;
    const end = this.base + length;
    if (end > this.maxBytes) throw new StreamAbandoned('over the size limit');
    if (this.buf.subarray(kept).indexOf(0) >= 0) throw new StreamAbandoned('a NUL byte');
    const upTo = this.eof ? end : this.base + lastCharStart(this.buf);
    if (upTo > this.checked && !isUtf8(this.buf.subarray(this.checked - this.base, upTo - this.base))) throw new StreamAbandoned('not UTF-8');
    this.checked = Math.max(this.checked, upTo);
  }
}

/** Where the last character of `buf` starts (a byte that is not 10xxxxxx, among the last four). */
function lastCharStart(buf: Uint8Array): number {
  for (let i = buf.length - 1; i >= 0 && i >= buf.length - 4; i--) if ((buf[i]! & 0xc0) !== 0x80) return i;
  return buf.length;
}

/** The text of the objects' ranges, read a window at a time (the loader takes them in order). */
export class FileText {
  private window: Buffer | undefined;
  private windowBase = 0;
  private windowLength = 0;
  /** The loader is done: a late diagnostic reads its object alone. */
  private released = false;
  /** A range ended past the file's end: the file got shorter since its scan. */
  private short = false;

  constructor(readonly file: InputFile) {}

  /** Bytes [start, end) of the text, from the window holding them (fewer when the file got shorter). */
  bytes(start: number, end: number): Buffer {
    if (this.released) {
      const one = Buffer.allocUnsafe(end - start);
      return one.subarray(0, this.file.read(one, 0, one.length, start));
    }
    if (this.window === undefined || start < this.windowBase || end > this.windowBase + this.windowLength) {
      const size = Math.max(FILE_WINDOW.bytes, end - start);
      if (this.window === undefined || this.window.length < size) this.window = Buffer.allocUnsafe(size);
      this.windowBase = start;
      this.windowLength = this.file.read(this.window, 0, this.window.length, start);
    }
    if (end > this.windowBase + this.windowLength) this.short = true;
    return this.window.subarray(start - this.windowBase, Math.min(end, this.windowBase + this.windowLength) - this.windowBase);
  }

  /** Whether what was read may not be the file as it was scanned (see InputFile.changed). */
  changed(): boolean {
    return this.short || this.file.changed();
  }

  release(): void {
    this.released = true;
    this.window = undefined;
    this.file.release();
  }
}

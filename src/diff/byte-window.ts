/**
 * A file's bytes for a reader that moves forward through them: a window of a few megabytes is
 * held at a time and read again from the file when the reader asks past it. The aligned
 * reader of a previous iptables output (diff/iptables/aligned.ts) reads 78 MB at 20,000
 * Services this way without holding them (the whole file in memory would make `compile
 * --previous` use more memory than compile itself). Bytes already in memory (standard
 * input) are one window.
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { fileStamp } from '../parser/file-window.js';

/** The smallest window read from a file. */
const WINDOW = 4 << 20;

export class ByteWindow {
  /** The window: the bytes from `base` on, `view.length` of them. */
  private view: Buffer;
  private base = 0;
  private store: Buffer;
  /** The file as it was when opened (see changed). */
  private readonly opened: string | undefined;

  private constructor(
    /** The bytes in all. */
    readonly length: number,
    private readonly fd: number | undefined,
    whole?: Buffer,
    /** The smallest window read (small ones only in tests, to make the reader move windows often). */
    private readonly window = WINDOW,
  ) {
    this.store = whole ?? Buffer.allocUnsafe(Math.min(window, Math.max(1, length)));
    this.view = whole ?? this.store.subarray(0, 0);
    this.opened = fd === undefined ? undefined : fileStamp(fd);
  }

  /**
   * Whether the file was written to since it was opened: its windows, read at different
   * times, may then mix two versions, and what was read of them is not to be trusted.
   */
  changed(): boolean {
    if (this.fd === undefined) return false;
    try {
      return fileStamp(this.fd) !== this.opened;
    } catch {
      return true;
    }
  }

  static of(bytes: Buffer): ByteWindow {
    return new ByteWindow(bytes.length, undefined, bytes);
  }

  /** A regular file's bytes, or undefined when it cannot be opened now. Close it after use. */
  static file(path: string, window = WINDOW): ByteWindow | undefined {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return undefined;
    }
    try {
      return new ByteWindow(fstatSync(fd).size, fd, undefined, window);
    } catch {
      closeSync(fd);
      return undefined;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }

  /** Make bytes [from, to) (to ≤ length) part of the window. */
  private cover(from: number, to: number): void {
    if (from >= this.base && to <= this.base + this.view.length) return;
    if (this.fd === undefined) throw new Error('internal error: a byte window past its bytes');
    const size = Math.min(Math.max(this.window, to - from), this.length - from);
    if (this.store.length < size) this.store = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const r = readSync(this.fd, this.store, got, size - got, from + got);
      if (r === 0) break;
      got += r;
    }
    // A file that got shorter since: the reader sees its end earlier (and refuses; changed() says so too).
    this.base = from;
    this.view = this.store.subarray(0, got);
  }

  /** The byte at `i`, or -1 past the end. */
  at(i: number): number {
    if (i >= this.length || i < 0) return -1;
    if (i < this.base || i >= this.base + this.view.length) this.cover(i, Math.min(i + 1, this.length));
    return i - this.base < this.view.length ? this.view[i - this.base]! : -1;
  }

  /** The first `byte` at or after `from`, or -1. */
  indexOf(byte: number, from: number): number {
    // The bytes held first: a reader finding line ends goes a line at a time, and a window read
    // again from `from` per line was 4 MB read per line of a previous file far from the new.
    if (from >= this.base && from < this.base + this.view.length) {
      const k = this.view.indexOf(byte, from - this.base);
      if (k >= 0) return this.base + k;
    }
    let span = this.window;
    for (;;) {
      if (from >= this.length) return -1;
      const to = Math.min(from + span, this.length);
      this.cover(from, to);
      const k = this.view.indexOf(byte, from - this.base);
      if (k >= 0) return this.base + k;
      if (this.base + this.view.length >= this.length || this.view.length < to - this.base) return -1;
      span *= 2;
    }
  }

  /** Whether the bytes at `at` are `bytes[0, n)`. */
  equals(bytes: Buffer, n: number, at: number): boolean {
    if (at < 0 || this.length - at < n) return false;
    if (n === 0) return true;
    this.cover(at, at + n);
    if (at + n > this.base + this.view.length) return false;
    return this.view.compare(bytes, 0, n, at - this.base, at - this.base + n) === 0;
  }

  /** Bytes [start, end) as a latin1 string. */
  latin1(start: number, end: number): string {
    this.cover(start, end);
    return this.view.toString('latin1', start - this.base, Math.min(end - this.base, this.view.length));
  }
}

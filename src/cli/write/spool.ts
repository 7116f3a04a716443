/**
 * An output that must be complete before any of it is written: stdout, and -o to a FIFO or a
 * device (what is written there cannot be taken back, so a failure while rendering must leave
 * them without a byte). The rendered chunks are held until the last one: in memory up to
 * SPOOL.memoryBytes, beyond that in a temporary file that is unlinked as soon as it is
 * created (nothing is left behind, even by SIGKILL). At 100,000 Services the text is 400–720
 * MB, which held in the heap beside the rules pushed the peak past 2 GB.
 *
 * The file is in os.tmpdir() (TMPDIR). If it cannot be made or written (no space), the text
 * stays in memory: the output is the same either way.
 */

import { closeSync, openSync, readSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTag, releaseScratch, writeAll } from './low.js';

/**
 * How much is held in memory before the rest goes to the file (tests make it small). Small:
 * the rendered chunks are strings built by concatenation, which take about twice their length
 * in the heap; at 256 MiB an nftables compile of 100,000 Services to stdout peaked at 2.08 GB
 * (32 MiB: 1.46 GB), and spooling a 20,000-Service text costs no measurable CPU.
 */
export const SPOOL = { memoryBytes: 32 << 20 };

const READ_BACK = 1 << 20;

export class Spool {
  private chunks: Array<string | Uint8Array> = [];
  private held = 0;
  private fd: number | undefined;
  /** Bytes in the file. */
  private spilled = 0;
  /** The file could not be made: everything stays in memory. */
  private noFile = false;

  add(chunk: string | Uint8Array): void {
    if (this.fd !== undefined) {
      this.toFile(chunk);
      return;
    }
    this.chunks.push(chunk);
    // String length counts UTF-16 units: bytes for the ASCII rules are, near enough for a threshold.
    this.held += chunk.length;
    if (this.held > SPOOL.memoryBytes && !this.noFile) this.spill();
  }

  /** Everything added, in order (once; the file is read back a megabyte at a time). */
  *contents(): Generator<string | Uint8Array> {
    if (this.fd === undefined) {
      yield* this.chunks;
      return;
    }
    for (let at = 0; at < this.spilled; ) {
      // A buffer of its own per chunk: a consumer may keep chunks before writing them.
      const buf = Buffer.allocUnsafe(Math.min(READ_BACK, this.spilled - at));
      const n = readSync(this.fd, buf, 0, buf.length, at);
      if (n === 0) throw new Error('the output spool ended early');
      at += n;
      yield buf.subarray(0, n);
    }
    yield* this.chunks; // what stayed in memory after a failed spool write
  }

  release(): void {
    releaseScratch();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.chunks = [];
  }

  /** Move the chunks held to a new unlinked file; on any failure they stay in memory. */
  private spill(): void {
    const path = join(tmpdir(), `.kpc-output.${newTag()}.tmp`);
    try {
      this.fd = openSync(path, 'wx+', 0o600);
    } catch {
      this.noFile = true;
      return;
    } finally {
      try {
        unlinkSync(path);
      } catch {
        // never created
      }
    }
    const held = this.chunks;
    this.chunks = [];
    this.held = 0;
    for (const c of held) this.toFile(c);
  }

  private toFile(chunk: string | Uint8Array): void {
    if (this.chunks.length > 0) {
      // A write failed before: the rest stays in memory, after what the file holds.
      this.chunks.push(chunk);
      return;
    }
    try {
      writeAll(this.fd!, chunk);
      this.spilled += typeof chunk === 'string' ? Buffer.byteLength(chunk, 'utf8') : chunk.length;
    } catch {
      // The file's size may hold part of this chunk: only `spilled` bytes are read back.
      this.chunks.push(chunk);
    }
  }
}

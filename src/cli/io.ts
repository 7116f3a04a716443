/**
 * The CLI's connection to the outside: streams, TTY facts and the file system writes.
 * Commands take an Io so tests can run them in-process and capture everything.
 */

import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface Io {
  /** Write complete machine output (only called once a command has all of it). */
  stdout(chunks: readonly string[]): void;
  /** Diagnostics, notes and progress. */
  stderr(text: string): void;
  /** stderr is a terminal: colour and progress allowed there. */
  stderrIsTTY: boolean;
  /** stdout is a terminal (human views may colour it). */
  stdoutIsTTY: boolean;
  readStdin(): Uint8Array;
}

/**
 * Write a file atomically: a temporary file in the same directory, fsync, rename. Readers
 * see the old file or the new one, never a half-written one; on error nothing is left.
 */
export function writeFileAtomic(path: string, chunks: readonly string[]): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', 0o644);
    for (const chunk of chunks) writeSync(fd, chunk);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw e;
  }
}

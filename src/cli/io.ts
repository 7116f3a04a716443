/**
 * The CLI's connection to the outside: streams, TTY facts and the file system writes.
 * Commands take an Io so tests can run them in-process and capture everything.
 */

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { UsageError } from './exit-codes.js';

export interface Io {
  /** Write complete machine output (only called once a command has all of it). */
  stdout(chunks: ReadonlyArray<string | Uint8Array>): void;
  /** Diagnostics, notes and progress. */
  stderr(text: string): void;
  /** stderr is a terminal: colour and progress allowed there. */
  stderrIsTTY: boolean;
  /** stdout is a terminal (human views may colour it). */
  stdoutIsTTY: boolean;
  /** --quiet: notes are not printed (set once the command's flags are known). */
  quiet?: boolean;
  /** All of stdin, or an InputFileError once it passes maxBytes (see readBoundedFd). */
  readStdin(maxBytes: number): Uint8Array;
}

/**
 * Write a file atomically: a temporary file in the same directory, fsync, rename. Readers
 * see the old file or the new one, never a half-written one; on error nothing is left.
 */
export function writeFileAtomic(path: string, chunks: Iterable<string | Uint8Array>): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', 0o644);
    for (const chunk of chunks) writeAll(fd, chunk);
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
  } finally {
    scratch = EMPTY;
  }
}

export interface DirectoryFile {
  name: string;
  content: string;
  mode: number;
}

/**
 * Write a set of files as one directory, as atomically as a directory can be: everything is
 * written and synced into a sibling temporary directory, which then replaces `dir` by rename
 * (an existing `dir` is moved aside first and removed after). Readers never see a mix of old
 * and new files; on error the old directory is left as it was.
 */
export function writeDirectoryAtomic(dir: string, files: readonly DirectoryFile[]): void {
  const parent = dirname(dir);
  const tag = `${process.pid}.${randomBytes(4).toString('hex')}`;
  const tmp = join(parent, `.${basename(dir)}.${tag}.tmp`);
  mkdirSync(tmp, { mode: 0o755 });
  try {
    for (const f of files) {
      const fd = openSync(join(tmp, f.name), 'wx', f.mode);
      try {
        writeSync(fd, f.content);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    if (existsSync(dir)) {
      const old = join(parent, `.${basename(dir)}.${tag}.old`);
      renameSync(dir, old);
      renameSync(tmp, dir);
      rmSync(old, { recursive: true, force: true });
    } else {
      renameSync(tmp, dir);
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Where text chunks are encoded before writing, reused while one file is written (and let
 * go after): a large ruleset is ~80 chunks of a megabyte, and a fresh Buffer for each would be
 * 80 MB of memory outside V8's heap, which V8 counts and answers with extra collections.
 */
const EMPTY = Buffer.alloc(0);
let scratch = EMPTY;

/** writeSync until every byte is out (a single call may write less). */
function writeAll(fd: number, chunk: string | Uint8Array): void {
  let bytes: Uint8Array;
  if (typeof chunk === 'string') {
    const length = Buffer.byteLength(chunk, 'utf8');
    if (scratch.length < length) scratch = Buffer.allocUnsafe(length);
    bytes = scratch.subarray(0, scratch.write(chunk, 0, 'utf8'));
  } else {
    bytes = chunk;
  }
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off);
}

/**
 * Run `write`, which writes `path` (-o): a file-system failure becomes a clear usage error
 * naming the path and the code (the target directory must exist and be writable). Any other
 * error is kpc's own, for instance while the chunks of a streamed file are still being made;
 * it is not a write error and goes on as it is (the atomic writers leave nothing behind).
 */
export function explainWriteErrors(path: string, write: () => void): void {
  try {
    write();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === undefined) throw e;
    throw new UsageError(`cannot write ${path}: ${code}`);
  }
}

/**
 * The system-call level of kpc's writers: write every byte, sync a directory, name and
 * recognise kpc's own temporary entries, and tell whether the process that made one is alive.
 */

import { closeSync, constants, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/**
 * Where text chunks are encoded before writing, reused while one output is written (and let
 * go after, releaseScratch): a large ruleset is ~80 chunks of a megabyte, and a fresh Buffer for
 * each would be 80 MB of memory outside V8's heap, which V8 counts and answers with extra
 * collections.
 */
const EMPTY = Buffer.alloc(0);
let scratch = EMPTY;

export function releaseScratch(): void {
  scratch = EMPTY;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * writeSync until every byte is out. A single write(2) may write less than it was given (a
 * full or size-limited file system writes what fits, then the next call fails with ENOSPC or
 * EFBIG: Node ignores SIGXFSZ, so the limit is an error, not a kill); every short write is
 * followed by another until all is written or the system says why not. EAGAIN (a non-blocking
 * pipe or terminal inherited from the parent) waits a moment and tries again.
 */
export function writeAll(fd: number, chunk: string | Uint8Array): void {
  let bytes: Uint8Array;
  if (typeof chunk === 'string') {
    const length = Buffer.byteLength(chunk, 'utf8');
    if (scratch.length < length) scratch = Buffer.allocUnsafe(length);
    bytes = scratch.subarray(0, scratch.write(chunk, 0, 'utf8'));
  } else {
    bytes = chunk;
  }
  let off = 0;
  while (off < bytes.length) {
    try {
      off += writeSync(fd, bytes, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 2);
    }
  }
}

/** fsync a directory, so that the entries just created or renamed in it survive a crash. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `PID.HEX`: the middle of every temporary name one write uses. */
export function newTag(): string {
  return `${process.pid}.${randomBytes(4).toString('hex')}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export type TempSuffix = 'tmp' | 'd' | 'lnk' | 'old';

/**
 * The hidden siblings kpc makes for the output `base`: `.BASE.PID.HEX.SUFFIX` (tmp: a file
 * being written, or an older kpc's bundle being written; d: a bundle directory; lnk: the
 * symbolic link about to replace BASE; old: a directory moved aside). Nothing else matches.
 */
export function tempPattern(base: string): RegExp {
  return new RegExp(`^\\.${escapeRegExp(base)}\\.(\\d+)\\.[0-9a-f]{8}\\.(tmp|d|lnk|old)$`);
}

export function tempName(base: string, tag: string, suffix: TempSuffix): string {
  return `.${base}.${tag}.${suffix}`;
}

/**
 * Whether process `pid` may still be running (and so may still be using its temporary
 * entries). A zombie (exited, not yet reaped) is dead; when in doubt (no /proc, another
 * user's process), alive: a doubt keeps a leftover, it never removes what is in use.
 */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** An errno-style error, for the conditions the writers detect themselves. */
export function errnoError(code: string, message: string): NodeJS.ErrnoException {
  const e = new Error(message) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/**
 * `-o FILE` (iptables mode, and its --previous delta): what PATH names decides how it is written
 * (target.ts):
 *
 *   missing, or a regular file   atomically: `.NAME.PID.HEX.tmp` beside it (beside the file a
 *                                symbolic link points to, for a link), every byte written
 *                                (short writes continued), fsync, rename over NAME, fsync of
 *                                the directory. Readers see the old file or the complete new
 *                                one; on any failure the temporary file is removed and NAME is
 *                                as it was.
 *   a character device, a FIFO,  as a stream: opened for writing (no O_CREAT, no O_TRUNC),
 *   one of kpc's own fds         every byte written once the whole text is made. Such a target
 *   (/dev/stdout, /dev/fd/N)     is never renamed over or replaced: `-o /dev/null` writes to
 *                                /dev/null, even as root.
 *   a block device, a socket,    refused (exit 2): kpc writes rules, not disk images, and a
 *   a directory                  directory is ipvs mode's -o.
 *
 * Before writing, the temporary files of earlier runs on the same NAME whose process is gone
 * (killed by SIGKILL, or a crash) are removed; those of live processes are theirs.
 */

import { closeSync, constants, fsyncSync, lstatSync, openSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { KpcError } from '../../errors.js';
import { failingAs } from './errors.js';
import { fsyncDirectory, newTag, processAlive, releaseScratch, tempName, tempPattern, writeAll } from './low.js';
import { deferSignalsWhileWriting } from './signals.js';
import { resolveTarget } from './target.js';
import { Spool } from './spool.js';

/** A write refused or failed: the user's to fix (a path, a full disk), exit 2. */
const outputError = (message: string) => new KpcError('usage', 'output.write', message);

export type Chunks = Iterable<string | Uint8Array>;

/** Write `chunks` to -o `path` (see the file comment). System errors are WriteFailures. */
export function writeOutputFile(path: string, chunks: Chunks): void {
  const target = failingAs('unchanged', () => resolveTarget(path));
  switch (target.kind) {
    case 'missing':
    case 'file':
      return writeFileAtomic(target.path, chunks);
    case 'fd':
      return writeStream(target.fd, undefined, chunks);
    case 'stream':
      return writeStream(undefined, target.path, chunks);
    case 'directory':
      throw outputError(`-o ${path}: ${named(path, target.path)} is a directory; iptables mode writes one file (ipvs mode, --proxy-mode ipvs, writes a bundle directory)`);
    case 'refused':
      throw outputError(`-o ${path}: ${named(path, target.path)} is ${target.what}; kpc writes only to a regular file (replaced atomically), a character device, a FIFO or its own stdout`);
    case 'own-link':
      throw new Error('unreachable: no link is claimed for a file');
  }
}

/** `PATH`, or `PATH (which is RESOLVED)` when links lead elsewhere. */
export function named(path: string, resolved: string): string {
  return resolve(path) === resolved ? path : `${path} (${resolved})`;
}

/**
 * A stream target: the whole text is made first (a failure while making it writes nothing;
 * held in a spool, spool.ts), then written. A failure part way is reported as such (what was written is incomplete).
 */
function writeStream(fd: number | undefined, path: string | undefined, chunks: Chunks): void {
  const all = new Spool();
  try {
    for (const c of chunks) all.add(c);
    const own = fd === undefined;
    const out = fd ?? failingAs('unchanged', () => openSync(path!, constants.O_WRONLY | constants.O_NOCTTY));
    try {
      failingAs('incomplete', () => {
        for (const c of all.contents()) writeAll(out, c);
      });
    } finally {
      releaseScratch();
      if (own) closeSync(out);
    }
  } finally {
    all.release();
  }
}

/** Remove `.NAME.PID.HEX.tmp` files in `dir` left by processes that are gone. */
export function sweepStaleTempFiles(dir: string, name: string): void {
  const pattern = tempPattern(name);
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    const m = pattern.exec(entry);
    if (!m || m[2] !== 'tmp' || processAlive(Number(m[1]))) continue;
    try {
      if (lstatSync(join(dir, entry)).isFile()) unlinkSync(join(dir, entry));
    } catch {
      // gone already, or not ours to remove: left as it is
    }
  }
}

/** The atomic write of a regular file at its resolved `path` (see the file comment). */
export function writeFileAtomic(path: string, chunks: Chunks): void {
  const dir = dirname(path);
  const name = basename(path);
  sweepStaleTempFiles(dir, name);
  const tmp = join(dir, tempName(name, newTag(), 'tmp'));
  deferSignalsWhileWriting();
  let fd: number | undefined;
  try {
    fd = failingAs('unchanged', () => openSync(tmp, 'wx', 0o644));
    for (const chunk of chunks) failingAs('unchanged', () => writeAll(fd!, chunk));
    failingAs('unchanged', () => {
      fsyncSync(fd!);
      const done = fd!;
      fd = undefined;
      closeSync(done);
      renameSync(tmp, path);
    });
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // never created, or already renamed
    }
    throw e;
  } finally {
    releaseScratch();
  }
  // The rename is done: the new file is in place. Syncing the directory makes the rename
  // survive a crash of the machine.
  try {
    fsyncDirectory(dir);
  } catch {
    // a directory that cannot be opened for reading (rare): the rename itself stands
  }
}

/**
 * What an `-o PATH` names, found before anything is written: kpc never renames over a path it
 * has not looked at.
 *
 * Symbolic links are followed one at a time (each directory part through realpath), as the
 * kernel would, so that the final name is known: a regular file reached through a link is
 * replaced at its own name (the link stays a link, pointing at the new file), a name that does
 * not exist yet is created where the link points. The walk stops early at
 *   - one of kpc's own fds under /proc (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`): the
 *     output goes to that descriptor, as a shell redirect would send it;
 *   - a link the caller recognises as its own (the IPVS bundle's `DIR -> .DIR.PID.HEX.d`).
 */

import { lstatSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errnoError } from './low.js';

export type Target =
  /** Nothing there yet (the parent directory exists). */
  | { kind: 'missing'; path: string }
  | { kind: 'file'; path: string; stat: Stats }
  | { kind: 'directory'; path: string }
  /** One of kpc's own file descriptors, named through /proc (or /dev/stdout, /dev/fd/N). */
  | { kind: 'fd'; fd: number; path: string }
  /** A character device or a FIFO: written as a stream, opened without O_TRUNC or O_CREAT. */
  | { kind: 'stream'; path: string; what: 'character device' | 'FIFO' }
  /** What kpc never writes to: a block device, a socket. */
  | { kind: 'refused'; path: string; what: string /* 'a block device', ... */ }
  /** A symbolic link the caller claimed (`ownLink`), not followed. */
  | { kind: 'own-link'; path: string; link: string };

const MAX_LINKS = 40; // as the kernel's MAXSYMLINKS

/** fd N when `path` (directories already resolved) is one of this process's /proc fd links. */
function ownFd(path: string): number | undefined {
  const m = /^\/proc\/(?:self|thread-self|(\d+)(?:\/task\/\d+)?)\/fd\/(\d+)$/.exec(path);
  if (!m) return undefined;
  if (m[1] !== undefined && Number(m[1]) !== process.pid) return undefined;
  return Number(m[2]);
}

function typeOf(st: Stats): string {
  if (st.isBlockDevice()) return 'block device';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isFIFO()) return 'FIFO';
  if (st.isDirectory()) return 'directory';
  if (st.isFile()) return 'regular file';
  return 'special file';
}

/**
 * Follow `path` to what it names. `ownLink(name, link)` claims a symbolic link (not followed).
 * Errors: the parent directory's (ENOENT, ENOTDIR, EACCES, ...) and ELOOP, as errno errors.
 */
export function resolveTarget(path: string, ownLink?: (name: string, link: string) => boolean): Target {
  // A walk and a stat that disagree because another writer renamed its file over `path`
  // between them (two kpc runs to one -o) agree when looked at again; a name that is not
  // there to replace (a link in /proc to a deleted file) disagrees every time.
  let t = walkTarget(path, ownLink);
  for (let again = 0; again < RELOOKS && t.kind === 'refused' && t.disagreed === true; again++) {
    // A writer that keeps renaming (on a loaded machine, in step with these looks) is given a
    // millisecond to finish before the later looks: five looks in a row once all disagreed.
    if (again >= 3) Atomics.wait(PAUSE, 0, 0, 1);
    t = walkTarget(path, ownLink);
  }
  if (t.kind === 'refused') return { kind: 'refused', path: t.path, what: t.what };
  return t;
}

/** How many times a walk that disagreed with the kernel's stat is done again before kpc refuses. */
const RELOOKS = 20;
/** What resolveTarget waits on (never notified: each wait is a sleep of its timeout). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

type Walked = Exclude<Target, { kind: 'refused' }> | { kind: 'refused'; path: string; what: string; disagreed?: true };

function walkTarget(path: string, ownLink?: (name: string, link: string) => boolean): Walked {
  let p = resolve(path);
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const dir = realpathSync(dirname(p));
    p = join(dir, basename(p));
    const fd = ownFd(p);
    if (fd !== undefined) return { kind: 'fd', fd, path: p };
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return finalCheck(path, { kind: 'missing', path: p });
      throw e;
    }
    if (st.isSymbolicLink()) {
      const link = readlinkSync(p);
      if (ownLink?.(basename(p), link)) return { kind: 'own-link', path: p, link };
      p = resolve(dir, link);
      continue;
    }
    if (st.isFile()) return finalCheck(path, { kind: 'file', path: p, stat: st });
    if (st.isDirectory()) return { kind: 'directory', path: p };
    if (st.isCharacterDevice() || st.isFIFO()) return { kind: 'stream', path: p, what: st.isFIFO() ? 'FIFO' : 'character device' };
    return { kind: 'refused', path: p, what: `a ${typeOf(st)}` };
  }
  throw errnoError('ELOOP', `${path}: too many levels of symbolic links`);
}

/**
 * The walk above reads links as text; the kernel's own lookup (stat) must agree on what the
 * path is before kpc replaces or creates a file there. They differ for a link in /proc to
 * something that has no name (a pipe, a deleted file, another process's descriptor): then the
 * kernel's answer decides, and a file without a name to replace is refused.
 */
function finalCheck(original: string, t: Extract<Target, { kind: 'missing' | 'file' }>): Walked {
  let st: Stats | undefined;
  try {
    st = statSync(original);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (t.kind === 'missing' && st === undefined) return t;
  if (t.kind === 'file' && st !== undefined && st.dev === t.stat.dev && st.ino === t.stat.ino) return t;
  if (st !== undefined && (st.isCharacterDevice() || st.isFIFO())) return { kind: 'stream', path: original, what: st.isFIFO() ? 'FIFO' : 'character device' };
  if (st !== undefined && st.isDirectory()) return { kind: 'directory', path: t.path };
  return { kind: 'refused', path: original, what: st === undefined ? 'a link to nothing kpc can name' : `a ${typeOf(st)} without a name kpc can replace`, disagreed: true };
}

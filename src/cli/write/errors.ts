/**
 * How a failed write is told: one line naming the path, the system's code and what it means,
 * and what became of the target (`error: cannot write out.txt: ENOSPC (no space left on the
 * device); out.txt was left as it was`). Exit 2, as every problem the user must fix.
 */

import { KpcError } from '../../errors.js';

/** A write refused or failed: the user's to fix (a path, a full disk), exit 2. */
const outputError = (message: string) => new KpcError('usage', 'output.write', message);

const MEANING: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large: the file size limit (ulimit -f) or the file system\'s',
  EROFS: 'read-only file system',
  ENOENT: 'the directory it goes in does not exist',
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'input/output error',
  EPIPE: 'the reader closed it',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EBADF: 'not an open file descriptor',
  ENXIO: 'no such device, or a FIFO nobody reads',
  EMLINK: 'too many links',
  EISDIR: 'is a directory',
  EEXIST: 'already exists',
  ENOTEMPTY: 'a directory is not empty',
};

/** `CODE (meaning)` */
export function describeCode(code: string): string {
  const meaning = MEANING[code];
  return meaning === undefined ? code : `${code} (${meaning})`;
}

/** What became of the target after a failed write. */
export type TargetState =
  | 'unchanged'
  | 'incomplete'
  /** The previous directory is moved aside (detail says where); the next write puts it back. */
  | 'aside';

/** A system error met while writing an -o target, with what the target holds now. */
export class WriteFailure extends Error {
  constructor(
    readonly code: string,
    readonly state: TargetState,
    readonly detail?: string,
  ) {
    super(`${code}${detail !== undefined ? `: ${detail}` : ''}`);
    this.name = 'WriteFailure';
  }
}

/** The errno code of a system call's error (ENOSPC, EROFS, ...); undefined for anything else (Node's own ERR_* codes included). */
export function systemCode(e: unknown): string | undefined {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** Run a write step; a system error becomes a WriteFailure saying what the target holds. */
export function failingAs<T>(state: TargetState, step: () => T): T {
  try {
    return step();
  } catch (e) {
    const code = systemCode(e);
    if (e instanceof WriteFailure || code === undefined) throw e;
    throw new WriteFailure(code, state);
  }
}

/**
 * Run `write`, which writes `path` (-o, or `stdout`): a file-system failure becomes a usage
 * error naming the path, the code and what the target holds now. Any other error is kpc's
 * own (for instance while the chunks of a streamed file are still being made) and goes on as
 * it is; the writers have left the target as it was.
 */
export function explainWriteErrors<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    if (e instanceof WriteFailure) throw outputError(writeMessage(path, e.code, e.state, e.detail));
    const code = systemCode(e);
    if (code === undefined) throw e;
    throw outputError(writeMessage(path, code, 'unchanged'));
  }
}

function writeMessage(path: string, code: string, state: TargetState, detail?: string): string {
  const what = state === 'unchanged' ? `${path} was left as it was` : state === 'incomplete' ? `what was written to ${path} is incomplete` : (detail ?? '');
  return `cannot write ${path}: ${describeCode(code)}; ${what}`;
}

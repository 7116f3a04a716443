/**
 * kpc's stdout: fd 1 written directly (fs.writeSync), every byte, so that a failure is known
 * at once and said in kpc's words rather than surfacing later as an 'error' event and a stack
 * trace:
 *   - EPIPE: the reader stopped early (`kpc compile … | head`): kpc stops writing, quietly, and
 *     keeps its exit code, as a command in a pipeline should;
 *   - any other error (`> /dev/full`, a full or read-only file system, a file size limit): a
 *     usage error (exit 2), `error: cannot write stdout: ENOSPC (...); what was written to
 *     stdout is incomplete`, so a partial output is never taken for a success.
 * Node never opens fd 1 as a stream here (isatty, not process.stdout), so it stays as the
 * parent gave it; a non-blocking one is waited on (writeAll).
 */

import { isatty } from 'node:tty';
import { explainWriteErrors, failingAs, WriteFailure } from './errors.js';
import { releaseScratch, writeAll } from './low.js';

export interface StdoutWriter {
  write(chunks: Iterable<string | Uint8Array>): void;
  readonly isTTY: boolean;
}

export function fdStdout(fd = 1): StdoutWriter {
  let readerGone = false;
  return {
    isTTY: isatty(fd),
    write(chunks) {
      if (readerGone) return;
      explainWriteErrors('stdout', () => {
        try {
          failingAs('incomplete', () => {
            for (const c of chunks) writeAll(fd, c);
          });
        } catch (e) {
          if (e instanceof WriteFailure && e.code === 'EPIPE') readerGone = true;
          else throw e;
        } finally {
          releaseScratch();
        }
      });
    },
  };
}

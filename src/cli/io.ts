/**
 * The CLI's connection to the outside: streams, TTY facts and the file system writes.
 * Commands take an Io so tests can run them in-process and capture everything.
 *
 * The writers live in write/: file.ts (-o FILE: atomic for a regular file, a stream for a
 * device or FIFO), bundle.ts (ipvs mode's -o DIR, replaced by one atomic rename of a link),
 * stdout.ts (fd 1, errors said in kpc's words), errors.ts (how a failed write is told),
 * signals.ts (SIGINT/SIGTERM/SIGHUP never leave a temporary entry), target.ts (what a path
 * names, links followed). RELIABILITY.md states what they promise and how it is tested.
 */

export { explainWriteErrors } from './write/errors.js';
export { writeOutputFile } from './write/file.js';
export { writeBundleDir, type BundleOptions, type DirectoryFile } from './write/bundle.js';

export interface Io {
  /** Write complete machine output (only called once a command has all of it). */
  stdout(chunks: Iterable<string | Uint8Array>): void;
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

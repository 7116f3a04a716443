/**
 * The --events streams of `kpc watch`, read as their bytes arrive, cut into events.
 *
 * kubectl watches one resource type per call (`kubectl get svc,endpointslices --watch` is
 * refused: "watch is only supported on individual resources and resource collections - more
 * than 1 resource was found"), so following Services, EndpointSlices and Nodes takes three
 * streams. Joining them in a shell pipe would interleave their bytes (a write of more than
 * PIPE_BUF bytes is not atomic), so each is read on its own and its events are handed on
 * whole, in the order they complete.
 *
 * One stream is read with blocking reads (a read returns as soon as bytes arrive). Several are
 * read without blocking, in turn, sleeping a little while none has bytes. kpc's commands are
 * synchronous, so this is a poll loop rather than the event loop.
 */

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { usageError } from '../errors.js';
import { EventSplitter, type EventPiece } from '../parser/watch-events.js';

/** One --events stream: its name in diagnostics (`<stdin>` for -), and where its bytes come from. */
interface Source {
  path: string;
  name: string;
  fd: number;
  splitter: EventSplitter;
  ended: boolean;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
export function sleep(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** The longest sleep between looks at idle streams: an event waits at most this long to be seen. */
const MAX_IDLE_MS = 8;

export function streamName(path: string): string {
  return path === '-' ? '<stdin>' : path;
}

/**
 * Reads every stream to its end, calling handle for each event in the order events complete
 * (each stream's own events in their order). Returns when all streams have ended.
 */
export function readStreams(paths: readonly string[], maxBytes: number, handle: (piece: EventPiece, stream: string) => void): void {
  const sources: Source[] = [];
  const buffer = new Uint8Array(1 << 16);
  try {
    for (const path of paths) sources.push(openSource(path, paths.length > 1));
    let idle = 0;
    while (sources.some((s) => !s.ended)) {
      let progressed = false;
      for (const s of sources) {
        if (s.ended) continue;
        const n = readSome(s, buffer);
        if (n === undefined) continue;
        progressed = true;
        if (n === 0) {
          s.ended = true;
          const last = s.splitter.end();
          if (last) handle(last, s.name);
          continue;
        }
        for (const piece of s.splitter.feed(buffer.subarray(0, n))) handle(piece, s.name);
        if (s.splitter.pending > maxBytes) throw usageError(`--events ${s.path}: an event of more than ${maxBytes} bytes (--max-input-size)`);
      }
      if (progressed) idle = 0;
      else sleep(Math.min(MAX_IDLE_MS, 2 ** idle++));
    }
  } finally {
    for (const s of sources) if (s.fd !== 0) closeSync(s.fd);
  }
}

/** Bytes read into buffer (0 at the stream's end), or undefined when none are there yet. */
function readSome(s: Source, buffer: Uint8Array): number | undefined {
  try {
    return readSync(s.fd, buffer, 0, buffer.length, null);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN') return undefined;
    if (code === 'EOF') return 0;
    throw usageError(`--events ${s.path}: ${(e as Error).message}`);
  }
}

/**
 * Opens one stream. Alone it is read blocking, as it comes. Among several, a pipe, FIFO or
 * terminal is opened again without blocking (Linux reopens the same pipe through its
 * /proc/self/fd entry); a FIFO is first opened blocking, which waits for its writer, so that
 * "no bytes and no writer" (the end) is not confused with "no writer yet".
 */
function openSource(path: string, several: boolean): Source {
  const source = (fd: number): Source => ({ path, name: streamName(path), fd, splitter: new EventSplitter(), ended: false });
  let fd: number;
  try {
    fd = path === '-' ? 0 : openSync(path, 'r');
  } catch (e) {
    throw usageError(`--events: the path "${path}" cannot be opened: ${(e as Error).message}`);
  }
  const fail = (message: string): never => {
    if (fd !== 0) closeSync(fd);
    throw usageError(message);
  };
  const st = fstatSync(fd);
  if (st.isDirectory()) fail(`--events ${path} is a directory; give a file, a FIFO or - (standard input)`);
  // A regular file's reads never wait: it is read to its end as it is.
  if (!several || st.isFile()) return source(fd);
  let again = -1;
  try {
    again = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    fail(`--events ${path}: cannot be read beside other --events streams (${(e as Error).message}); give it alone, or as a FIFO or file`);
  }
  // Standard input itself stays open (it is read through `again`).
  if (fd !== 0) closeSync(fd);
  return source(again);
}

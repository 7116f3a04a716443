/**
 * Where manifests come from: `-f` paths (files, directories, `-` for stdin), like kubectl.
 * Reads bytes and turns them into text; knows nothing of YAML.
 */

import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { constants, isAscii, isUtf8 } from 'node:buffer';
import { inputFileError, isKpcError, KpcError } from '../errors.js';
import { AsciiBytes } from '../lang/ascii-bytes.js';
import { PiecedText } from '../lang/pieced-text.js';
import type { TextSource } from '../lang/text-source.js';

/** One input file's bytes (checked to be UTF-8 text), with the name diagnostics show. */
export interface Source {
  name: string;
  bytes: Uint8Array;
}

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/**
 * A path that cannot be opened. Reported the same way for every option that names a path
 * (-f, --config, --previous, --golden, --rules), in kubectl's words (`the path "x" does not
 * exist`), without a line and column: nothing in the file was read. The option names itself
 * (KpcError.withOption); -f does not, as kubectl does not.
 */
export function pathError(path: string, e: unknown): KpcError {
  const code = (e as NodeJS.ErrnoException).code;
  const problem =
    code === 'ENOENT' ? 'does not exist'
    : code === 'ENOTDIR' ? 'does not exist (a part of it is not a directory)'
    : code === 'EACCES' || code === 'EPERM' ? 'cannot be read: permission denied'
    : code === 'EISDIR' ? 'is a directory'
    : code === 'ELOOP' ? 'cannot be read: too many levels of symbolic links'
    : `cannot be read: ${code ?? String(e)}`;
  return new KpcError('usage', 'path.unreadable', `the path "${path}" ${problem}`);
}

function fileError(file: string, message: string, line = 1, column = 1): KpcError {
  return inputFileError({ file, line, column, path: '', message, severity: 'error' });
}

/** What expandPaths saw besides the files it returns. */
export interface PathsSeen {
  /** Notes on entries skipped (FIFOs, devices). */
  skipped: string[];
  /** Subfolders not entered (no -R); see subfoldersWithManifests. */
  subfolders: string[];
}

/**
 * Expand `-f` arguments into file paths in a stable order: a directory gives its manifest
 * files sorted by name (and, with `recursive`, those of its subdirectories).
 */
export function expandPaths(paths: readonly string[], recursive: boolean, seen: PathsSeen = { skipped: [], subfolders: [] }): string[] {
  const out: string[] = [];
  let stdinSeen = false;
  for (const p of paths) {
    if (p === '-') {
      if (stdinSeen) throw fileError('-', 'standard input ("-") can be read only once, but -f names it twice');
      stdinSeen = true;
      out.push('-');
      continue;
    }
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      throw pathError(p, e);
    }
    if (st.isDirectory()) out.push(...listDirectory(p, recursive, seen));
    else out.push(p);
  }
  return out;
}

function listDirectory(dir: string, recursive: boolean, seen: PathsSeen): string[] {
  const out: string[] = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) out.push(...listDirectory(full, recursive, seen));
      else seen.subfolders.push(full);
      continue;
    }
    if (!MANIFEST_EXTENSIONS.some((ext) => e.name.endsWith(ext))) continue;
    // Only regular files are read from a directory: a FIFO would block forever and a device
    // (a `*.yaml` symlink to /dev/zero) would never end. Named explicitly with -f, they are
    // read as streams under the size limit instead.
    const kind = e.isFile() ? 'file' : nonRegularKind(full);
    if (kind === 'file') out.push(full);
    else seen.skipped.push(`skipped ${full}: not a regular file (${kind})`);
  }
  return out;
}

/**
 * The first few of the subfolders not entered that hold manifest files: the hint "use -R"
 * when nothing was read. Asked only then, and the walk is bounded (a repository's
 * node_modules should not make an error slow).
 */
export function subfoldersWithManifests(seen: PathsSeen, limit = 3): string[] {
  const budget = { entries: 20_000 };
  const out: string[] = [];
  for (const dir of seen.subfolders) {
    if (out.length >= limit || budget.entries <= 0) break;
    if (holdsManifest(dir, budget)) out.push(dir);
  }
  return out;
}

function holdsManifest(dir: string, budget: { entries: number }): boolean {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  budget.entries -= entries.length;
  if (entries.some((e) => e.isFile() && MANIFEST_EXTENSIONS.some((ext) => e.name.endsWith(ext)))) return true;
  return entries.some((e) => e.isDirectory() && budget.entries > 0 && holdsManifest(join(dir, e.name), budget));
}

/** What a directory entry that is not plainly a file is, following symlinks. */
function nonRegularKind(path: string): string {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return 'a broken symlink';
  }
  return st.isFile() ? 'file' : describeFileType(st);
}

function describeFileType(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a directory';
  return 'not a regular file';
}

/**
 * Check that bytes are text: UTF-8 only, no NUL bytes (binary garbage gets a clear error,
 * not a parse). The text itself is decoded later, piece by piece: a cluster's worth of
 * manifests can be larger than one JavaScript string.
 */
export function checkText(name: string, bytes: Uint8Array): Source {
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw nulError(name, nul);
  if (!isUtf8(bytes)) throw fileError(name, 'not a text file: invalid UTF-8; manifests are UTF-8 YAML or JSON');
  // A byte-order mark is not part of the text.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  return { name, bytes };
}

/** The longest string Node.js makes (a named text is read as one). */
const MAX_TEXT_LENGTH = constants.MAX_STRING_LENGTH;

/** How much one input (a file, stdin) may hold unless --max-input-size says otherwise. */
export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024 * 1024;

/** A byte count as the size flag writes it: 1Gi, 512Mi, 64Ki or plain bytes. */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [['Gi', 1 << 30], ['Mi', 1 << 20], ['Ki', 1 << 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes} bytes`;
}

export function inputTooLarge(name: string, maxBytes: number, size?: number): KpcError {
  const seen = size === undefined ? 'the stream went on past it' : `it holds ${size} bytes`;
  return inputFileError({
    file: name,
    line: 1,
    column: 1,
    path: '',
    message: `input too large: over the limit of ${formatSize(maxBytes)} per input (${seen}); raise it with --max-input-size`,
    severity: 'error',
  });
}

function nulError(name: string, offset: number): KpcError {
  return fileError(name, `not a text file: NUL byte at offset ${offset}; manifests are UTF-8 YAML or JSON`);
}

/** Sleep without a timer (the readers are synchronous): for a non-blocking stdin that has no data yet. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Read an open file descriptor to its end, but never more than maxBytes: a regular file is
 * refused from its size before anything is read; a stream (stdin, a FIFO, a device) is read
 * in pieces and stopped as soon as it passes the limit, or at the first NUL byte (binary
 * data such as /dev/zero is not text, and need not be read to the end to know it).
 */
export function readBoundedFd(fd: number, name: string, maxBytes: number, stopAtNul = true): Buffer {
  const st = fstatSync(fd);
  if (st.isFile()) {
    if (st.size > maxBytes) throw inputTooLarge(name, maxBytes, st.size);
    // The common case: one buffer of the file's size (plus one byte to notice growth).
    const buf = Buffer.allocUnsafe(st.size + 1);
    const length = readInto(fd, name, buf, 0, 0, stopAtNul);
    if (length <= st.size) return buf.subarray(0, length);
    return readStream(fd, name, maxBytes, stopAtNul, buf);
  }
  return readStream(fd, name, maxBytes, stopAtNul);
}

/** Read into buf from offset until it is full or the input ends; the new end. */
function readInto(fd: number, name: string, buf: Buffer, offset: number, base: number, stopAtNul: boolean): number {
  let length = offset;
  while (length < buf.length) {
    let n: number;
    try {
      n = readSync(fd, buf, length, buf.length - length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        pause(5);
        continue;
      }
      if (code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    const nul = stopAtNul ? buf.subarray(length, length + n).indexOf(0) : -1;
    if (nul >= 0) throw nulError(name, base + length + nul);
    length += n;
  }
  return length;
}

const STREAM_PIECE = 8 << 20;

/** A stream, or a file that grew while read: pieces of 8 MiB, joined once at the end. */
function readStream(fd: number, name: string, maxBytes: number, stopAtNul: boolean, first?: Buffer): Buffer {
  const pieces: Buffer[] = first ? [first] : [];
  let total = first?.length ?? 0;
  for (;;) {
    const piece = Buffer.allocUnsafe(STREAM_PIECE);
    const n = readInto(fd, name, piece, 0, total, stopAtNul);
    total += n;
    if (total > maxBytes) throw inputTooLarge(name, maxBytes);
    pieces.push(n === piece.length ? piece : piece.subarray(0, n));
    if (n < piece.length) break;
  }
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, total);
}

/**
 * A named input file, under the size limit (see readBoundedFd). Rules files (--previous)
 * are not stopped at a NUL byte: their reader reports the line that is not a rule.
 */
export function readBoundedFile(path: string, maxBytes: number, stopAtNul = true): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw pathError(path, e);
  }
  try {
    return readBoundedFd(fd, path, maxBytes, stopAtNul);
  } catch (e) {
    if (e instanceof KpcError) throw e;
    throw pathError(path, e);
  } finally {
    closeSync(fd);
  }
}

export function readSource(path: string, readStdin: (maxBytes: number) => Uint8Array, maxBytes: number): Source {
  if (path === '-') return checkText('<stdin>', readStdin(maxBytes));
  return checkText(path, readBoundedFile(path, maxBytes));
}

/** Reads standard input whole, under a size limit. */
export type StdinReader = (maxBytes: number) => Uint8Array;

/**
 * A text input named by an option (--previous, --golden, --rules), under the input size
 * limit; `-` is standard input (the CLI makes sure only one option takes it). Rules files are
 * not stopped at a NUL byte: their reader reports the line that is not a rule.
 */
export function readNamedText(path: string, option: string, stdin: StdinReader, maxBytes = DEFAULT_MAX_INPUT_BYTES): string {
  return readNamed(path, option, namedBytes(path, stdin, maxBytes), wholeText);
}

/**
 * readNamedText, except that ASCII text longer than `maxText` characters (by default, longer
 * than one string can be) is its bytes, not decoded or refused: a previous output or golden
 * file compared as lines (kpc's nftables output at 100,000 Services is 721 MB). oneText gives
 * the string, or the refusal, when a reader needs one string.
 */
export function readNamedLineText(path: string, option: string, stdin: StdinReader, maxBytes = DEFAULT_MAX_INPUT_BYTES, maxText = MAX_TEXT_LENGTH): string | AsciiBytes {
  return readNamed(path, option, namedBytes(path, stdin, maxBytes), (name, bytes) => (bytes.byteLength > maxText ? AsciiBytes.of(bytes) : undefined) ?? wholeText(name, bytes));
}

/** A text read by readNamedLineText as one string, or readNamedText's refusal of it (too large to read whole). */
export function oneText(path: string, option: string, text: string | AsciiBytes): string {
  if (typeof text === 'string') return text;
  return readNamed(path, option, () => text.bytes, wholeText);
}

/**
 * readNamedText for a reader that takes a TextSource (the lazy rules readers of `kpc trace
 * --rules`): ASCII bytes (kpc's and kube-proxy's rules) are not decoded (AsciiBytes); other
 * text longer than `maxPiece` bytes is decoded in pieces of at most that many, each ending at
 * a line's end, instead of refused for being longer than one string can be.
 */
export function readNamedTextSource(path: string, option: string, stdin: StdinReader, maxBytes = DEFAULT_MAX_INPUT_BYTES, maxPiece = MAX_TEXT_LENGTH): TextSource {
  return readNamed(path, option, namedBytes(path, stdin, maxBytes), (name, bytes) => {
    const ascii = AsciiBytes.of(bytes);
    if (ascii) return ascii;
    return bytes.byteLength > maxPiece ? new PiecedText(linePieces(name, bytes, maxPiece).map(decodeText)) : wholeText(name, bytes);
  });
}

/** How a named input's bytes are read: standard input, or a file (not stopped at a NUL byte). */
function namedBytes(path: string, stdin: StdinReader, maxBytes: number): () => Uint8Array {
  return () => (path === '-' ? stdin(maxBytes) : readBoundedFile(path, maxBytes, false));
}

/** The bytes of a named input as `read` takes them, its errors naming the input and the option. */
function readNamed<T>(path: string, option: string, bytesOf: () => Uint8Array, read: (name: string, bytes: Uint8Array) => T): T {
  try {
    const bytes = bytesOf();
    return read(path === '-' ? '<stdin>' : path, bytes);
  } catch (e) {
    if (isKpcError(e, 'path.unreadable')) throw e.withOption(option);
    if (isKpcError(e, 'input.unreadable')) throw e.inFile(path, option);
    throw e;
  }
}

function wholeText(name: string, bytes: Uint8Array): string {
  // One JavaScript string holds at most ~512 MiB (kpc's nftables output at 100,000 Services is 721 MB).
  if (bytes.byteLength > MAX_TEXT_LENGTH) {
    throw fileError(name, `too large to read whole: ${bytes.byteLength} bytes, and one text holds at most ${MAX_TEXT_LENGTH} characters`);
  }
  return decodeText(bytes);
}

/** `bytes` cut after line feeds into pieces of at most `maxPiece` bytes (UTF-8 never holds a line feed inside a character). */
function linePieces(name: string, bytes: Uint8Array, maxPiece: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let start = 0;
  while (bytes.byteLength - start > maxPiece) {
    const cut = bytes.lastIndexOf(0x0a, start + maxPiece - 1);
    if (cut < start) throw fileError(name, `too large to read: a line from byte ${start} on is longer than ${maxPiece} bytes`);
    pieces.push(bytes.subarray(start, cut + 1));
    start = cut + 1;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

/** Bytes as readNamedText decodes them (UTF-8). */
export function decodeText(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // ASCII (kpc's own outputs) reads the same in either encoding; latin1 is a plain copy,
  // utf8 decodes (~0.1–0.3 s for a 78 MB previous output).
  return isAscii(buffer) ? buffer.toString('latin1') : buffer.toString('utf8');
}

/** True when `path` names a directory (and not `-`). */
export function isDirectoryPath(path: string): boolean {
  if (path === '-') return false;
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

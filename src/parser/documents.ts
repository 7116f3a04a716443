/**
 * Text → objects: which reader a file goes to, as kubectl's reader (YAMLOrJSONDecoder) decides.
 *
 * Input whose first non-space character is `{` is JSON: a stream of objects and lists of any
 * layout, compact one-line text included (json-stream.ts, json-objects.ts). Anything else is
 * YAML (yaml-documents.ts), whose lines are capped in length.
 *
 * A large JSON file is not held whole (file-window.ts): it is scanned through a sliding
 * window, then its objects are read back range by range as the loader takes them. Anything
 * unusual about it (not JSON, a syntax error, an object that does not parse, a NUL byte, bad
 * UTF-8) sends it to the whole-file reader, which says what is wrong and where, so that the
 * diagnostics are those of a file read whole.
 */

import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { FileText, FileWindow, InputFile, newlineIn, StreamAbandoned, FILE_WINDOW } from './file-window.js';
import { readSource, type Source } from './input-files.js';
import { JsonObjects, memorySource, type JsonSource, type ReadOutcome } from './json-objects.js';
import { isJsonSpace } from './json-bytes.js';
import { scanJsonStream } from './json-stream.js';
import { findJsonSyntaxError } from './json-syntax.js';
import { LineIndex, scanLines } from './lines.js';
import { diagnosticAt, LIMITS, MAX_DOCUMENT_BYTES, type ReadResult } from './raw-objects.js';
import { openYAML } from './yaml-documents.js';

export type { RawObject, ReadResult } from './raw-objects.js';
export { LIMITS } from './raw-objects.js';
export type { JsonObjects, LazyObjects, ObjectFailure, ReadOutcome } from './json-objects.js';

const utf8 = new TextDecoder();

/**
 * An input named by -f (`-` is standard input): a large regular JSON file read in pieces,
 * anything else read whole (openDocuments).
 */
export function openInput(path: string, readStdin: (maxBytes: number) => Uint8Array, maxBytes: number): ReadOutcome {
  const whole = () => openDocuments(readSource(path, readStdin, maxBytes));
  return (path === '-' ? undefined : openLargeJSON(path, maxBytes, whole)) ?? whole();
}

/**
 * A large JSON file's objects, read in pieces; undefined when it is to be read whole (see the
 * file comment). `whole` is how the objects are read instead once one of them fails.
 */
export function openLargeJSON(path: string, maxBytes: number, whole: () => ReadOutcome): ReadOutcome | undefined {
  let fd: number;
  try {
    // Looked at before it is opened: opening a FIFO would wait for its writer.
    const st = statSync(path);
    if (!st.isFile() || st.size <= FILE_WINDOW.bytes || st.size > maxBytes) return undefined;
    fd = openSync(path, 'r');
  } catch {
    return undefined; // the whole-file reader says why
  }
  let file: InputFile | undefined;
  let handedOver = false;
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const head = Buffer.alloc(3);
    readSync(fd, head, 0, 3, 0);
    const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    file = new InputFile(path, fd, bom);
    const window = new FileWindow(file, maxBytes - bom);
    if (!startsWithBrace(window.buf)) return undefined;
    const scan = scanJsonStream(window, true);
    if (!scan) return undefined;
    const text = new FileText(file);
    const source: JsonSource = { name: path, bytes: (start, end) => text.bytes(start, end), changed: () => text.changed(), release: () => text.release() };
    handedOver = true;
    return { json: new JsonObjects(source, scan.objects, whole, new LineIndex(newlineIn(file))) };
  } catch (e) {
    // Not the plain case, or a read that failed (EIO...): the whole-file reader says what is wrong.
    if (e instanceof StreamAbandoned || (e as NodeJS.ErrnoException).code !== undefined) return undefined;
    throw e;
  } finally {
    if (!handedOver) {
      if (file) file.release();
      else closeSync(fd);
    }
  }
}

/** Parse one source into its objects (a list yields its items). */
export function readDocuments(src: Source): ReadResult {
  const opened = openDocuments(src);
  return 'json' in opened ? opened.json.readAll() : opened.read;
}

/**
 * Like readDocuments, but JSON input comes back unparsed (see JsonObjects), so that its
 * objects can be parsed, decoded and dropped one at a time.
 */
export function openDocuments(src: Source): ReadOutcome {
  if (startsWithBrace(src.bytes)) return openJSON(src, true);
  return openYAMLSource(src);
}

function startsWithBrace(bytes: Uint8Array): boolean {
  let i = 0;
  while (i < bytes.length && isJsonSpace(bytes[i])) i++;
  return bytes[i] === 0x7b;
}

/** JSON: the objects' ranges, or the first syntax error with its position. */
function openJSON(src: Source, guessItemEnds: boolean): ReadOutcome {
  const lines = new LineIndex(src.bytes);
  const scan = scanJsonStream(src.bytes, guessItemEnds);
  if (scan) {
    const rescan = scan.guessed ? () => openJSON(src, false) : undefined;
    return { json: new JsonObjects(memorySource(src), scan.objects, rescan, lines) };
  }
  // A wrong guess can make well-formed JSON look malformed: only an exact scan may say so.
  if (guessItemEnds) return openJSON(src, false);
  const e = findJsonSyntaxError(src.bytes, 0, src.bytes.length);
  const at = lines.at(e.offset);
  return { read: { objects: [], diagnostics: [diagnosticAt(src.name, at.line, at.column, `JSON: ${e.message}`)] } };
}

function openYAMLSource(src: Source): ReadOutcome {
  const lines = scanLines(src.bytes, LIMITS.maxLineBytes);
  if ('tooLong' in lines) {
    const { line, length } = lines.tooLong;
    return { read: { objects: [], diagnostics: [diagnosticAt(src.name, line, 1, `line is ${length} characters long; kpc accepts at most ${LIMITS.maxLineBytes} per YAML line (no Kubernetes object needs more; JSON has no such limit)`)] } };
  }
  if (src.bytes.length > MAX_DOCUMENT_BYTES) {
    return { read: { objects: [], diagnostics: [diagnosticAt(src.name, 1, 1, `file is ${src.bytes.length} bytes; kpc reads larger inputs only as JSON (kubectl get -o json) or split into several files`)] } };
  }
  return openYAML(src.name, utf8.decode(src.bytes));
}

/**
 * Text → objects: which reader a file goes to, as kubectl's reader (YAMLOrJSONDecoder) decides.
 *
 * Input whose first non-space character is `{` is JSON: a stream of objects and lists of any
 * layout, compact one-line text included (json-stream.ts, json-objects.ts). Anything else is
 * YAML (yaml-documents.ts), whose lines are capped in length.
 */

import type { Source } from './input-files.js';
import { JsonObjects, type ReadOutcome } from './json-objects.js';
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
    return { json: new JsonObjects(src, scan.objects, rescan, lines) };
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

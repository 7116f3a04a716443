/**
 * A stream of watch events, as `kubectl get endpointslices -A --watch --output-watch-events
 * -o json` prints them (one resource type per stream): JSON objects `{"type": ..., "object": {...}}`,
 * concatenated, compact (one a line) or indented. A bare object (kubectl without
 * --output-watch-events) means add-or-replace.
 *
 * Two parts:
 *   - EventSplitter cuts the bytes, as they arrive, into top-level JSON values, each with the
 *     line and column where it starts in the stream. Only the value being read is kept, so a
 *     stream of any length costs the largest event's bytes. A value whose braces never close is
 *     cut where the next event plainly starts (a `{` at the start of a line, where kubectl
 *     starts every event, compact or indented), so one malformed event spoils only itself.
 *   - readEvent parses one value and decodes its object exactly as a file's object is decoded
 *     (parser/load.ts: JSON with duplicate-key and depth checks, namespace default, the API
 *     server's validation), with every diagnostic placed at its line:column in the stream.
 */

import type { Diagnostic, ObjectOrigin } from '../diagnostics.js';
import { locateError } from '../diagnostics.js';
import { findJsonSyntaxError } from './json-syntax.js';
import { isJsonSpace } from './json-bytes.js';
import { JsonObjects, memorySource } from './json-objects.js';
import { LineIndex } from './lines.js';
import { fillNamespace } from './load.js';
import { decodeObject, type DecodeOptions } from './k8s/decode.js';
import type { KubeObject } from './k8s/types.js';
import { diagnosticAt, MAX_DOCUMENT_BYTES } from './raw-objects.js';

/** One top-level value of the stream: its bytes and where it starts (1-based). */
export interface EventPiece {
  bytes: Uint8Array;
  line: number;
  column: number;
  /** True when the value was cut short (its braces never closed). */
  cut: boolean;
}

const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_SQ = 0x5b;
const CLOSE_SQ = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/** Cuts a byte stream into top-level JSON values as the bytes arrive. */
export class EventSplitter {
  /** The bytes of the value being read (chunks, joined when it ends). */
  private parts: Uint8Array[] = [];
  private partBytes = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Whether a value is being read, and where it started. */
  private reading = false;
  private startLine = 1;
  private startColumn = 1;
  /** The stream position of the next byte. */
  private line = 1;
  private column = 1;
  /** The byte before the next one was a newline (or the stream's start). */
  private atLineStart = true;

  /** The values that the chunk completes, in order. */
  feed(chunk: Uint8Array): EventPiece[] {
    const out: EventPiece[] = [];
    let from = -1; // where the current value's bytes start in this chunk
    if (this.reading) from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (!this.reading) {
        if (!isJsonSpace(b)) {
          this.begin();
          from = i;
        }
      } else if (b === OPEN && this.atLineStart && this.depth > 0) {
        // A new event starts while the last one is open: that one was malformed.
        this.take(chunk, from, i);
        out.push(this.finish(true));
        this.begin();
        from = i;
      }
      if (this.reading) this.step(b);
      this.advance(b);
      if (this.reading && this.depth <= 0 && !this.inString && this.closesHere(b)) {
        this.take(chunk, from, i + 1);
        out.push(this.finish(false));
        from = -1;
      }
    }
    if (this.reading && from >= 0) this.take(chunk, from, chunk.length);
    return out;
  }

  /** The stream's end: what is left of an unfinished value, if anything. */
  end(): EventPiece | undefined {
    if (!this.reading) return undefined;
    return this.finish(true);
  }

  /** Bytes of an unfinished value held, for the caller's size limit. */
  get pending(): number {
    return this.partBytes;
  }

  private begin(): void {
    this.reading = true;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.startLine = this.line;
    this.startColumn = this.column;
    this.scalar = false;
  }

  /** A top-level value that is not an object or array (a number, a word): ends at space. */
  private scalar = false;

  private step(b: number): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (b === BACKSLASH) this.escaped = true;
      else if (b === QUOTE) this.inString = false;
      return;
    }
    if (b === QUOTE) this.inString = true;
    else if (b === OPEN || b === OPEN_SQ) this.depth++;
    else if (b === CLOSE || b === CLOSE_SQ) this.depth--;
    else if (this.depth === 0) this.scalar = true;
  }

  /** Whether byte b (just stepped) ends the top-level value. */
  private closesHere(b: number): boolean {
    if (b === CLOSE || b === CLOSE_SQ) return true;
    // A stray top-level scalar or a string ends at the next space (it is an error anyway).
    if (b === QUOTE) return !this.scalar;
    return this.scalar && b === NEWLINE;
  }

  private advance(b: number): void {
    if (b === NEWLINE) {
      this.line++;
      this.column = 1;
      this.atLineStart = true;
    } else {
      // Columns count bytes, as the file diagnostics do.
      this.column++;
      this.atLineStart = false;
    }
  }

  private take(chunk: Uint8Array, from: number, to: number): void {
    if (to > from) {
      // A copy: the caller may reuse its chunk buffer.
      this.parts.push(chunk.slice(from, to));
      this.partBytes += to - from;
    }
  }

  private finish(cut: boolean): EventPiece {
    let bytes: Uint8Array;
    if (this.parts.length === 1) bytes = this.parts[0]!;
    else {
      bytes = new Uint8Array(this.partBytes);
      let at = 0;
      for (const p of this.parts) {
        bytes.set(p, at);
        at += p.length;
      }
    }
    this.parts = [];
    this.partBytes = 0;
    this.reading = false;
    return { bytes, line: this.startLine, column: this.startColumn, cut };
  }
}

/** A line index over one piece whose positions are those of the whole stream. */
class ShiftedLines extends LineIndex {
  constructor(
    bytes: Uint8Array,
    private readonly baseLine: number,
    private readonly baseColumn: number,
  ) {
    super(bytes);
  }

  override at(offset: number): { line: number; column: number } {
    const p = super.at(offset);
    return p.line === 1 ? { line: this.baseLine, column: this.baseColumn + p.column - 1 } : { line: this.baseLine + p.line - 1, column: p.column };
  }
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What one value of the stream says. */
export type ReadEvent =
  | { status: 'event'; type: WatchEventType | 'OBJECT'; object: KubeObject; origin: ObjectOrigin; warnings: Diagnostic[] }
  /** A BOOKMARK, or an object of a kind kpc does not compile (told in note). */
  | { status: 'skipped'; note?: string }
  | { status: 'rejected'; errors: Diagnostic[]; warnings: Diagnostic[] };

export interface EventReadOptions extends DecodeOptions {
  /** The stream's name in diagnostics (`<stdin>` for -). */
  name: string;
  defaultNamespace: string;
}

const utf8 = new TextDecoder();
const TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** The byte range of a top-level member's value in a JSON object text, if it has that member. */
function memberRange(bytes: Uint8Array, key: string): { start: number; end: number } | undefined {
  let i = 0;
  const skipSpace = () => {
    while (i < bytes.length && isJsonSpace(bytes[i])) i++;
  };
  const skipString = () => {
    i++; // the opening quote
    while (i < bytes.length && bytes[i] !== QUOTE) i += bytes[i] === BACKSLASH ? 2 : 1;
    i++;
  };
  const skipValue = () => {
    if (bytes[i] === QUOTE) return skipString();
    let depth = 0;
    for (; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === QUOTE) {
        skipString();
        i--;
      } else if (b === OPEN || b === OPEN_SQ) depth++;
      else if (b === CLOSE || b === CLOSE_SQ) {
        if (depth === 0) return; // the enclosing object's end
        depth--;
        if (depth === 0) {
          i++;
          return;
        }
      } else if (depth === 0 && (b === 0x2c || isJsonSpace(b))) return;
    }
  };
  skipSpace();
  if (bytes[i] !== OPEN) return undefined;
  i++;
  for (;;) {
    skipSpace();
    if (bytes[i] !== QUOTE) return undefined;
    const keyStart = i;
    skipString();
    const name = JSON.parse(utf8.decode(bytes.subarray(keyStart, i))) as string;
    skipSpace();
    i++; // ':'
    skipSpace();
    const start = i;
    skipValue();
    if (name === key) return { start, end: i };
    skipSpace();
    if (bytes[i] !== 0x2c) return undefined;
    i++;
  }
}

/** One value of the stream: parsed, and its object decoded and validated. */
export function readEvent(piece: EventPiece, options: EventReadOptions): ReadEvent {
  const lines = new ShiftedLines(piece.bytes, piece.line, piece.column);
  const rejected = (message: string, offset = 0): ReadEvent => {
    const at = lines.at(offset);
    return { status: 'rejected', errors: [diagnosticAt(options.name, at.line, at.column, message)], warnings: [] };
  };
  if (piece.bytes.length > MAX_DOCUMENT_BYTES) return rejected(`an event of ${piece.bytes.length} bytes; kpc reads at most ${MAX_DOCUMENT_BYTES} bytes per object`);
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(piece.bytes));
  } catch {
    const e = findJsonSyntaxError(piece.bytes, 0, piece.bytes.length);
    const next = lines.at(piece.bytes.length);
    const cut = piece.cut ? ` (the event is not closed before the next one starts at line ${next.line}, or the stream ends)` : '';
    return rejected(`JSON: ${e.message}${cut}`, Math.min(e.offset, Math.max(0, piece.bytes.length - 1)));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return rejected('a watch event must be a JSON object ({"type": ..., "object": {...}}, or an object with a kind)');
  const v = value as Record<string, unknown>;
  let type: WatchEventType | 'OBJECT' = 'OBJECT';
  let range = { start: 0, end: piece.bytes.length };
  if (!('kind' in v) && ('type' in v || 'object' in v)) {
    if (typeof v.type !== 'string' || !TYPES.has(v.type)) {
      return rejected(`type: Unsupported value: ${JSON.stringify(v.type ?? null)}: supported values: "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"`, memberRange(piece.bytes, 'type')?.start ?? 0);
    }
    if (v.type === 'BOOKMARK') return { status: 'skipped' };
    const objectAt = memberRange(piece.bytes, 'object');
    if (v.type === 'ERROR') {
      const status = v.object as { message?: unknown; reason?: unknown; code?: unknown } | undefined;
      const message = typeof status?.message === 'string' ? status.message : 'no message';
      const what = [typeof status?.reason === 'string' ? status.reason : undefined, typeof status?.code === 'number' ? String(status.code) : undefined].filter((x) => x !== undefined).join(' ');
      return rejected(`ERROR event from the API server${what ? ` (${what})` : ''}: ${message}`, objectAt?.start ?? 0);
    }
    if (!objectAt || v.object === null || typeof v.object !== 'object' || Array.isArray(v.object)) return rejected('object: Required value: a watch event carries its object', objectAt?.start ?? 0);
    type = v.type as WatchEventType;
    range = objectAt;
  }
  if (v.kind === 'List' || (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items))) {
    return rejected(`kind: a ${v.kind} is not a watch event; give the objects one by one (kubectl get --watch -o json does)`);
  }
  const src = { name: options.name, bytes: piece.bytes.subarray(range.start, range.end) };
  const objectLines = new ShiftedLines(src.bytes, lines.at(range.start).line, lines.at(range.start).column);
  const objects = new JsonObjects(memorySource(src), [{ start: 0, end: src.bytes.length }], undefined, objectLines);
  const raw = objects.take(0);
  if ('failed' in raw) {
    const failed = objects.failure(raw);
    const diagnostics = 'read' in failed ? failed.read.diagnostics : [];
    return { status: 'rejected', errors: diagnostics, warnings: [] };
  }
  if (raw.problems) return { status: 'rejected', errors: raw.problems, warnings: [] };
  fillNamespace(raw.value, options.defaultNamespace);
  const decoded = decodeObject(raw.value, options);
  if (decoded.status === 'skipped') return { status: 'skipped', note: `${options.name}:${objectLines.at(0).line}:${objectLines.at(0).column}: ${decoded.note}` };
  const warnings = decoded.warnings.map((w) => locateError(raw.origin, w));
  if (decoded.status === 'invalid') return { status: 'rejected', errors: decoded.errors.map((e) => locateError(raw.origin, e)), warnings };
  return { status: 'event', type, object: decoded.object, origin: raw.origin, warnings };
}

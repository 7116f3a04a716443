/**
 * JSON input as objects parsed one at a time: the ranges json-stream.ts found, each parsed
 * with JSON.parse only when the loader asks for it.
 *
 * Why: parsing every object up front kept all raw values (hundreds of MB for a large cluster)
 * alive while the typed copies were built, which made the garbage collector copy and mark
 * them again and again. Parsed one at a time, right before decoding, a raw value dies young.
 *
 * The outcome is the same as parsing everything first: an object that does not parse or nests
 * too deeply spoils the whole file. The caller then drops what it made of the other objects
 * and reads the file as `failure(...)` says instead (readAll does exactly that).
 *
 * When the scan guessed item ends from the layout, an object that parses proves its range
 * right; one that does not may only prove the guess wrong, so `failure` then says to scan the
 * file again without guessing.
 *
 * Positions: a problem's byte offset goes through the file's line index; a field path is
 * located by parsing the object's text as YAML (JSON is YAML 1.2) on first need.
 */

import { Buffer } from 'node:buffer';
import type { Diagnostic } from '../diagnostics.js';
import type { Source } from './input-files.js';
import { countKeysInText, countKeysInValue, findDuplicateKey, type DuplicateKey } from './json-duplicates.js';
import type { JsonObjectRange } from './json-stream.js';
import { findJsonSyntaxError } from './json-syntax.js';
import type { LineIndex } from './lines.js';
import { DEPTH_MESSAGE, diagnosticAt, inheritListType, LIMITS, MAX_DOCUMENT_BYTES, type Locator, type RawObject, type ReadResult } from './raw-objects.js';
import { yamlLocator } from './yaml-precise.js';

/** Why an object of a JSON input spoils the whole file. */
export interface ObjectFailure {
  /** 'changed': the file was written to while it was read (only a source read in pieces says so). */
  failed: 'syntax' | 'depth' | 'size' | 'changed';
  index: number;
}

const utf8 = new TextDecoder();

/** Where a JSON input's objects are read from: its bytes in memory, or a large file read in pieces. */
export interface JsonSource {
  /** The file name diagnostics show. */
  readonly name: string;
  /** Bytes [start, end) of the text (valid until the next call). */
  bytes(start: number, end: number): Uint8Array;
  /** The first syntax error in bytes [start, end); asked only of a source in memory (see JsonObjects). */
  syntaxError?(start: number, end: number): { offset: number; message: string };
  /**
   * Whether the file may have changed since it was scanned (a source read in pieces: its
   * objects' ranges come from the scan); asked once, at the last object.
   */
  changed?(): boolean;
  /** Let go of what it holds (the file is done); it may still be read after, for a late diagnostic. */
  release?(): void;
}

/** A file's bytes in memory. */
export function memorySource(src: Source): JsonSource {
  return { name: src.name, bytes: (start, end) => src.bytes.subarray(start, end), syntaxError: (start, end) => findJsonSyntaxError(src.bytes, start, end) };
}

export class JsonObjects implements LazyObjects {
  /**
   * `reread`: how to read the file once an object has failed (again with an exact scan after
   * a wrong guess, or whole when it was read in pieces), or undefined when the scan was exact
   * and the failure is the object's own.
   */
  constructor(
    private readonly src: JsonSource,
    private readonly ranges: readonly JsonObjectRange[],
    private readonly reread: (() => ReadOutcome) | undefined,
    private readonly lines: LineIndex,
  ) {}

  /**
   * Buffer's UTF-8 slicing is about twice as fast as TextDecoder for small pieces. TextDecoder
   * also drops a leading byte-order mark, which Buffer keeps: a piece starting with one (0xEF)
   * still goes through TextDecoder so that JSON.parse sees the same text.
   */
  private text(start: number, end: number): string {
    const bytes = this.src.bytes(start, end);
    return bytes[0] === 0xef ? utf8.decode(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /** The file is done: what the source holds can go (the objects' origins may still read it). */
  release(): void {
    this.src.release?.();
  }

  get count(): number {
    return this.ranges.length;
  }

  /** Object `index`, parsed now; every call parses anew, so the caller decides what stays alive. */
  take(index: number): RawObject | ObjectFailure {
    const range = this.ranges[index]!;
    const { start, end } = range;
    if (end - start > MAX_DOCUMENT_BYTES) return { failed: 'size', index };
    const text = this.text(start, end);
    // Every object's bytes have been read by now: had the file been written to since the scan,
    // they may mix two versions, so the file is read again, whole (the reread).
    if (index === this.ranges.length - 1 && this.src.changed?.()) return { failed: 'changed', index };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { failed: 'syntax', index };
    }
    if (nestsTooDeep(value, 0)) return { failed: 'depth', index };
    inheritListType(value, range.inherit);
    let locate: Locator | undefined;
    const object: RawObject = {
      value,
      origin: {
        file: this.src.name,
        locate: (path) => (locate ??= yamlLocator(() => this.text(start, end), this.lines.at(start)))(path),
      },
    };
    const duplicate = duplicateKeyIn(text, value);
    if (duplicate) {
      const at = this.lines.at(start + Buffer.byteLength(text.slice(0, duplicate.offset)));
      object.problems = [duplicateDiagnostic(this.src.name, at, duplicate.path)];
    }
    return object;
  }

  /** How to read the file once an object has failed: again without guesses, or its problem. */
  failure(f: ObjectFailure): ReadOutcome {
    if (this.reread) return this.reread();
    return { read: { objects: [], diagnostics: [this.problem(f)] } };
  }

  /** The file's read problem when object `f.index` failed (the file gives no objects then). */
  private problem(f: ObjectFailure): Diagnostic {
    const { start, end } = this.ranges[f.index]!;
    if (f.failed === 'size') {
      const at = this.lines.at(start);
      return diagnosticAt(this.src.name, at.line, at.column, `an object of ${end - start} bytes; kpc reads at most ${MAX_DOCUMENT_BYTES} bytes per object (give large inputs as a List or a stream of objects)`);
    }
    if (f.failed === 'changed') return diagnosticAt(this.src.name, 1, 1, 'the file was written to while kpc read it; run kpc again once it is complete');
    if (f.failed === 'depth') {
      const at = this.lines.at(start);
      return diagnosticAt(this.src.name, at.line, at.column, DEPTH_MESSAGE);
    }
    const e = this.src.syntaxError!(start, end);
    const at = this.lines.at(e.offset);
    return diagnosticAt(this.src.name, at.line, at.column, `JSON: ${e.message}`);
  }

  /** Every object parsed, or the first failure's result: readDocuments for JSON input. */
  readAll(): ReadResult {
    const objects: RawObject[] = [];
    for (let i = 0; i < this.count; i++) {
      const object = this.take(i);
      if ('failed' in object) {
        const next = this.failure(object);
        return 'json' in next ? next.json.readAll() : next.read;
      }
      objects.push(object);
    }
    return { objects, diagnostics: [] };
  }
}

/**
 * Objects to take one by one: a JSON input's (JsonObjects), or a YAML List's items
 * (yaml-documents.ts, YamlListObjects). `failure` says how to read the file once one fails.
 */
export interface LazyObjects {
  readonly count: number;
  take(index: number): RawObject | ObjectFailure;
  failure(f: ObjectFailure): ReadOutcome;
  readAll(): ReadResult;
  /** The loader is done with the file (see JsonObjects.release). */
  release?(): void;
}

/**
 * A file read: in full (YAML, or a problem found while reading), or objects to take one by one
 * (JSON input, and a YAML List the block reader reads item by item; the key says `json` for
 * history's sake).
 */
export type ReadOutcome = { read: ReadResult } | { json: LazyObjects };

/** A duplicate key of a JSON text that JSON.parse took (see json-duplicates.ts), if any. */
function duplicateKeyIn(text: string, value: unknown): DuplicateKey | undefined {
  return countKeysInText(text) === countKeysInValue(value) ? undefined : findDuplicateKey(text);
}

/** The API server's strict-decoding words (kubectl --validate=strict), for JSON and YAML alike. */
function duplicateDiagnostic(file: string, at: { line: number; column: number }, path: string): Diagnostic {
  return { file, line: at.line, column: at.column, path, message: `duplicate field "${path}"`, severity: 'error' };
}

/**
 * True when objects or arrays nest deeper than LIMITS.maxDepth below `value` (at `depth`).
 * Recursive, but it stops at the limit, so a hostile input cannot overflow the stack.
 */
function nestsTooDeep(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > LIMITS.maxDepth) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (nestsTooDeep(child, depth + 1)) return true;
  } else {
    for (const key in value) if (nestsTooDeep((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

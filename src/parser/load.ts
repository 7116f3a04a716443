/**
 * The whole front end: `-f` paths → text → documents → typed, defaulted, validated
 * Kubernetes objects, or every problem found on the way (each with file:line:column).
 */

import { formatFieldPath, locateError, type Diagnostic, type FieldError, type ObjectOrigin } from '../diagnostics.js';
import { openInput, type LazyObjects, type ReadOutcome, type ReadResult, type RawObject } from './documents.js';
import { expandPaths, type PathsSeen } from './input-files.js';
import { diagnosticsOf, isKpcError } from '../errors.js';
import { checkAcrossObjects } from './k8s/cross-object.js';
import { decodeObject, type DecodeOptions } from './k8s/decode.js';
import type { KubeObject } from './k8s/types.js';
import { append } from '../arrays.js';

export interface LoadOptions extends DecodeOptions {
  paths: readonly string[];
  recursive: boolean;
  /** Namespace for namespaced objects that name none (kubectl's context namespace). */
  defaultNamespace: string;
  readStdin: (maxBytes: number) => Uint8Array;
  /** The most one input (a file or stdin) may hold (--max-input-size). */
  maxInputBytes: number;
  /** Stop collecting after this many errors (a flood helps nobody). */
  maxErrors: number;
  /** Told what is being read, now and then (the CLI shows it on a terminal). */
  progress?: (message: string) => void;
  /**
   * Runs reading and validating work, so a caller can time the two apart (the CLI's stage
   * timer, for the benchmarks); by default it just runs it.
   */
  timed?: <T>(stage: 'read' | 'validate', work: () => T) => T;
}

export interface LoadedObject {
  object: KubeObject;
  origin: ObjectOrigin;
}

export interface LoadResult {
  objects: LoadedObject[];
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** Informational lines (skipped kinds, defaulted namespaces). */
  notes: string[];
  /** What was read, for the message when it gave no objects. */
  read: ReadSummary;
}

export interface ReadSummary {
  paths: PathsSeen;
  files: number;
  /** Objects found in the files, of any kind. */
  documents: number;
  /** Objects of kinds kpc does not compile, per kind. */
  skipped: Map<string, number>;
}

const NAMESPACED_KINDS = new Set(['Service', 'EndpointSlice', 'Endpoints', 'Pod']);

const untimed = <T>(_stage: 'read' | 'validate', work: () => T): T => work();

/** What one file gave, kept apart until the file is done (see loadJsonList for why). */
interface FileResult {
  /** What the files before this one gave: the error limit and progress count across files. */
  before: { errors: number; objects: number };
  objects: LoadedObject[];
  errors: Diagnostic[];
  warnings: Array<{ origin: ObjectOrigin; warning: FieldError; object: string | undefined }>;
  notes: string[];
  /** Objects whose namespace was filled in with the default. */
  defaulted: number;
  /** Objects found, of any kind. */
  documents: number;
  skipped: Skip[];
}

interface Skip {
  kind: string;
  note: string;
}

/**
 * Skipped objects: one note per kind, not one per object (`kubectl get all -A` holds
 * thousands of Pods), with the first object's note as the example.
 */
class SkipCollector {
  readonly counts = new Map<string, number>();
  private readonly first = new Map<string, string>();

  add(s: Skip): void {
    this.counts.set(s.kind, (this.counts.get(s.kind) ?? 0) + 1);
    if (!this.first.has(s.kind)) this.first.set(s.kind, s.note);
  }

  notes(): string[] {
    const out: string[] = [];
    for (const [kind, note] of this.first) {
      const n = this.counts.get(kind)!;
      out.push(n === 1 ? note : `${note} (and ${n - 1} more ${kind} object(s) skipped)`);
    }
    return out;
  }
}

function emptyFileResult(before: LoadResult): FileResult {
  return { before: { errors: before.errors.length, objects: before.objects.length }, objects: [], errors: [], warnings: [], notes: [], defaulted: 0, documents: 0, skipped: [] };
}

function errorLimitReached(out: FileResult, options: LoadOptions): boolean {
  return out.before.errors + out.errors.length >= options.maxErrors;
}

export function loadObjects(options: LoadOptions): LoadResult {
  const timed = options.timed ?? untimed;
  const result: LoadResult = { objects: [], errors: [], warnings: [], notes: [], read: { paths: { skipped: [], subfolders: [] }, files: 0, documents: 0, skipped: new Map() } };
  const skips = new SkipCollector();
  let files: string[];
  try {
    files = expandPaths(options.paths, options.recursive, result.read.paths);
    result.notes.push(...result.read.paths.skipped);
  } catch (e) {
    if (isKpcError(e, 'input.unreadable')) return { ...result, errors: [...diagnosticsOf(e)] };
    throw e;
  }
  let defaulted = 0;
  const warnings = new WarningCollector();
  for (const file of files) {
    let fileResult: FileResult;
    try {
      const opened = timed('read', () => openInput(file, options.readStdin, options.maxInputBytes));
      fileResult = loadOpened(file, opened, result, options);
    } catch (e) {
      if (isKpcError(e, 'input.unreadable')) {
        result.errors.push(...diagnosticsOf(e));
        continue;
      }
      throw e;
    }
    result.read.files++;
    result.read.documents += fileResult.documents;
    for (const s of fileResult.skipped) skips.add(s);
    append(result.objects, fileResult.objects);
    append(result.errors, fileResult.errors);
    append(result.notes, fileResult.notes);
    for (const { origin, warning, object } of fileResult.warnings) warnings.add(origin, warning, object);
    defaulted += fileResult.defaulted;
  }
  if (result.errors.length === 0) {
    for (const { index, error } of timed('validate', () => checkAcrossObjects(result.objects))) {
      const origin = result.objects[index]!.origin;
      if (error.severity === 'error') result.errors.push(locateError(origin, error));
      else warnings.add(origin, error);
    }
  }
  append(result.warnings, warnings.located);
  result.notes.push(...skips.notes(), ...warnings.summary());
  result.read.skipped = skips.counts;
  if (defaulted > 0) {
    result.notes.push(`${defaulted} object(s) without metadata.namespace were read as namespace "${options.defaultNamespace}" (as kubectl does)`);
  }
  result.errors.splice(options.maxErrors);
  return result;
}

function loadOpened(file: string, opened: ReadOutcome, before: LoadResult, options: LoadOptions): FileResult {
  return 'json' in opened ? loadJsonObjects(file, opened.json, before, options) : loadRead(file, opened.read, before, options);
}

/** A file read in full: its read problems first, then each object decoded. */
function loadRead(file: string, read: ReadResult, before: LoadResult, options: LoadOptions): FileResult {
  const out = emptyFileResult(before);
  append(out.errors, read.diagnostics);
  options.progress?.(`reading ${file}: ${read.objects.length} objects`);
  const many = read.objects.length > 1;
  for (const raw of read.objects) {
    if (errorLimitReached(out, options)) break;
    decodeInto(out, raw, options, many);
  }
  return out;
}

/**
 * JSON input, object by object: parse, decode, drop the raw value. An object that does not
 * parse (or nests too deeply) means the file is read as if it had been parsed whole first: what
 * the earlier objects gave is dropped and the file is read the way items.failure says. So the
 * objects after the error limit are still parsed, only not decoded.
 */
function loadJsonObjects(file: string, items: LazyObjects, before: LoadResult, options: LoadOptions): FileResult {
  const timed = options.timed ?? untimed;
  const out = emptyFileResult(before);
  options.progress?.(`reading ${file}: ${items.count} objects`);
  for (let i = 0; i < items.count; i++) {
    const item = timed('read', () => items.take(i));
    if ('failed' in item) {
      items.release?.();
      return loadOpened(file, timed('read', () => items.failure(item)), before, options);
    }
    if (errorLimitReached(out, options)) continue;
    decodeInto(out, item, options, items.count > 1);
  }
  items.release?.();
  return out;
}

/** Decode one raw object into the file's result. */
function decodeInto(out: FileResult, raw: RawObject, options: LoadOptions, many: boolean): void {
  const timed = options.timed ?? untimed;
  out.documents++;
  if (raw.problems) {
    append(out.errors, raw.problems);
    return;
  }
  const objects = out.before.objects + out.objects.length;
  if ((objects & 1023) === 0) options.progress?.(`validating: ${objects} objects`);
  if (fillNamespace(raw.value, options.defaultNamespace)) out.defaulted++;
  const decoded = timed('validate', () => decodeObject(raw.value, options));
  if (decoded.status === 'skipped') {
    out.skipped.push({ kind: decoded.kind, note: `${raw.origin.file}: ${decoded.note}` });
    return;
  }
  // In a file of several objects, a message names its object as well as its place.
  const object = many ? objectLabel(raw.value) : undefined;
  for (const warning of decoded.warnings) out.warnings.push({ origin: raw.origin, warning, object });
  if (decoded.status === 'invalid') {
    for (const e of decoded.errors) out.errors.push(withObject(locateError(raw.origin, e), object));
    return;
  }
  out.objects.push({ object: decoded.object, origin: raw.origin });
}

/**
 * Warnings are located (which may mean parsing a file again for positions) only for the
 * first few of each kind; a cluster with 500 Services using externalIPs should not print
 * 500 identical lines.
 */
class WarningCollector {
  static readonly PER_MESSAGE = 3;
  readonly located: Diagnostic[] = [];
  private readonly counts = new Map<string, number>();

  add(origin: ObjectOrigin, w: FieldError, object?: string): void {
    const key = w.group ?? `${formatFieldPath(w.path).replace(/\[\d+\]/g, '[]')}: ${w.message}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (n <= WarningCollector.PER_MESSAGE) this.located.push(withObject(locateError(origin, w), object));
  }

  summary(): string[] {
    const out: string[] = [];
    for (const [key, n] of this.counts) {
      const more = n - WarningCollector.PER_MESSAGE;
      if (more > 0) out.push(`${more} more warning(s) ${key.includes(': ') ? `like "${key}"` : `of this kind: ${key}`}`);
    }
    return out;
  }
}

function withObject(d: Diagnostic, object: string | undefined): Diagnostic {
  return object === undefined ? d : { ...d, object };
}

/** `Service shop/web`, `Node node-a`: names are not validated yet, so odd ones are quoted. */
function objectLabel(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  if (typeof v.kind !== 'string' || typeof v.metadata?.name !== 'string') return undefined;
  const safe = (t: string) => (/^[A-Za-z0-9._-]+$/.test(t) ? t : JSON.stringify(t));
  const ns = typeof v.metadata.namespace === 'string' && v.metadata.namespace !== '' ? `${safe(v.metadata.namespace)}/` : '';
  return `${safe(v.kind)} ${ns}${safe(v.metadata.name)}`;
}

/** kubectl fills in the context namespace; kpc fills in --namespace. True when it did. */
export function fillNamespace(value: unknown, namespace: string): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const obj = value as Record<string, unknown>;
  if (typeof obj.kind !== 'string' || !NAMESPACED_KINDS.has(obj.kind)) return false;
  const meta = obj.metadata;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return false;
  const m = meta as Record<string, unknown>;
  if (m.namespace !== undefined && m.namespace !== '') return false;
  m.namespace = namespace;
  return true;
}

/**
 * The whole front end: `-f` paths → text → documents → typed, defaulted, validated
 * Kubernetes objects, or every problem found on the way (each with file:line:column).
 */

import { formatFieldPath, locateError, type Diagnostic, type FieldError, type ObjectOrigin } from './diagnostics.js';
import { readDocuments, type RawObject } from './documents.js';
import { expandPaths, InputFileError, readSource } from './input-files.js';
import { checkAcrossObjects } from './k8s/cross-object.js';
import { timed } from '../cli/stage-timer.js';
import { decodeObject, type DecodeOptions } from './k8s/decode.js';
import type { KubeObject } from './k8s/types.js';

export interface LoadOptions extends DecodeOptions {
  paths: readonly string[];
  recursive: boolean;
  /** Namespace for namespaced objects that name none (kubectl's context namespace). */
  defaultNamespace: string;
  readStdin: () => Uint8Array;
  /** Stop collecting after this many errors (a flood helps nobody). */
  maxErrors: number;
  /** Told what is being read, now and then (the CLI shows it on a terminal). */
  progress?: (message: string) => void;
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
}

const NAMESPACED_KINDS = new Set(['Service', 'EndpointSlice', 'Endpoints']);

export function loadObjects(options: LoadOptions): LoadResult {
  const result: LoadResult = { objects: [], errors: [], warnings: [], notes: [] };
  let files: string[];
  try {
    files = expandPaths(options.paths, options.recursive);
  } catch (e) {
    if (e instanceof InputFileError) return { ...result, errors: [e.diagnostic] };
    throw e;
  }
  let defaulted = 0;
  const warnings = new WarningCollector();
  for (const file of files) {
    let raws: RawObject[];
    try {
      const read = timed('read', () => readDocuments(readSource(file, options.readStdin)));
      result.errors.push(...read.diagnostics);
      raws = read.objects;
    } catch (e) {
      if (e instanceof InputFileError) {
        result.errors.push(e.diagnostic);
        continue;
      }
      throw e;
    }
    options.progress?.(`reading ${file}: ${raws.length} objects`);
    for (const raw of raws) {
      if (result.errors.length >= options.maxErrors) break;
      if ((result.objects.length & 1023) === 0) options.progress?.(`validating: ${result.objects.length} objects`);
      if (fillNamespace(raw.value, options.defaultNamespace)) defaulted++;
      const decoded = timed('validate', () => decodeObject(raw.value, options));
      if (decoded.status === 'skipped') {
        result.notes.push(`${raw.origin.file}: ${decoded.note}`);
        continue;
      }
      for (const w of decoded.warnings) warnings.add(raw.origin, w);
      if (decoded.status === 'invalid') {
        result.errors.push(...decoded.errors.map((e) => locateError(raw.origin, e)));
        continue;
      }
      result.objects.push({ object: decoded.object, origin: raw.origin });
    }
  }
  result.warnings.push(...warnings.located);
  result.notes.push(...warnings.summary());
  if (defaulted > 0) {
    result.notes.push(`${defaulted} object(s) without metadata.namespace were read as namespace "${options.defaultNamespace}" (as kubectl does)`);
  }
  if (result.errors.length === 0) {
    for (const { index, error } of timed('validate', () => checkAcrossObjects(result.objects))) {
      const d = locateError(result.objects[index]!.origin, error);
      (error.severity === 'error' ? result.errors : result.warnings).push(d);
    }
  }
  result.errors.splice(options.maxErrors);
  return result;
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

  add(origin: ObjectOrigin, w: FieldError): void {
    const key = `${formatFieldPath(w.path).replace(/\[\d+\]/g, '[]')}: ${w.message}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (n <= WarningCollector.PER_MESSAGE) this.located.push(locateError(origin, w));
  }

  summary(): string[] {
    const out: string[] = [];
    for (const [key, n] of this.counts) {
      if (n > WarningCollector.PER_MESSAGE) out.push(`${n - WarningCollector.PER_MESSAGE} more warning(s) like "${key}"`);
    }
    return out;
  }
}

/** kubectl fills in the context namespace; kpc fills in --namespace. True when it did. */
function fillNamespace(value: unknown, namespace: string): boolean {
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

/**
 * What the readers (JSON, YAML) give the loader: untyped objects, each with an origin that
 * turns a field path back into file:line:column, and the limits every reader enforces.
 */

import type { Diagnostic, FieldPath, ObjectOrigin } from '../diagnostics.js';

export const LIMITS = {
  /** Longest accepted YAML line; a real manifest's longest lines are certificates and JSON annotations. JSON has no line limit (the API's wire form is one line). */
  maxLineBytes: 1 << 20,
  /** Largest accepted scalar (annotations are capped at 256 KiB in total by the API server). */
  maxScalarBytes: 1 << 20,
  /** Deepest accepted nesting (Kubernetes objects are about 10 deep; a List adds 2). */
  maxDepth: 64,
  /** Alias expansions per document (the yaml package's default; manifests rarely use any). */
  maxAliasCount: 100,
};

/** Larger single documents are refused: they would not fit in one JavaScript string (~512 MiB). */
export const MAX_DOCUMENT_BYTES = 500 << 20;

export const DEPTH_MESSAGE = `nesting is deeper than ${LIMITS.maxDepth} levels; no Kubernetes object is`;

/** One top-level object found in the input, still untyped. */
export interface RawObject {
  value: unknown;
  origin: ObjectOrigin;
  /** Problems of the object's text that parsing let through (a duplicate key); not decoded then. */
  problems?: Diagnostic[];
}

export interface ReadResult {
  objects: RawObject[];
  diagnostics: Diagnostic[];
}

export type Locator = (path: FieldPath) => { line: number; column: number };

export function diagnosticAt(file: string, line: number, column: number, message: string): Diagnostic {
  return { file, line, column, path: '', message, severity: 'error' };
}

/** A list as `kubectl get` prints it (`kind: List`) or as the API returns it (`ServiceList`). */
export function isListObject(value: unknown): value is { kind: string; apiVersion?: unknown; items: unknown[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}

/**
 * The kind and apiVersion an item of a list takes when it names neither, as apimachinery's
 * unstructured list decoding does: a typed list's items (`kubectl get --raw /api/v1/services`)
 * carry no type of their own. A `kind: List` gives none (its items must name theirs).
 */
export function listItemType(listKind: string, listApiVersion: unknown): { kind: string; apiVersion: string } | undefined {
  const kind = listKind.slice(0, -'List'.length);
  return kind === '' ? undefined : { kind, apiVersion: typeof listApiVersion === 'string' ? listApiVersion : '' };
}

/** Give a list item the list's type when it names neither kind nor apiVersion. */
export function inheritListType(item: unknown, type: { kind: string; apiVersion: string } | undefined): void {
  if (type === undefined || item === null || typeof item !== 'object' || Array.isArray(item)) return;
  const obj = item as Record<string, unknown>;
  if ((obj.kind === undefined || obj.kind === '') && (obj.apiVersion === undefined || obj.apiVersion === '')) {
    obj.kind = type.kind;
    obj.apiVersion = type.apiVersion;
  }
}

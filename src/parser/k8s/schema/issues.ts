/**
 * Turns zod issues into the structural errors kpc reports, one wording for every kind.
 *
 * The API server reports typed-object decode failures as Go JSON errors (`json: cannot unmarshal
 * string into Go struct field ServicePort.spec.ports.port of type int32`) and strict-mode unknown
 * fields as `strict decoding error: unknown field "spec.foo"`. kpc keeps the second, and renders
 * type mismatches in the wording the API server uses for schema validation (kube-openapi,
 * as seen for CRDs), with the offending value shown as field errors show values:
 *
 *   spec.foo: unknown field "spec.foo"
 *   spec.ports[0].port: Invalid value: "80": spec.ports[0].port in body must be of type integer: "string"
 *   spec.ports[0].port: Invalid value: 1000000000000: spec.ports[0].port in body should be less than or equal to 2147483647
 *   apiVersion: Required value
 */

import type { z } from 'zod';
import { formatFieldPath, type FieldError, type FieldPath } from '../../../diagnostics.js';
import { fieldError } from '../../../diagnostics.js';
import { required } from '../field-errors.js';
import { asJSON, renderBadValue, type BadValue } from '../go-format.js';
import { MAP_FIELDS } from './primitives.js';
import { suggestField } from './suggest.js';

/** A zod path as a field path, with map keys as `[key]`. */
export function toFieldPath(path: ReadonlyArray<PropertyKey>): FieldPath {
  const out: Array<string | number | { key: string }> = [];
  let prev: PropertyKey | undefined;
  for (const part of path) {
    if (typeof part === 'number') out.push(part);
    else if (typeof prev === 'string' && MAP_FIELDS.has(prev)) out.push({ key: String(part) });
    else out.push(String(part));
    prev = part;
  }
  return out;
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v: unknown = root;
  for (const part of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[part];
  }
  return v;
}

/** The JSON type name of a decoded value, as OpenAPI names types. */
export function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

export function badValueOf(v: unknown): BadValue {
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return v;
  return asJSON(v);
}

const EXPECTED_NAMES: Record<string, string> = {
  int: 'integer',
  // Every number in these schemas is an integer field; zod reports the type check first.
  number: 'integer',
  string: 'string',
  boolean: 'boolean',
  object: 'object',
  record: 'object',
  array: 'array',
};

function typeError(path: FieldPath, value: unknown, expected: string): FieldError {
  const where = formatFieldPath(path);
  return fieldError(path, `Invalid value: ${renderBadValue(badValueOf(value))}: ${where} in body must be of type ${expected}: "${jsonTypeOf(value)}"`);
}

/** Converts one zod issue; unknown keys become one error per key. */
function convert(issue: z.core.$ZodIssue, root: unknown, schema: z.ZodType | undefined): FieldError[] {
  const path = toFieldPath(issue.path);
  const value = valueAt(root, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => {
        const p = toFieldPath([...issue.path, k]);
        const meant = schema ? suggestField(schema, issue.path, k) : undefined;
        return fieldError(p, `unknown field "${formatFieldPath(p)}"${meant ? ` (did you mean "${meant}"?)` : ''}`);
      });
    case 'invalid_type':
      if (value === undefined) return [required(path)];
      return [typeError(path, value, EXPECTED_NAMES[issue.expected] ?? issue.expected)];
    case 'invalid_union':
      return [typeError(path, value, 'integer or string')];
    case 'too_big':
      return [fieldError(path, `Invalid value: ${renderBadValue(badValueOf(value))}: ${formatFieldPath(path)} in body should be less than or equal to ${String(issue.maximum)}`)];
    case 'too_small':
      return [fieldError(path, `Invalid value: ${renderBadValue(badValueOf(value))}: ${formatFieldPath(path)} in body should be greater than or equal to ${String(issue.minimum)}`)];
    default:
      return [fieldError(path, `Invalid value: ${renderBadValue(badValueOf(value))}: ${issue.message}`)];
  }
}

/** All structural errors of a failed parse, in document order of the issues; `schema` words suggestions. */
export function structuralErrors(error: z.ZodError, root: unknown, schema?: z.ZodType): FieldError[] {
  return error.issues.flatMap((i) => convert(i, root, schema));
}

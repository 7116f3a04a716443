/**
 * Labels, label selectors and annotations (apimachinery meta/v1/validation ValidateLabels and
 * api/validation ValidateAnnotations). Upstream reports these at the map's path itself
 * (`metadata.labels`), not at `metadata.labels[key]`; kpc keeps that.
 *
 * Go iterates maps in random order; kpc sorts keys so the output is stable.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { invalid, tooLong } from '../field-errors.js';
import { byteLength } from '../go-format.js';
import { isQualifiedName, isValidLabelValue, messagesAt } from './names.js';

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Longer key lists go to sort(); an insertion sort is quadratic. */
const INSERTION_SORT_MAX = 8;

export function sortedKeys(m: Record<string, string>): string[] {
  const keys = Object.keys(m);
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  // Most maps hold a key or two, and sort() sets up its working state (a few hundred bytes)
  // on every call: sorted here instead, in place. The same order: `>` on strings compares
  // UTF-16 code units, as sort() without a comparator does.
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i;
    for (; j > 0 && keys[j - 1]! > key; j--) keys[j] = keys[j - 1]!;
    keys[j] = key;
  }
  return keys;
}

/** ValidateLabelName: a label key is a qualified name. */
export function validateLabelName(key: string, path: FieldPath): FieldError[] {
  return messagesAt(path, key, isQualifiedName(key));
}

/** ValidateLabels: keys are qualified names, values are label values. */
export function validateLabels(labels: Record<string, string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of sortedKeys(labels)) {
    errs.push(...validateLabelName(k, path));
    errs.push(...messagesAt(path, labels[k]!, isValidLabelValue(labels[k]!)));
  }
  return errs;
}

/** ValidateAnnotations: keys are qualified names ignoring case; keys plus values fit in 256 KiB. */
export function validateAnnotations(annotations: Record<string, string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const k of sortedKeys(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, msg));
    total += byteLength(k) + byteLength(annotations[k]!);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

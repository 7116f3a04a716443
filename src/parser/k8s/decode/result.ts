/** The outcome of decoding one document, and helpers to build it. */

import type { FieldError } from '../../../diagnostics.js';
import type { Report } from '../field-errors.js';
import type { KubeObject } from '../types.js';

export type DecodeResult =
  | { status: 'ok'; object: KubeObject; warnings: FieldError[] }
  | { status: 'invalid'; errors: FieldError[]; warnings: FieldError[] }
  | { status: 'skipped'; note: string; kind: string };

export function invalidResult(errors: FieldError[], warnings: FieldError[] = []): DecodeResult {
  return { status: 'invalid', errors, warnings };
}

/** ok when the report holds no error, invalid otherwise; warnings are kept either way. */
export function fromReport(report: Report, build: () => KubeObject): DecodeResult {
  if (!report.ok) return { status: 'invalid', errors: report.errors, warnings: report.warnings };
  return { status: 'ok', object: build(), warnings: report.warnings };
}

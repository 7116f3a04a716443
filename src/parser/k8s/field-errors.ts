/**
 * The constructors of apimachinery's pkg/util/validation/field (errors.go), producing kpc's
 * FieldError. Each returns the ErrorBody text exactly as Go renders it, so a validator reads like
 * its Go original: `required(path)`, `invalid(path, value, detail)`, `notSupported(...)`.
 */

import { fieldError, fieldWarning, type FieldError, type FieldPath } from '../../diagnostics.js';
import { goQuote, renderBadValue, type BadValue } from './go-format.js';

function withDetail(body: string, detail: string): string {
  return detail === '' ? body : `${body}: ${detail}`;
}

/** field.Required: `Required value` (+ `: detail`). */
export function required(path: FieldPath, detail = ''): FieldError {
  return fieldError(path, withDetail('Required value', detail));
}

/** field.Forbidden: `Forbidden: detail`. */
export function forbidden(path: FieldPath, detail: string): FieldError {
  return fieldError(path, withDetail('Forbidden', detail));
}

/** field.Invalid: `Invalid value: <value>: detail`. */
export function invalid(path: FieldPath, value: BadValue, detail: string): FieldError {
  return fieldError(path, withDetail(`Invalid value: ${renderBadValue(value)}`, detail));
}

/** field.Duplicate: `Duplicate value: <value>`. */
export function duplicate(path: FieldPath, value: BadValue): FieldError {
  return fieldError(path, `Duplicate value: ${renderBadValue(value)}`);
}

/** field.NotFound: `Not found: <value>`. */
export function notFound(path: FieldPath, value: BadValue, detail = ''): FieldError {
  return fieldError(path, withDetail(`Not found: ${renderBadValue(value)}`, detail));
}

/**
 * field.NotSupported: `Unsupported value: <value>: supported values: "A", "B"`. The list is
 * printed in the order given (each strconv.Quote'd): callers that pass sets.List(...) must pass
 * it sorted.
 */
export function notSupported(path: FieldPath, value: BadValue, valid: readonly string[]): FieldError {
  const detail = valid.length > 0 ? `supported values: ${valid.map(goQuote).join(', ')}` : '';
  return fieldError(path, withDetail(`Unsupported value: ${renderBadValue(value)}`, detail));
}

/** field.TooMany: `Too many: <n>: must have at most <max> items`. */
export function tooMany(path: FieldPath, actual: number, max: number): FieldError {
  return fieldError(path, `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`);
}

/** field.TooLong: `Too long: may not be more than <max> bytes` (the value is never shown). */
export function tooLong(path: FieldPath, max: number): FieldError {
  return fieldError(path, `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`);
}

/** field.InternalError: `Internal error: <err>`. */
export function internalError(path: FieldPath, err: string): FieldError {
  return fieldError(path, `Internal error: ${err}`);
}

/** The same error downgraded to a warning (kpc accepts it but tells the user). */
export function asWarning(e: FieldError): FieldError {
  return fieldWarning(e.path, e.message);
}

/** Collects errors and warnings in the order validators report them. */
export class Report {
  readonly errors: FieldError[] = [];
  readonly warnings: FieldError[] = [];

  add(...items: FieldError[]): void {
    for (const e of items) (e.severity === 'warning' ? this.warnings : this.errors).push(e);
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }
}

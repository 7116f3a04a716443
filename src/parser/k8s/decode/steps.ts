/** The first step every kind shares: strict structural decoding, or its errors. */

import type { z } from 'zod';
import { structuralErrors } from '../schema/issues.js';
import { invalidResult, type DecodeResult } from './result.js';

/**
 * Decodes `raw` with `schema`; on success hands the typed value to the kind's defaulting and
 * validation. A structural error stops there, as a failed decode stops the API server.
 */
export function defaultsAndValidation<S extends z.ZodType>(schema: S, raw: unknown, next: (wire: z.infer<S>) => DecodeResult): DecodeResult {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return invalidResult(structuralErrors(parsed.error, raw));
  return next(parsed.data);
}

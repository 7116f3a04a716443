/** The first step every kind shares: strict structural decoding, or its errors. */

import type { z } from 'zod';
import { compileAcceptor, type Acceptor } from '../schema/fast-accept.js';
import { structuralErrors } from '../schema/issues.js';
import { invalidResult, type DecodeResult } from './result.js';

/** One compiled acceptor per wire schema, made on first use. */
const acceptors = new WeakMap<z.ZodType, Acceptor>();

function acceptorFor(schema: z.ZodType): Acceptor {
  let accepts = acceptors.get(schema);
  if (!accepts) {
    accepts = compileAcceptor(schema);
    acceptors.set(schema, accepts);
  }
  return accepts;
}

/**
 * Decodes `raw` with `schema`; on success hands the typed value to the kind's defaulting and
 * validation. A structural error stops there, as a failed decode stops the API server.
 *
 * Valid objects skip zod: when the compiled acceptor (schema/fast-accept.ts) says zod would take
 * `raw` as it is, `raw` is the decoded value. The next step only reads it and builds its own
 * copy (the toCore* conversions; they keep an endpoint's address list and, when complete, its
 * conditions, which nothing changes), so sharing it is safe. Anything else goes through zod,
 * which alone words the errors.
 */
export function defaultsAndValidation<S extends z.ZodType>(schema: S, raw: unknown, next: (wire: z.infer<S>) => DecodeResult): DecodeResult {
  if (acceptorFor(schema)(raw)) return next(raw as z.infer<S>);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return invalidResult(structuralErrors(parsed.error, raw, schema));
  return next(parsed.data);
}

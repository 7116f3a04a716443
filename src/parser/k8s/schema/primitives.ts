/**
 * Building blocks for the wire schemas: the JSON shapes the Kubernetes API accepts, decoded as
 * strictly as `kubectl --validate=strict` does (unknown fields are errors, wrong JSON types are
 * errors). Every field may be null or absent, because Go's JSON decoding treats `null` as "leave
 * the zero value", which is how `creationTimestamp: null` in `kubectl get -o yaml` output decodes.
 */

import { z } from 'zod';

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

export const str = () => z.string().nullish();
export const bool = () => z.boolean().nullish();
/** Go int32: an integer within range; 80.5 and 1e12 are decode errors. */
export const int32Value = () => z.number().int().min(INT32_MIN).max(INT32_MAX);
export const int32 = () => int32Value().nullish();
/** Go int64 (as far as a JS number can tell). */
export const int64 = () => z.number().int().nullish();
/** intstr.IntOrString: a JSON number becomes an int, a JSON string stays a string. */
export const intOrString = () => z.union([int32Value(), z.string()]).nullish();
export const list = <T extends z.ZodType>(item: T) => z.array(item).nullish();
export const stringList = () => list(z.string());
export const stringMap = () => z.record(z.string(), z.string()).nullish();
export const boolMap = () => z.record(z.string(), z.boolean()).nullish();
export const struct = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape).nullish();
/** A field kpc never reads and whose schema grows every release: accepted as any JSON value. */
export const anything = () => z.unknown().optional();

/**
 * Field names whose value is a map (map[string]...): a key inside them renders as `[key]`, as
 * Go's field.Path.Key does (`metadata.labels[app]`), not as a child field.
 */
export const MAP_FIELDS: ReadonlySet<string> = new Set([
  'labels',
  'annotations',
  'selector',
  'deprecatedTopology',
  'featureGates',
  'capacity',
  'allocatable',
]);

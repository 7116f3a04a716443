/**
 * "Did you mean targetPort?" for an unknown field: the known field of the same object whose name
 * is closest, when it is close enough (edit distance at most 2, or the same letters in another
 * case). Appended after the API server's words, so they stay a prefix of the message.
 */

import type { z } from 'zod';

interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  options?: z.ZodType[];
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The object schema a value at `path` is decoded with, if the path leads to one. */
function objectAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): Record<string, z.ZodType> | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; ; ) {
    if (!s) return undefined;
    const def = defOf(s);
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'catch' || def.type === 'readonly') {
      s = def.innerType;
      continue;
    }
    if (i === path.length) return def.type === 'object' ? def.shape : undefined;
    const part = path[i++];
    if (def.type === 'object') s = def.shape?.[String(part)];
    else if (def.type === 'array') s = def.element;
    else if (def.type === 'record') s = def.valueType;
    else return undefined;
  }
}

/** Levenshtein distance, stopping early once it passes `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/** The known field `key` was probably meant to be, at `objectPath` of `schema`. */
export function suggestField(schema: z.ZodType, objectPath: ReadonlyArray<PropertyKey>, key: string): string | undefined {
  const shape = objectAt(schema, objectPath);
  if (!shape) return undefined;
  const lower = key.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of Object.keys(shape)) {
    if (name.toLowerCase() === lower) return name;
    const d = distance(lower, name.toLowerCase(), 2);
    if (d <= 2 && d < key.length && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

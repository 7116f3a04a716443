/**
 * A quick "would zod accept this value as it is?" test, compiled once from a wire schema.
 *
 * Why: zod's safeParse copies every object it checks and keeps a list of issues as it goes. For
 * a 20,000-Service cluster that copy was most of the decode time and much of the garbage, while
 * almost every object is valid. So decoding first asks this predicate; when it says yes the raw
 * value is used as the decoded value, and only when it says no does zod run (and word the errors).
 *
 * The one rule: the predicate must never say yes where zod would say no, or where zod's output
 * would differ from its input in a way the conversion to the internal form (toCore*) can see.
 * Saying no where zod says yes only costs time. Hence anything this file does not know (a zod
 * type or check it does not list) compiles to "no".
 *
 * What it mirrors (zod 4, node_modules/zod/v4/core/schemas.js):
 *   string, boolean            typeof, no checks
 *   number                     finite; checks: safe integer, >= / <= bounds
 *   unknown, any               anything
 *   optional / nullable        undefined / null accepted
 *   array                      every element, no length checks
 *   strictObject / looseObject each known key (absent reads as undefined); strict: no other key
 *   record(string, V)          a plain object whose values are V; a "__proto__" key is refused
 *                              because zod drops it from its output
 *   union                      any option
 */

import type { z } from 'zod';

export type Acceptor = (value: unknown) => boolean;

const never: Acceptor = () => false;
const always: Acceptor = () => true;

/** The part of a zod schema's definition this file reads. */
interface Def {
  type: string;
  checks?: Array<{ _zod: { def: { check: string; format?: string; value?: number; inclusive?: boolean } } }>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function hasChecks(def: Def): boolean {
  return def.checks !== undefined && def.checks.length > 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What zod's isPlainObject says yes to, narrowed to what JSON and YAML parsers build. */
function isPlainData(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function compileAcceptor(schema: z.ZodType): Acceptor {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      return hasChecks(def) ? never : (v) => typeof v === 'string';
    case 'boolean':
      return hasChecks(def) ? never : (v) => typeof v === 'boolean';
    case 'number':
      return numberAcceptor(def);
    case 'unknown':
    case 'any':
      return always;
    case 'optional': {
      // exactOptional shares the type name but refuses an explicit undefined.
      const traits = (schema as unknown as { _zod: { traits: Set<string> } })._zod.traits;
      if (traits.has('$ZodExactOptional')) return never;
      const nullish = nullishPrimitive(def.innerType!);
      if (nullish) return nullish;
      const inner = compileAcceptor(def.innerType!);
      return (v) => v === undefined || inner(v);
    }
    case 'nullable': {
      const inner = compileAcceptor(def.innerType!);
      return (v) => v === null || inner(v);
    }
    case 'array': {
      if (hasChecks(def)) return never;
      const element = compileAcceptor(def.element!);
      return (v) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
        return true;
      };
    }
    case 'object':
      return objectAcceptor(def);
    case 'record':
      return recordAcceptor(def);
    case 'union': {
      const options = def.options!.map(compileAcceptor);
      // A loop, not options.some() with a closure over `v` made for every value checked.
      return (v) => {
        for (const accepts of options) if (accepts(v)) return true;
        return false;
      };
    }
    default:
      return never;
  }
}

/**
 * `.nullish()` around a string or boolean (most fields of every wire schema) as one test
 * instead of three nested ones: decoding runs it a few million times on a large cluster.
 */
function nullishPrimitive(optionalInner: z.ZodType): Acceptor | undefined {
  const nullable = defOf(optionalInner);
  if (nullable.type !== 'nullable') return undefined;
  const leaf = defOf(nullable.innerType!);
  if (hasChecks(leaf)) return undefined;
  if (leaf.type === 'string') return (v) => v == null || typeof v === 'string';
  if (leaf.type === 'boolean') return (v) => v == null || typeof v === 'boolean';
  return undefined;
}

function numberAcceptor(def: Def): Acceptor {
  const tests: Array<(n: number) => boolean> = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'number_format' && c.format === 'safeint') tests.push(Number.isSafeInteger);
    else if (c.check === 'greater_than' && typeof c.value === 'number') {
      const min = c.value;
      tests.push(c.inclusive ? (n) => n >= min : (n) => n > min);
    } else if (c.check === 'less_than' && typeof c.value === 'number') {
      const max = c.value;
      tests.push(c.inclusive ? (n) => n <= max : (n) => n < max);
    } else return never;
  }
  // Loops rather than some()/every() with a closure over `v`: one closure per value checked.
  return (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return false;
    for (const test of tests) if (!test(v)) return false;
    return true;
  };
}

function objectAcceptor(def: Def): Acceptor {
  if (hasChecks(def)) return never;
  const catchall = def.catchall === undefined ? undefined : defOf(def.catchall).type;
  // Only strict (catchall never) and loose (catchall unknown) objects: a stripping object's
  // output would lack keys its input has.
  if (catchall !== 'never' && catchall !== 'unknown') return never;
  const shape = def.shape!;
  const keys = Object.keys(shape);
  if (keys.includes('__proto__')) return never;
  const fields = new Map(
    keys.map((k) => {
      const accepts = compileAcceptor(shape[k]!);
      // A field that refuses undefined must be present (zod checks an absent key as undefined).
      return [k, { accepts, required: !accepts(undefined) }];
    }),
  );
  const requiredCount = [...fields.values()].filter((f) => f.required).length;
  const strict = catchall === 'never';
  return (v) => {
    if (!isObject(v)) return false;
    // One pass over the keys the value has (V8 reads `v[key]` inside for-in quickly), rather
    // than a look-up of every key the schema knows; the required ones are counted on the way.
    let requiredSeen = 0;
    for (const key in v) {
      const field = fields.get(key);
      if (field === undefined) {
        if (strict) return false;
      } else if (!field.accepts(v[key])) return false;
      else if (field.required) requiredSeen++;
    }
    return requiredSeen === requiredCount;
  };
}

function recordAcceptor(def: Def): Acceptor {
  const keyDef = defOf(def.keyType!);
  if (keyDef.type !== 'string' || hasChecks(keyDef)) return never;
  const value = compileAcceptor(def.valueType!);
  return (v) => {
    if (!isPlainData(v)) return false;
    for (const key in v) {
      if (key === '__proto__' || !value(v[key])) return false;
    }
    return true;
  };
}

/**
 * Go's ways of printing a value inside an API error, reproduced byte for byte.
 *
 * apimachinery's field.Error.ErrorBody prints a bad value with `%q` when its Go type is exactly
 * `string`, plain `%v` for int32/int64/float/bool, and json.Marshal for everything else
 * (named string types such as core.Protocol, pointers, slices, structs; since v1.34,
 * kubernetes/kubernetes#132314). The two quotings differ on exactly the hostile input kpc
 * must reject (control characters, U+2028, `<`), so both are implemented here.
 */

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** Code points of a JS string, with lone surrogates read as U+FFFD as Go's UTF-8 decoding would. */
function* codePoints(s: string): Generator<number> {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        yield ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
        continue;
      }
    }
    yield c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
  }
}

/** Go's strconv.Quote (what `%q` prints for a string). */
export function goQuote(s: string): string {
  let out = '"';
  for (const r of codePoints(s)) {
    switch (r) {
      case 0x22: out += '\\"'; continue;
      case 0x5c: out += '\\\\'; continue;
      case 0x07: out += '\\a'; continue;
      case 0x08: out += '\\b'; continue;
      case 0x0c: out += '\\f'; continue;
      case 0x0a: out += '\\n'; continue;
      case 0x0d: out += '\\r'; continue;
      case 0x09: out += '\\t'; continue;
      case 0x0b: out += '\\v'; continue;
    }
    const ch = String.fromCodePoint(r);
    if (PRINTABLE.test(ch)) out += ch;
    else if (r < 0x80) out += `\\x${hex(r, 2)}`;
    else if (r < 0x10000) out += `\\u${hex(r, 4)}`;
    else out += `\\U${hex(r, 8)}`;
  }
  return out + '"';
}

/** Go's encoding/json string encoding (HTML-safe, as json.Marshal does). */
export function goJSONString(s: string): string {
  let out = '"';
  for (const r of codePoints(s)) {
    switch (r) {
      case 0x22: out += '\\"'; continue;
      case 0x5c: out += '\\\\'; continue;
      case 0x08: out += '\\b'; continue;
      case 0x0c: out += '\\f'; continue;
      case 0x0a: out += '\\n'; continue;
      case 0x0d: out += '\\r'; continue;
      case 0x09: out += '\\t'; continue;
    }
    if (r < 0x20 || r === 0x3c || r === 0x3e || r === 0x26 || r === 0x2028 || r === 0x2029) {
      out += `\\u${hex(r, 4)}`;
    } else {
      out += String.fromCodePoint(r);
    }
  }
  return out + '"';
}

/** json.Marshal of a plain JSON value: object keys in Go's map order (sorted), strings HTML-safe. */
export function goJSON(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goJSONString(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (v instanceof GoStruct) {
    return `{${v.fields.map(([k, x]) => `${goJSONString(k)}:${goJSON(x)}`).join(',')}}`;
  }
  if (typeof v === 'object') {
    const keys = Object.keys(v as object).sort();
    return `{${keys.map((k) => `${goJSONString(k)}:${goJSON((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return 'null';
}

/**
 * A Go struct value for json.Marshal: fields keep declaration order (maps are sorted, structs
 * are not). Used for the internal core.ServicePort in `spec.ports[1]: Duplicate value: {...}`.
 */
export class GoStruct {
  constructor(readonly fields: ReadonlyArray<readonly [string, unknown]>) {}
}

/**
 * How a bad value is printed. A bare JS string is a Go `string` (quoted with %q), a number or
 * boolean is a Go int/bool (%v); wrap anything else with {@link asJSON} (Go named types,
 * pointers, slices, structs), which json.Marshal renders.
 */
export type BadValue = string | number | boolean | JSONValue;

export class JSONValue {
  constructor(readonly value: unknown) {}
}

export function asJSON(value: unknown): JSONValue {
  return new JSONValue(value);
}

export function renderBadValue(v: BadValue): string {
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return goJSON(v.value);
}

/** Bytes of a string in UTF-8: Go's len() on strings, which every length limit uses. */
export function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

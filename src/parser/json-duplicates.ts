/**
 * Duplicate keys in JSON. JSON.parse keeps the last of two equal keys without a word; the API
 * server's strict decoding (kubectl's default, --validate=strict) refuses them with
 * `duplicate field "metadata.name"`, and so does kpc, for JSON as for YAML.
 *
 * Looking for duplicates costs a second pass, so it runs only when a cheap count says there
 * may be one: the keys in the text (each ends with an unescaped quote and a colon) against
 * the keys JSON.parse kept. Equal counts mean no key was dropped, hence no duplicate.
 */

/**
 * Keys written as `"key":` in the text. Inside a string a quote is always escaped, so an
 * unescaped `":` ends a key; a key written `"key" :` is not counted (the counts then differ
 * and the exact search runs, which finds nothing wrong).
 */
export function countKeysInText(text: string): number {
  let n = 0;
  for (let i = text.indexOf('":'); i >= 0; i = text.indexOf('":', i + 2)) {
    let backslashes = 0;
    for (let k = i - 1; k >= 0 && text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if ((backslashes & 1) === 0) n++;
  }
  return n;
}

/** Keys of every object in a parsed JSON value. */
export function countKeysInValue(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const child of v) if (child !== null && typeof child === 'object') stack.push(child);
    } else {
      for (const key in v) {
        n++;
        const child = (v as Record<string, unknown>)[key];
        if (child !== null && typeof child === 'object') stack.push(child);
      }
    }
  }
  return n;
}

export interface DuplicateKey {
  /** Offset of the second occurrence's opening quote in the text. */
  offset: number;
  /** The field path as the API server prints it: `metadata.name`, `spec.ports[0].port`. */
  path: string;
}

interface Frame {
  keys: Set<string> | undefined; // undefined for an array
  path: string;
  index: number;
  key: string;
}

/** The first duplicate key of a valid JSON text (JSON.parse took it), or undefined. */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  const childPath = (f: Frame | undefined): string => {
    if (!f) return '';
    if (f.keys === undefined) return `${f.path}[${f.index}]`;
    return f.path === '' ? f.key : `${f.path}.${f.key}`;
  };
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i = start + 1; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      const s = text.slice(start + 1, i);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const key = s.includes('\\') ? (JSON.parse(`"${s}"`) as string) : s;
        if (top.keys.has(key)) return { offset: start, path: top.path === '' ? key : `${top.path}.${key}` };
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const path = childPath(stack[stack.length - 1]);
      stack.push({ keys: c === 0x7b ? new Set() : undefined, path, index: 0, key: '' });
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.index++;
    }
  }
  return undefined;
}

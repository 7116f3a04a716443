/**
 * Sorting chains by name, fast: a 20,000-Service ruleset has over 250,000 chains.
 *
 * A comparison sort of that many objects costs a few hundred milliseconds: every one of its
 * millions of comparisons reads two objects and two strings scattered over the heap. This
 * is a most-significant-digit radix sort instead: five characters of each name at a time
 * become one number, the numbers (with each item's index in their low bits) are sorted by
 * the engine's native numeric sort, and each run of names equal so far is sorted by its
 * next five characters in turn. Per-service chain names differ within a few characters of
 * their hash, so two or three rounds settle almost everything.
 *
 * Names must be chain names (safe-text.ts chainName: `[A-Z][A-Z0-9-]*`); the order is byte
 * order, as `<` on strings.
 */

/** The characters of chain names in byte order; a character's digit is its position + 1 (0 = past the end). */
const ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGIT = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i + 1;

const CHARS_PER_ROUND = 5;
/** 5 digits of 6 bits: 30 bits of key, leaving 23 bits of a double's 53 for the index. */
const INDEX_SPAN = 2 ** 23;
/** Runs this short are sorted by comparing names. */
const SMALL = 16;

const byName = <T extends { name: string }>(x: T, y: T): number => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);

/** The digits of `name` at [from, from + 5) as one number; digits past the end are 0. */
function keyAt(name: string, from: number): number {
  let key = 0;
  for (let i = from; i < from + CHARS_PER_ROUND; i++) key = key * 64 + (i < name.length ? DIGIT[name.charCodeAt(i)]! : 0);
  return key;
}

/**
 * `items` sorted by name (a new array). All names must share their first `from` characters
 * (0 when nothing is known about them).
 */
export function sortByName<T extends { name: string }>(items: readonly T[], from = 0): T[] {
  const n = items.length;
  if (n <= SMALL || n >= INDEX_SPAN) return [...items].sort(byName);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = keyAt(items[i]!.name, from) * INDEX_SPAN + i;
  keys.sort();
  const sorted = new Array<T>(n);
  for (let i = 0; i < n; i++) sorted[i] = items[keys[i]! % INDEX_SPAN]!;
  // Runs of names equal in these characters: sort each by the characters after them.
  for (let i = 0; i < n; ) {
    const key = Math.floor(keys[i]! / INDEX_SPAN);
    let j = i + 1;
    while (j < n && Math.floor(keys[j]! / INDEX_SPAN) === key) j++;
    // A name that ends inside these characters makes the whole run that one name (duplicates): nothing to do.
    if (j - i > 1 && key % 64 !== 0) {
      const run = sortByName(sorted.slice(i, j), from + CHARS_PER_ROUND);
      for (let k = 0; k < run.length; k++) sorted[i + k] = run[k]!;
    }
    i = j;
  }
  return sorted;
}

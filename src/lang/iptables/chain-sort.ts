/**
 * Sorting chains by name, fast: a 20,000-Service ruleset has over 250,000 chains.
 *
 * Two costs dominate such a sort, and this module avoids both:
 *
 * - Comparisons. A comparison sort makes millions, each reading two strings. Instead, each
 *   name becomes numbers, five characters per number (a most-significant-digit radix sort):
 *   the numbers, with each item's position in their low bits, are sorted by the engine's
 *   native numeric sort, and each run of names equal so far is sorted by its next five
 *   characters in turn. Per-service chain names differ within a few characters of their
 *   hash, so two or three rounds settle almost everything.
 * - Memory. The names are scattered over a heap of hundreds of megabytes; reading them in
 *   sorted order misses the CPU caches on every one (reading a field of each of 250,000
 *   objects in sorted order takes ~100 ms, in allocation order a few). So the names
 *   are read once, in the order given, into the numbers of every round (NameKeys), and the
 *   sort touches only those.
 *
 * Names must be chain names (safe-text.ts chainName: `[A-Z][A-Z0-9-]*`, at most 28
 * characters); the order is byte order, as `<` on strings.
 */

/** The characters of chain names in byte order; a character's digit is its position + 1 (0 = past the end). */
const ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGIT = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i + 1;

const CHARS_PER_ROUND = 5;
/** Six rounds of five characters cover a whole chain name (28 characters at most) and its end. */
export const ROUNDS = 6;
/** 5 digits of 6 bits: 30 bits of key, leaving 23 bits of a double's 53 for the position. */
const POSITION_SPAN = 2 ** 23;
/** Bytes per name in NameKeys' packed characters (more than the longest name). */
const NAME_STRIDE = 32;
/** Runs this short are sorted by comparing keys. */
const SMALL = 16;

/** The digits of `name` at [from, from + 5) as one number; digits past the end are 0. */
function keyAt(name: string, from: number): number {
  let key = 0;
  for (let i = from; i < from + CHARS_PER_ROUND; i++) key = key * 64 + (i < name.length ? DIGIT[name.charCodeAt(i)]! : 0);
  return key;
}

/** The longest name NameKeys takes (chain names are at most 28 characters). */
export const MAX_NAME_LENGTH = ROUNDS * CHARS_PER_ROUND - 1;

/**
 * Names as sort keys, read once: round r of name i is `rounds[r][i]`, its characters
 * [5r, 5r + 5). Two names have equal keys in every round exactly when they are equal.
 * Also each name's characters, packed at a fixed stride, to be printed in sorted order
 * without going back to the strings (see writeName).
 */
export class NameKeys {
  readonly rounds: Float64Array[];
  /** Name i's character codes are codes[i · 32, i · 32 + lengths[i]). */
  private readonly codes: Uint8Array;
  private readonly lengths: Uint8Array;
  /** Some name that occurs more than once, if sorting found one. */
  duplicate: string | undefined = undefined;

  constructor(readonly names: readonly string[]) {
    const n = names.length;
    if (n >= POSITION_SPAN) throw new Error(`internal error: ${n} chains are more than the chain sort handles`);
    this.rounds = Array.from({ length: ROUNDS }, () => new Float64Array(n));
    this.codes = new Uint8Array(n * NAME_STRIDE);
    this.lengths = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const name = names[i]!;
      if (name.length > MAX_NAME_LENGTH) throw new Error(`internal error: chain name ${name} is too long to sort`);
      for (let r = 0; r < ROUNDS; r++) this.rounds[r]![i] = keyAt(name, r * CHARS_PER_ROUND);
      for (let c = 0; c < name.length; c++) this.codes[i * NAME_STRIDE + c] = name.charCodeAt(c);
      this.lengths[i] = name.length;
    }
  }

  /** The length of name `i`. */
  nameLength(i: number): number {
    return this.lengths[i]!;
  }

  /** Write name `i` (its character codes) into `out` at `at`; returns where it ends. */
  writeName(i: number, out: Uint8Array, at: number): number {
    const from = i * NAME_STRIDE;
    const length = this.lengths[i]!;
    for (let c = 0; c < length; c++) out[at + c] = this.codes[from + c]!;
    return at + length;
  }

  /** Name `a` compared with name `b` (negative, 0, positive), from round `round` on. */
  compare(a: number, b: number, round = 0): number {
    for (let r = round; r < ROUNDS; r++) {
      const d = this.rounds[r]![a]! - this.rounds[r]![b]!;
      if (d !== 0) return d;
    }
    return 0;
  }

  /**
   * `indexes` (of names that are equal in their rounds before `round`) sorted by name, as a
   * new array. For names that share a prefix of 5·k characters, pass round k.
   */
  sort(indexes: readonly number[], round = 0): number[] {
    const n = indexes.length;
    if (n <= SMALL || round >= ROUNDS) {
      const sorted = [...indexes].sort((a, b) => this.compare(a, b, round));
      for (let k = 1; k < n; k++) if (this.compare(sorted[k - 1]!, sorted[k]!, round) === 0) this.duplicate ??= this.names[sorted[k]!];
      return sorted;
    }
    const keys = this.rounds[round]!;
    const sortable = new Float64Array(n);
    for (let k = 0; k < n; k++) sortable[k] = keys[indexes[k]!]! * POSITION_SPAN + k;
    sortable.sort();
    const sorted = new Array<number>(n);
    for (let k = 0; k < n; k++) sorted[k] = indexes[sortable[k]! % POSITION_SPAN]!;
    // Runs of names equal in this round: sort each by the rounds after it.
    for (let i = 0; i < n; ) {
      const key = Math.floor(sortable[i]! / POSITION_SPAN);
      let j = i + 1;
      while (j < n && Math.floor(sortable[j]! / POSITION_SPAN) === key) j++;
      if (j - i > 1) {
        if (key % 64 === 0) {
          // The names end inside this round: the whole run is one name, more than once.
          this.duplicate ??= this.names[sorted[i]!];
        } else {
          const run = this.sort(sorted.slice(i, j), round + 1);
          for (let k = 0; k < run.length; k++) sorted[i + k] = run[k]!;
        }
      }
      i = j;
    }
    return sorted;
  }
}

/** `items` sorted by name (a new array). */
export function sortByName<T extends { name: string }>(items: readonly T[]): T[] {
  const keys = new NameKeys(items.map((item) => item.name));
  return keys.sort(Array.from(items, (_, i) => i)).map((i) => items[i]!);
}

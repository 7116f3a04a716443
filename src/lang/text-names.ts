/**
 * Names found in one large text, each known by where it lies: a node's rules name 264,000
 * chains, and the lazy readers (iptables/indexed-read.ts, nftables/lazy-read.ts) index them
 * without a string or a Map entry per name. A name is numbered (its id, from 0, in the order
 * first added) and found again by the same hash of its characters, given as a string (a
 * lookup) or as a range of the text (while reading).
 *
 * The text may be a PiecedText (one too long to be a string), in which a name or a line lies
 * within one of its pieces, or a file's ASCII bytes (AsciiBytes), whose names are compared where
 * they lie (sameRange) and never made strings while reading.
 */

import type { TextSource } from './text-source.js';

export class TextNames {
  /** How many names. */
  count = 0;
  private starts: Int32Array<ArrayBuffer>;
  private lengths: Int32Array<ArrayBuffer>;
  private hashes: Int32Array<ArrayBuffer>;
  /** Names not taken from the text (start -1): by id. */
  private strings = new Map<number, string>();
  /** Open addressing: id + 1, 0 for a free slot; at most half full. */
  private slots: Int32Array<ArrayBuffer>;

  /** `expected`: about how many names the text holds (room is made for them at once). */
  constructor(
    private readonly text: TextSource,
    expected = 1024,
  ) {
    const room = 2 ** Math.ceil(Math.log2(Math.max(1024, expected)));
    this.starts = new Int32Array(room);
    this.lengths = new Int32Array(room);
    this.hashes = new Int32Array(room);
    this.slots = new Int32Array(room * 2);
  }

  /** The id of the name at start..start+length of the text (its hash: hashOfText), added if new. */
  addAt(start: number, length: number, hash = hashOfText(this.text, start, start + length)): number {
    const mask = this.slots.length - 1;
    let s = hash & mask;
    for (let id = this.slots[s]! - 1; id >= 0; id = this.slots[s]! - 1) {
      if (this.hashes[id] === hash && this.lengths[id] === length && this.sameAt(id, start, length)) return id;
      s = (s + 1) & mask;
    }
    return this.added(s, hash, start, length);
  }

  /** The id of `name`, added if new. */
  add(name: string): number {
    const found = this.find(name);
    if (found >= 0) return found;
    const hash = hashOfString(name);
    const mask = this.slots.length - 1;
    let s = hash & mask;
    while (this.slots[s] !== 0) s = (s + 1) & mask;
    const id = this.added(s, hash, -1, name.length);
    this.strings.set(id, name);
    return id;
  }

  /** The id of `name`, or -1. */
  find(name: string): number {
    const hash = hashOfString(name);
    const mask = this.slots.length - 1;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const id = this.slots[s]! - 1;
      if (id < 0) return -1;
      if (this.hashes[id] === hash && this.lengths[id] === name.length && this.is(id, name)) return id;
    }
  }

  /** How long name id is. */
  lengthOf(id: number): number {
    return this.lengths[id]!;
  }

  /** Whether name id is the text at `at..at + its length`. */
  isAt(id: number, at: number): boolean {
    const start = this.starts[id]!;
    return start < 0 ? this.text.startsWith(this.strings.get(id)!, at) : sameRange(this.text, start, at, this.lengths[id]!);
  }

  name(id: number): string {
    const start = this.starts[id]!;
    return start < 0 ? this.strings.get(id)! : this.text.slice(start, start + this.lengths[id]!);
  }

  private is(id: number, name: string): boolean {
    const start = this.starts[id]!;
    return start < 0 ? this.strings.get(id) === name : this.text.startsWith(name, start);
  }

  private sameAt(id: number, start: number, length: number): boolean {
    const other = this.starts[id]!;
    if (other < 0) return this.strings.get(id) === this.text.slice(start, start + length);
    return sameRange(this.text, other, start, length);
  }

  private added(slot: number, hash: number, start: number, length: number): number {
    const id = this.count++;
    if (this.starts.length < this.count) {
      this.starts = grown(this.starts);
      this.lengths = grown(this.lengths);
      this.hashes = grown(this.hashes);
    }
    this.starts[id] = start;
    this.lengths[id] = length;
    this.hashes[id] = hash;
    this.slots[slot] = id + 1;
    if (this.count * 2 > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    const mask = this.slots.length - 1;
    for (let id = 0; id < this.count; id++) {
      let s = this.hashes[id]! & mask;
      while (this.slots[s] !== 0) s = (s + 1) & mask;
      this.slots[s] = id + 1;
    }
  }
}

/**
 * Where runs of lines lie, per id: a reader notes the lines an object's run of consecutive lines
 * covers (start of its first, end of its last, the first's line number when it counts them),
 * and gets the lines back when the object is asked for.
 */
export class LineRuns {
  /** Four numbers a run: start, end, first line number, the same id's next run (-1: none). */
  private runs: Int32Array<ArrayBuffer>;
  private runCount = 0;
  private first: Int32Array<ArrayBuffer>;
  private last: Int32Array<ArrayBuffer>;

  /** `expected`: about how many ids (room is made for them, and a run each, at once). */
  constructor(
    private readonly text: TextSource,
    expected = 1024,
  ) {
    const room = 2 ** Math.ceil(Math.log2(Math.max(1024, expected)));
    this.runs = new Int32Array(room * 4);
    this.first = new Int32Array(room).fill(-1);
    this.last = new Int32Array(room).fill(-1);
  }

  /** A run of id's begins with the line start..end (line number lineNo). */
  begin(id: number, start: number, end: number, lineNo = 0): void {
    while (this.first.length <= id) {
      this.first = grown(this.first, -1);
      this.last = grown(this.last, -1);
    }
    const r = this.runCount++;
    if (this.runs.length < this.runCount * 4) this.runs = grown(this.runs);
    this.runs[r * 4] = start;
    this.runs[r * 4 + 1] = end;
    this.runs[r * 4 + 2] = lineNo;
    this.runs[r * 4 + 3] = -1;
    if (this.last[id]! < 0) this.first[id] = r;
    else this.runs[this.last[id]! * 4 + 3] = r;
    this.last[id] = r;
  }

  /** The run begun last takes the next line, which ends at `end`. */
  extend(end: number): void {
    this.runs[(this.runCount - 1) * 4 + 1] = end;
  }

  has(id: number): boolean {
    return id >= 0 && id < this.first.length && this.first[id]! >= 0;
  }

  /** Id's lines in the text's order: start, end, and line number (when begun with one). */
  eachLine(id: number, each: (start: number, end: number, lineNo: number) => void): void {
    if (!this.has(id)) return;
    for (let r = this.first[id]!; r >= 0; r = this.runs[r * 4 + 3]!) {
      const runEnd = this.runs[r * 4 + 1]!;
      let lineNo = this.runs[r * 4 + 2]!;
      for (let s = this.runs[r * 4]!; s < runEnd; lineNo++) {
        let e = this.text.indexOf('\n', s);
        if (e < 0 || e > runEnd) e = runEnd;
        each(s, e, lineNo);
        s = e + 1;
      }
    }
  }
}

/**
 * Whether text[a..a+length) and text[b..b+length) are the same characters: in a string two
 * substrings compared whole (cheaper than their characters one by one); a file's bytes compare
 * theirs and make no string.
 */
export function sameRange(text: TextSource, a: number, b: number, length: number): boolean {
  return typeof text === 'string' ? text.slice(a, a + length) === text.slice(b, b + length) : text.sameRange(a, b, length);
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** The hash TextNames uses, of text[start..end). */
export function hashOfText(text: TextSource, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash;
}

function hashOfString(name: string): number {
  return hashOfText(name, 0, name.length);
}

/** Adding to a hash: one character more (the readers hash while they check a name's characters). */
export function hashWith(hash: number, char: number): number {
  return Math.imul(hash ^ char, FNV_PRIME);
}

export const HASH_START = FNV_OFFSET;

/** `array` copied into one twice as long, the new part filled with `fill`. */
function grown(array: Int32Array<ArrayBuffer>, fill = 0): Int32Array<ArrayBuffer> {
  const next = new Int32Array(array.length * 2);
  next.set(array);
  if (fill !== 0) next.fill(fill, array.length);
  return next;
}

/**
 * Two texts compared as lines without being split into them: each text's line starts are
 * numbers, and runs of equal lines are found by comparing blocks of lines as text, longer and
 * longer while they agree. Two outputs of a million lines that differ in a few dozen, split,
 * are two million strings for the collector to move; as blocks, a few hundred comparisons.
 */

import { AsciiBytes } from '../lang/ascii-bytes.js';
import { anyChanges, changesBetween, type Change } from './sequence.js';

/**
 * A text as one string, or as ASCII bytes: a file read and not decoded, which may be longer
 * than one string can be (kpc's nftables output at 100,000 Services, 721 MB). Two texts
 * compared are best of one form: two bytes' blocks are compared as memory.
 */
export type LineText = string | AsciiBytes;

/** A text's lines: line i is text[starts[i], starts[i + 1]), its newline included (the last may lack one). */
export class TextLines {
  readonly starts: Int32Array;
  readonly count: number;

  constructor(readonly text: LineText) {
    let starts = new Int32Array(1024);
    let count = 0;
    for (let at = 0; at < text.length; count++) {
      if (count + 1 >= starts.length) {
        const grown = new Int32Array(starts.length * 2);
        grown.set(starts);
        starts = grown;
      }
      starts[count] = at;
      const nl = text.indexOf('\n', at);
      at = nl < 0 ? text.length : nl + 1;
    }
    starts[count] = text.length;
    this.starts = starts;
    this.count = count;
  }

  /** Lines [from, from + k) as one string (of a string, a slice: no copy). */
  block(from: number, k: number): string {
    return this.text.slice(this.starts[from]!, this.starts[from + k]!);
  }

  /** Line i without its newline. */
  bare(i: number): string {
    const end = this.starts[i + 1]!;
    return this.text.slice(this.starts[i]!, this.text.charCodeAt(end - 1) === 10 ? end - 1 : end);
  }

  /** Line i as `diff -u` prints it: without its newline, or marked as lacking one. */
  line(i: number): string {
    if (this.text.charCodeAt(this.starts[i + 1]! - 1) === 10) return this.bare(i);
    return `${this.bare(i)}\n\\ No newline at end of file`;
  }
}

/**
 * Whether a's lines [x, x + k) are b's lines [y, y + k): the same text means the same lines,
 * since both blocks are k whole lines (each ends where its newline is, or at the text's end).
 */
function sameBlock(a: TextLines, x: number, b: TextLines, y: number, k: number): boolean {
  const length = a.starts[x + k]! - a.starts[x]!;
  if (length !== b.starts[y + k]! - b.starts[y]!) return false;
  if (a.text instanceof AsciiBytes && b.text instanceof AsciiBytes) return a.text.sameBytes(a.starts[x]!, b.text, b.starts[y]!, length);
  return a.block(x, k) === b.block(y, k);
}

/** How many lines from `x` in a and `y` in b agree (at most max), going forward (step 1) or back from x - 1, y - 1 (step -1). */
function agreeing(a: TextLines, x: number, b: TextLines, y: number, max: number, step: 1 | -1): number {
  let s = 0;
  let k = 1;
  while (s < max) {
    const n = Math.min(k, max - s);
    const same = step === 1 ? sameBlock(a, x + s, b, y + s, n) : sameBlock(a, x - s - n, b, y - s - n, n);
    if (same) {
      s += n;
      k *= 2;
    } else if (n === 1) break;
    else k = 1;
  }
  return s;
}

/**
 * The changes that make a's lines b's (Myers, the common head and tail found as blocks first),
 * or undefined past `maxEdits`; without one, always a script (sequence.ts anyChanges).
 */
export function lineChanges(a: TextLines, b: TextLines): Change[];
export function lineChanges(a: TextLines, b: TextLines, maxEdits: number): Change[] | undefined;
export function lineChanges(a: TextLines, b: TextLines, maxEdits = Infinity): Change[] | undefined {
  const head = agreeing(a, 0, b, 0, Math.min(a.count, b.count), 1);
  const tail = agreeing(a, a.count, b, b.count, Math.min(a.count, b.count) - head, -1);
  const run = (x: number, y: number, max: number) => agreeing(a, x, b, y, max, 1);
  if (maxEdits === Infinity) return anyChanges(head, a.count - tail, head, b.count - tail, run, { a: (i) => a.block(i, 1), b: (j) => b.block(j, 1) });
  return changesBetween(head, a.count - tail, head, b.count - tail, run, maxEdits);
}

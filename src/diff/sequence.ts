/**
 * The shortest edit script between two sequences (Myers' O(ND) algorithm): which elements of
 * the old sequence to delete and which of the new to insert. Used for rule lists (keys) and
 * for lines (unified diffs). Gives up (returns undefined) past `maxEdits`, where a rewrite is
 * cheaper than an edit script anyway.
 *
 * Without a `maxEdits` the script is still always made, in bounded memory: Myers keeps a row
 * of diagonals per edit (memory grows as the square of the edits: a golden of another cluster
 * is millions of edits away), so past EXACT_EDITS the sequences are cut at the elements that
 * occur once in each (anchors.ts) and the pieces between are compared on their own.
 */

import { anchoredChanges, type Keys } from './anchors.js';

export type Edit = { op: 'keep'; oldIndex: number; newIndex: number } | { op: 'delete'; oldIndex: number } | { op: 'insert'; newIndex: number };

export function editScript(a: readonly string[], b: readonly string[], maxEdits = Infinity): Edit[] | undefined {
  return editScriptBy(a, b, (x, y) => x === y, (x) => x, maxEdits);
}

/**
 * A change of an edit script, where it stands: `x` and `y` are how many old and new elements
 * come before it; a delete removes old element x, an insert adds new element y. The keeps
 * are implied: between two changes, and before the first and after the last, the old and new
 * elements that remain pair up in order.
 */
export interface Change {
  op: 'delete' | 'insert';
  x: number;
  y: number;
}

/**
 * The edit script between two lists of items compared by `key`. The common head and tail
 * are found first with `cheapEqual` (which must imply equal keys), so keys are only worked out
 * for the part in between: typical changes are small and local, and keys may be costly.
 */
export function editScriptBy<T>(a: readonly T[], b: readonly T[], cheapEqual: (x: T, y: T) => boolean, key: (x: T) => string, maxEdits = Infinity): Edit[] | undefined {
  const [start, endA, endB] = commonEnds(a, b, cheapEqual);
  const ka = a.slice(start, endA).map(key);
  const kb = b.slice(start, endB).map(key);
  const run = runOf(ka, kb);
  const changes =
    maxEdits === Infinity
      ? anyChanges(0, ka.length, 0, kb.length, run, { a: (i) => ka[i]!, b: (j) => kb[j]! })
      : changesBetween(0, ka.length, 0, kb.length, run, maxEdits);
  if (!changes) return undefined;
  const out: Edit[] = [];
  let x = 0;
  let y = 0;
  for (const c of changes) {
    while (x < c.x + start) out.push({ op: 'keep', oldIndex: x++, newIndex: y++ });
    if (c.op === 'delete') out.push({ op: 'delete', oldIndex: x++ });
    else out.push({ op: 'insert', newIndex: y++ });
  }
  while (x < a.length) out.push({ op: 'keep', oldIndex: x++, newIndex: y++ });
  return out;
}

/** How many elements of a from x and of b from y on are equal, at most `max`. */
export type Run = (x: number, y: number, max: number) => number;

function runOf(a: readonly string[], b: readonly string[]): Run {
  return (x, y, max) => {
    let s = 0;
    while (s < max && a[x + s] === b[y + s]) s++;
    return s;
  };
}

/** The length of the common head, and where the common tail starts in a and in b. */
function commonEnds<T>(a: readonly T[], b: readonly T[], equal: (x: T, y: T) => boolean): [number, number, number] {
  let start = 0;
  while (start < a.length && start < b.length && equal(a[start]!, b[start]!)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && equal(a[endA - 1]!, b[endB - 1]!)) {
    endA--;
    endB--;
  }
  return [start, endA, endB];
}

/** The most edits the shortest script is looked for (its rows then take 4·2·1024² bytes at most). */
export const EXACT_EDITS = 1024;

/**
 * The changes between old elements [aFrom, aTo) and new ones [bFrom, bTo): the shortest
 * (Myers) up to EXACT_EDITS, else cut at anchors (the elements `keys` names once in each).
 */
export function anyChanges(aFrom: number, aTo: number, bFrom: number, bTo: number, run: Run, keys: Keys): Change[] {
  const piece = (x0: number, x1: number, y0: number, y1: number) => changesBetween(x0, x1, y0, y1, run, EXACT_EDITS);
  return piece(aFrom, aTo, bFrom, bTo) ?? anchoredChanges(aFrom, aTo, bFrom, bTo, keys, piece);
}

/**
 * The changes between old elements [aFrom, aTo) and new ones [bFrom, bTo) (Myers), placed in
 * the whole sequences; `run` compares them. Undefined past maxEdits.
 */
export function changesBetween(aFrom: number, aTo: number, bFrom: number, bTo: number, run: Run, maxEdits = Infinity): Change[] | undefined {
  const n = aTo - aFrom;
  const m = bTo - bFrom;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // Step d's backtrack reads only diagonals -d-1..d+1 of the array as it was before the step:
  // each step keeps those (a copy of the whole array per step was 5.6 MB at each of a few dozen
  // steps for two 780,000-line texts).
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)) x = v[offset + k + 1]!;
      else x = v[offset + k - 1]! + 1;
      let y = x - k;
      if (x < n && y < m) {
        const s = run(aFrom + x, bFrom + y, Math.min(n - x, m - y));
        x += s;
        y += s;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d, aFrom, bFrom);
    }
  }
  return undefined;
}

/** The changes of the path changesBetween found, in order, placed in the whole lists (`aFrom`, `bFrom` added). */
function backtrack(trace: Int32Array[], n: number, m: number, dFinal: number, aFrom: number, bFrom: number): Change[] {
  const changes: Change[] = [];
  let x = n;
  let y = m;
  for (let d = dFinal; d > 0; d--) {
    // trace[d] holds diagonals -d-1..d+1 from index 0: diagonal j at index j + d + 1.
    const v = trace[d]!;
    const at = d + 1;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[at + k - 1]! < v[at + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[at + prevK]!;
    const prevY = prevX - prevK;
    // The snake's keeps (back to prevX, prevY) are implied; then the change that led to it.
    x = Math.max(prevX, x - (y - prevY));
    y = x - k;
    if (x === prevX) {
      y--;
      changes.push({ op: 'insert', x: aFrom + x, y: bFrom + y });
    } else {
      x--;
      changes.push({ op: 'delete', x: aFrom + x, y: bFrom + y });
    }
  }
  changes.reverse();
  return changes;
}

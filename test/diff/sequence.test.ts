/**
 * editScript (src/diff/sequence.ts) against Myers' algorithm as first written there (every
 * step kept a copy of the whole diagonal array; now only the diagonals it reached): the same
 * edit script for random sequences with many repeats, and a valid one (applying it to the old
 * sequence gives the new) whose length is the LCS's.
 */

import { expect, it } from 'vitest';
import { editScript, type Edit } from '../../src/diff/sequence.js';

function referenceEditScriptBy<T>(a: readonly T[], b: readonly T[], cheapEqual: (x: T, y: T) => boolean, key: (x: T) => string, maxEdits = Infinity): Edit[] | undefined {
  let start = 0;
  while (start < a.length && start < b.length && cheapEqual(a[start]!, b[start]!)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && cheapEqual(a[endA - 1]!, b[endB - 1]!)) {
    endA--;
    endB--;
  }
  const middle = referenceMyers(a.slice(start, endA).map(key), b.slice(start, endB).map(key), maxEdits);
  if (!middle) return undefined;
  const out: Edit[] = [];
  for (let k = 0; k < start; k++) out.push({ op: 'keep', oldIndex: k, newIndex: k });
  for (const e of middle) {
    if (e.op === 'keep') out.push({ op: 'keep', oldIndex: e.oldIndex + start, newIndex: e.newIndex + start });
    else if (e.op === 'delete') out.push({ op: 'delete', oldIndex: e.oldIndex + start });
    else out.push({ op: 'insert', newIndex: e.newIndex + start });
  }
  for (let k = 0; endA + k < a.length; k++) out.push({ op: 'keep', oldIndex: endA + k, newIndex: endB + k });
  return out;
}

function referenceMyers(a: readonly string[], b: readonly string[], maxEdits: number): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)) x = v[offset + k + 1]!;
      else x = v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, offset, n, m, d);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], offset: number, n: number, m: number, dFinal: number): Edit[] {
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = dFinal; d > 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) edits.push({ op: 'keep', oldIndex: --x, newIndex: --y });
    if (x === prevX) edits.push({ op: 'insert', newIndex: --y });
    else edits.push({ op: 'delete', oldIndex: --x });
  }
  while (x > 0 && y > 0) edits.push({ op: 'keep', oldIndex: --x, newIndex: --y });
  return edits.reverse();
}

function lcs(a: readonly string[], b: readonly string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) t[i]![j] = a[i] === b[j] ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
  return t[0]![0]!;
}

it('gives the first implementation\'s script, valid and minimal, for 20,000 random pairs', () => {
  let seed = 5;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  const seq = () => Array.from({ length: Math.floor(rand() * 30) }, () => 'abcd'[Math.floor(rand() * 4)]!);
  for (let k = 0; k < 20_000; k++) {
    const a = seq();
    const b = rand() < 0.5 ? seq() : a.map((x) => (rand() < 0.1 ? 'e' : x)).filter(() => rand() < 0.9);
    const script = editScript(a, b)!;
    expect(script, JSON.stringify([a, b])).toEqual(referenceEditScriptBy(a, b, (x, y) => x === y, (x) => x));
    const applied = script.filter((e) => e.op !== 'delete').map((e) => (e.op === 'insert' ? b[e.newIndex] : a[(e as Extract<Edit, { op: 'keep' }>).oldIndex]));
    expect(applied).toEqual(b);
    expect(script.filter((e) => e.op === 'keep').length).toBe(lcs(a, b));
  }
}, 60_000); // 20,000 pairs and their references: seconds, longer under a loaded npm test

it('gives up past maxEdits as before', () => {
  expect(editScript(['a', 'b', 'c'], ['x', 'y', 'z'], 2)).toBeUndefined();
  expect(editScript(['a', 'b', 'c'], ['a', 'y', 'c'], 2)).toBeDefined();
});

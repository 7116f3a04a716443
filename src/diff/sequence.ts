/**
 * The shortest edit script between two sequences (Myers' O(ND) algorithm): which elements of
 * the old sequence to delete and which of the new to insert. Used for rule lists (keys) and
 * for lines (unified diffs). Gives up (returns undefined) past `maxEdits`, where a rewrite is
 * cheaper than an edit script anyway.
 */

export type Edit = { op: 'keep'; oldIndex: number; newIndex: number } | { op: 'delete'; oldIndex: number } | { op: 'insert'; newIndex: number };

export function editScript(a: readonly string[], b: readonly string[], maxEdits = Infinity): Edit[] | undefined {
  return editScriptBy(a, b, (x, y) => x === y, (x) => x, maxEdits);
}

/**
 * The edit script between two lists of items compared by `key`. The common head and tail
 * are found first with `cheapEqual` (which must imply equal keys), so keys are only worked out
 * for the part in between: typical changes are small and local, and keys may be costly.
 */
export function editScriptBy<T>(a: readonly T[], b: readonly T[], cheapEqual: (x: T, y: T) => boolean, key: (x: T) => string, maxEdits = Infinity): Edit[] | undefined {
  let start = 0;
  while (start < a.length && start < b.length && cheapEqual(a[start]!, b[start]!)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && cheapEqual(a[endA - 1]!, b[endB - 1]!)) {
    endA--;
    endB--;
  }
  const middle = myers(a.slice(start, endA).map(key), b.slice(start, endB).map(key), maxEdits);
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

function myers(a: readonly string[], b: readonly string[], maxEdits: number): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
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
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], n: number, m: number, dFinal: number): Edit[] {
  const edits: Edit[] = [];
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
    while (x > prevX && y > prevY) edits.push({ op: 'keep', oldIndex: --x, newIndex: --y });
    if (x === prevX) edits.push({ op: 'insert', newIndex: --y });
    else edits.push({ op: 'delete', oldIndex: --x });
  }
  while (x > 0 && y > 0) edits.push({ op: 'keep', oldIndex: --x, newIndex: --y });
  return edits.reverse();
}

/**
 * A unified diff of two texts (`diff -u` style, 3 lines of context), for `kpc check`: kpc
 * check at 20,000 Services compares two outputs of a million lines that differ in a few
 * dozen, so the texts are compared as lines without being split (text-lines.ts).
 */

import type { Change } from './sequence.js';
import { lineChanges, TextLines, type LineText } from './text-lines.js';

const CONTEXT = 3;

export function unifiedDiff(oldText: LineText, newText: LineText, oldName: string, newName: string): string {
  const a = new TextLines(oldText);
  const b = new TextLines(newText);
  const changes: Change[] = lineChanges(a, b);
  if (changes.length === 0) return '';
  let out = `--- ${oldName}\n+++ ${newName}\n`;
  // Where each change leaves off: the old and new lines consumed once it is done.
  const afterX = (c: Change) => (c.op === 'delete' ? c.x + 1 : c.x);
  const afterY = (c: Change) => (c.op === 'insert' ? c.y + 1 : c.y);
  let previousEnd = 0;
  for (let first = 0; first < changes.length; ) {
    // A hunk: changes joined while at most 2·CONTEXT unchanged lines lie between two of them.
    let last = first;
    while (last + 1 < changes.length && changes[last + 1]!.x - afterX(changes[last]!) <= 2 * CONTEXT) last++;
    const f = changes[first]!;
    const l = changes[last]!;
    const lead = Math.min(CONTEXT, f.x - previousEnd);
    const nextStart = last + 1 < changes.length ? changes[last + 1]!.x : a.count;
    const trail = Math.min(CONTEXT, nextStart - afterX(l));
    const oldStart = f.x - lead;
    const newStart = f.y - lead;
    const oldCount = afterX(l) + trail - oldStart;
    const newCount = afterY(l) + trail - newStart;
    out += `@@ -${oldStart + (oldCount > 0 ? 1 : 0)},${oldCount} +${newStart + (newCount > 0 ? 1 : 0)},${newCount} @@\n`;
    let x = oldStart;
    for (let k = first; k <= last; k++) {
      const c = changes[k]!;
      while (x < c.x) out += ` ${a.line(x++)}\n`;
      if (c.op === 'delete') out += `-${a.line(x++)}\n`;
      else out += `+${b.line(c.y)}\n`;
    }
    while (x < afterX(l) + trail) out += ` ${a.line(x++)}\n`;
    previousEnd = x;
    first = last + 1;
  }
  return out;
}

/**
 * A unified diff of two texts (`diff -u` style, 3 lines of context), for `kpc check`.
 */

import { editScript, type Edit } from './sequence.js';

const CONTEXT = 3;

/** Lines; a last line without its newline is marked as `diff -u` marks it. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else if (lines.length > 0) lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const script: Edit[] = editScript(a, b) ?? [];
  if (script.every((e) => e.op === 'keep')) return '';
  let out = `--- ${oldName}\n+++ ${newName}\n`;
  // Group edits into hunks with CONTEXT lines around each change.
  const changed = script.map((e) => e.op !== 'keep');
  let i = 0;
  while (i < script.length) {
    if (!changed[i]) {
      i++;
      continue;
    }
    let start = Math.max(0, i - CONTEXT);
    let end = i;
    while (end < script.length) {
      let next = end;
      while (next < script.length && !changed[next]) next++;
      if (next >= script.length || next - end > 2 * CONTEXT) break;
      end = next + 1;
      while (end < script.length && changed[end]) end++;
    }
    end = Math.min(script.length, end + CONTEXT);
    const hunk = script.slice(start, end);
    const oldStart = firstIndex(script, start, 'old');
    const newStart = firstIndex(script, start, 'new');
    const oldCount = hunk.filter((e) => e.op !== 'insert').length;
    const newCount = hunk.filter((e) => e.op !== 'delete').length;
    out += `@@ -${oldStart + (oldCount > 0 ? 1 : 0)},${oldCount} +${newStart + (newCount > 0 ? 1 : 0)},${newCount} @@\n`;
    for (const e of hunk) {
      if (e.op === 'keep') out += ` ${a[e.oldIndex]}\n`;
      else if (e.op === 'delete') out += `-${a[e.oldIndex]}\n`;
      else out += `+${b[e.newIndex]}\n`;
    }
    i = end;
    start = end;
  }
  return out;
}

/** The 0-based old/new line number where script[k] stands. */
function firstIndex(script: readonly Edit[], k: number, side: 'old' | 'new'): number {
  let n = 0;
  for (let j = 0; j < k; j++) {
    const e = script[j]!;
    if (side === 'old' ? e.op !== 'insert' : e.op !== 'delete') n++;
  }
  return n;
}

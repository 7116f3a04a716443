/**
 * A unified diff of two texts (`diff -u` style, 3 lines of context), for `kpc check`.
 *
 * Two 80 MB rulesets that differ in one Service share almost every line: the lines before the
 * first difference and after the last are found in the texts themselves (lineWindow), and only
 * the lines between them, with their context, are split and compared. The edit script of that
 * window is the middle of the whole texts' script (which trims the same common lines first),
 * so the diff is the same.
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

/** The lines of each text from `skipped` (the same count of equal lines before it in both) on. */
interface Window {
  a: string[];
  b: string[];
  skipped: number;
}

/** How many characters both texts start with. */
function commonPrefix(x: string, y: string): number {
  const n = Math.min(x.length, y.length);
  let at = 0;
  for (const step of [1 << 16, 1 << 10, 1]) {
    while (at + step <= n && x.startsWith(y.slice(at, at + step), at)) at += step;
  }
  return at;
}

/** How many characters both texts end with. */
function commonSuffix(x: string, y: string): number {
  const n = Math.min(x.length, y.length);
  let at = 0;
  for (const step of [1 << 16, 1 << 10, 1]) {
    while (at + step <= n && x.endsWith(y.slice(y.length - at - step, y.length - at), x.length - at)) at += step;
  }
  return at;
}

/** Where the line after the one at `at` starts (the text's length at its end). */
function nextLine(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl < 0 ? text.length : nl + 1;
}

/**
 * The lines that differ with CONTEXT lines around them: every line before `skipped` and after
 * the window is the same in both texts. Only for texts that end with a newline (the marker of
 * a missing one makes a last line differ); otherwise every line.
 */
function lineWindow(oldText: string, newText: string): Window {
  if (!oldText.endsWith('\n') || !newText.endsWith('\n')) return { a: splitLines(oldText), b: splitLines(newText), skipped: 0 };
  // The equal lines before: up to the start of the line holding the first differing character.
  const prefix = commonPrefix(oldText, newText);
  const prefixEnd = prefix === 0 ? 0 : oldText.lastIndexOf('\n', prefix - 1) + 1;
  // The equal lines after: from the first line start in the common end (in both texts: a
  // start inside the common end is one in both), not before prefixEnd.
  const suffix = commonSuffix(oldText, newText);
  const cA = oldText.length - suffix;
  const cB = newText.length - suffix;
  const startsLine = (text: string, at: number) => at === 0 || text[at - 1] === '\n';
  let sufA = startsLine(oldText, cA) && startsLine(newText, cB) ? cA : nextLine(oldText, cA);
  let sufB = sufA - cA + cB;
  while (sufA < prefixEnd || sufB < prefixEnd) {
    const t = nextLine(oldText, sufA) - sufA;
    sufA += t;
    sufB += t;
  }
  // CONTEXT lines on each side.
  let start = prefixEnd;
  for (let k = 0; k < CONTEXT && start > 0; k++) start = start >= 2 ? oldText.lastIndexOf('\n', start - 2) + 1 : 0;
  let endA = sufA;
  for (let k = 0; k < CONTEXT && endA < oldText.length; k++) endA = nextLine(oldText, endA);
  const endB = endA - sufA + sufB;
  let skipped = 0;
  for (let at = oldText.indexOf('\n'); at >= 0 && at < start; at = oldText.indexOf('\n', at + 1)) skipped++;
  return { a: splitLines(oldText.slice(start, endA)), b: splitLines(newText.slice(start, endB)), skipped };
}

export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  if (oldText === newText) return '';
  const { a, b, skipped } = lineWindow(oldText, newText);
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
    const oldStart = skipped + firstIndex(script, start, 'old');
    const newStart = skipped + firstIndex(script, start, 'new');
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

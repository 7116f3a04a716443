/**
 * unifiedDiff (src/diff/unified.ts) against its first form, kept here as the reference: the
 * hunks made from the whole edit script, keeps and all (now only the changes are made, and
 * the keeps between them read off their places). The same text for random pairs of texts
 * with many repeated lines, changes near each other and near both ends, and missing final
 * newlines.
 */

import { expect, it } from 'vitest';
import { editScript, type Edit } from '../../src/diff/sequence.js';
import { unifiedDiff } from '../../src/diff/unified.js';
import { AsciiBytes } from '../../src/lang/ascii-bytes.js';

const CONTEXT = 3;

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else if (lines.length > 0) lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

function referenceUnifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const script: Edit[] = editScript(a, b) ?? [];
  if (script.every((e) => e.op === 'keep')) return '';
  let out = `--- ${oldName}\n+++ ${newName}\n`;
  const changed = script.map((e) => e.op !== 'keep');
  let i = 0;
  while (i < script.length) {
    if (!changed[i]) {
      i++;
      continue;
    }
    const start = Math.max(0, i - CONTEXT);
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
    const before = script.slice(0, start);
    const oldStart = before.filter((e) => e.op !== 'insert').length;
    const newStart = before.filter((e) => e.op !== 'delete').length;
    const oldCount = hunk.filter((e) => e.op !== 'insert').length;
    const newCount = hunk.filter((e) => e.op !== 'delete').length;
    out += `@@ -${oldStart + (oldCount > 0 ? 1 : 0)},${oldCount} +${newStart + (newCount > 0 ? 1 : 0)},${newCount} @@\n`;
    for (const e of hunk) {
      if (e.op === 'keep') out += ` ${a[e.oldIndex]}\n`;
      else if (e.op === 'delete') out += `-${a[e.oldIndex]}\n`;
      else out += `+${b[e.newIndex]}\n`;
    }
    i = end;
  }
  return out;
}

function bytes(text: string): AsciiBytes {
  return AsciiBytes.of(Buffer.from(text, 'latin1'))!;
}

it('makes the first form\'s hunks for 20,000 random pairs of texts', () => {
  let seed = 11;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  const lines = (n: number) => Array.from({ length: n }, () => 'abcdefgh'[Math.floor(rand() * (rand() < 0.5 ? 2 : 8))]!);
  const text = (ls: string[]) => ls.join('\n') + (rand() < 0.85 ? (ls.length > 0 ? '\n' : '') : '');
  let differing = 0;
  for (let k = 0; k < 20_000; k++) {
    const a = lines(Math.floor(rand() * 40));
    const b = rand() < 0.3 ? lines(Math.floor(rand() * 40)) : a.flatMap((x) => (rand() < 0.06 ? [] : rand() < 0.06 ? [x, 'z'] : rand() < 0.05 ? ['y'] : [x]));
    const [ta, tb] = [text(a), text(b)];
    const got = unifiedDiff(ta, tb, 'old', 'new');
    expect(got, JSON.stringify([ta, tb])).toBe(referenceUnifiedDiff(ta, tb, 'old', 'new'));
    // Texts longer than one string can be are compared as their bytes: the same diff.
    if (k % 10 === 0) expect(unifiedDiff(bytes(ta), bytes(tb), 'old', 'new'), JSON.stringify([ta, tb])).toBe(got);
    if (got !== '') differing++;
  }
  expect(differing).toBeGreaterThan(15_000);
}, 60_000);

it('makes the first form\'s hunks for long texts with a few changes (blocks of many lines compared at once)', () => {
  let seed = 17;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  for (let k = 0; k < 300; k++) {
    const a = Array.from({ length: 500 + Math.floor(rand() * 3000) }, (_, i) => (rand() < 0.2 ? 'same line' : `line ${i % 97}`));
    const edits = Math.floor(rand() * 12);
    const b = [...a];
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rand() * b.length);
      if (rand() < 0.4) b.splice(at, 1 + Math.floor(rand() * 3));
      else if (rand() < 0.7) b.splice(at, 0, `new ${e}`, ...(rand() < 0.5 ? ['same line'] : []));
      else b[at] = `changed ${e}`;
    }
    const ta = a.join('\n') + '\n';
    const tb = b.join('\n') + (rand() < 0.9 ? '\n' : '');
    const want = referenceUnifiedDiff(ta, tb, 'old', 'new');
    expect(unifiedDiff(ta, tb, 'old', 'new'), `pair ${k}`).toBe(want);
    expect(unifiedDiff(bytes(ta), bytes(tb), 'old', 'new'), `pair ${k} as bytes`).toBe(want);
  }
}, 60_000);

it('is empty for equal texts and names both files otherwise', () => {
  expect(unifiedDiff('a\nb\n', 'a\nb\n', 'x', 'y')).toBe('');
  expect(unifiedDiff('a\nb\n', 'a\nc\n', 'x', 'y')).toBe('--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n');
  expect(unifiedDiff('', 'a\n', 'x', 'y')).toBe('--- x\n+++ y\n@@ -0,0 +1,1 @@\n+a\n');
});

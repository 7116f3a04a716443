/**
 * unifiedDiff (src/diff/unified.ts, kpc check's diff) splits and compares only the lines
 * between the first and the last difference: it must print what the whole texts' diff prints
 * (unified-reference.ts), for random texts with few distinct lines (so equal lines repeat and
 * the trimmed ends are ambiguous), blank lines, changes at the very start and end, and texts
 * with and without a last newline.
 */

import { expect, it } from 'vitest';
import { unifiedDiff } from '../../src/diff/unified.js';
import { referenceUnifiedDiff } from './unified-reference.js';

let seed = 11;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
const int = (n: number) => Math.floor(rand() * n);

function randomLines(n: number): string[] {
  const words = ['a', 'b', 'c', '', 'COMMIT', '-A X -j Y', 'a'];
  return Array.from({ length: n }, () => words[int(words.length)]!);
}

function edited(lines: string[]): string[] {
  const out = [...lines];
  for (let k = int(4); k >= 0; k--) {
    const at = rand() < 0.2 ? 0 : rand() < 0.25 ? out.length : int(out.length + 1);
    const what = int(3);
    if (what === 0) out.splice(at, 0, ...randomLines(1 + int(3)));
    else if (what === 1) out.splice(at, 1 + int(3));
    else out.splice(at, 1, ...randomLines(1));
  }
  return out;
}

const text = (lines: string[], newline: boolean) => lines.join('\n') + (newline && lines.length > 0 ? '\n' : '');

it('prints what the diff of the whole texts prints (20,000 random pairs)', () => {
  let differing = 0;
  for (let k = 0; k < 20_000; k++) {
    const a = randomLines(int(40));
    const b = rand() < 0.1 ? randomLines(int(40)) : edited(a);
    const oldText = text(a, rand() < 0.9);
    const newText = text(b, rand() < 0.9);
    const want = referenceUnifiedDiff(oldText, newText, 'old', 'new');
    if (want !== '') differing++;
    expect(unifiedDiff(oldText, newText, 'old', 'new'), JSON.stringify([oldText, newText])).toBe(want);
  }
  expect(differing).toBeGreaterThan(15_000);
});

it('prints the same for long texts with changes far apart (line numbers past the skipped lines)', () => {
  for (let k = 0; k < 50; k++) {
    const a = Array.from({ length: 5_000 }, (_, i) => `-A KUBE-SVC-${i % 97} -j KUBE-SEP-${i}`);
    const b = [...a];
    for (let c = int(3); c >= 0; c--) b.splice(int(b.length), int(3), ...randomLines(int(3)));
    expect(unifiedDiff(text(a, true), text(b, true), 'x', 'y')).toBe(referenceUnifiedDiff(text(a, true), text(b, true), 'x', 'y'));
  }
});

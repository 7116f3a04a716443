/**
 * Edit scripts past EXACT_EDITS (src/diff/anchors.ts): the sequences cut at the elements that
 * occur once in each. Before this, Myers ran to the end there, keeping a row of diagonals per
 * edit: `kpc check` of a 20,000-Service cluster against a 100,000-Service golden was killed
 * for memory. The scripts must still be valid (applying one gives the new sequence), as short
 * as the shortest where every unchanged element is an anchor, and a unified diff made of one
 * must be what GNU patch applies to the old text to give the new.
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { longestIncreasing } from '../../src/diff/anchors.js';
import { EXACT_EDITS, editScript, type Edit } from '../../src/diff/sequence.js';
import { unifiedDiff } from '../../src/diff/unified.js';

let seed = 19;
const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;

function applied(a: readonly string[], b: readonly string[], script: readonly Edit[]): string[] {
  return script.filter((e) => e.op !== 'delete').map((e) => (e.op === 'insert' ? b[e.newIndex]! : a[(e as Extract<Edit, { op: 'keep' }>).oldIndex]!));
}

/** Every old element once, in order, each kept or deleted; every new element once, in order. */
function wellFormed(a: readonly string[], b: readonly string[], script: readonly Edit[]): void {
  const olds = script.flatMap((e) => (e.op === 'insert' ? [] : [e.oldIndex]));
  const news = script.flatMap((e) => (e.op === 'delete' ? [] : [e.newIndex]));
  expect(olds).toEqual(a.map((_, i) => i));
  expect(news).toEqual(b.map((_, j) => j));
}

it('finds a longest strictly increasing subsequence (against the quadratic one, 2,000 random arrays)', () => {
  for (let k = 0; k < 2000; k++) {
    const v = Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 30));
    const best = new Array<number>(v.length).fill(1);
    for (let i = 0; i < v.length; i++) for (let j = 0; j < i; j++) if (v[j]! < v[i]!) best[i] = Math.max(best[i]!, best[j]! + 1);
    const got = longestIncreasing(v);
    expect(got.length).toBe(v.length ? Math.max(...best) : 0);
    for (let i = 1; i < got.length; i++) {
      expect(got[i]!).toBeGreaterThan(got[i - 1]!);
      expect(v[got[i]!]!).toBeGreaterThan(v[got[i - 1]!]!);
    }
  }
});

it('past EXACT_EDITS, keeps every unchanged element when they occur once (as short as the shortest)', () => {
  const a = Array.from({ length: 6000 }, (_, i) => `rule ${i}`);
  let replaced = 0;
  const b = a.map((x, i) => (i % 5 === 2 ? (replaced++, `new rule ${i}`) : x));
  expect(2 * replaced).toBeGreaterThan(EXACT_EDITS);
  const script = editScript(a, b)!;
  wellFormed(a, b, script);
  expect(applied(a, b, script)).toEqual(b);
  expect(script.filter((e) => e.op === 'keep').length).toBe(a.length - replaced);
});

it('past EXACT_EDITS, gives a valid script for sequences of repeated elements and blocks moved', () => {
  for (let k = 0; k < 20; k++) {
    const a = Array.from({ length: 1500 + Math.floor(rand() * 1500) }, () => (rand() < 0.5 ? 'abc'[Math.floor(rand() * 3)]! : `u${Math.floor(rand() * 1e9)}`));
    const cut = Math.floor(rand() * a.length);
    // The tail moved in front, some elements changed, others dropped: far more than EXACT_EDITS apart.
    const b = [...a.slice(cut), ...a.slice(0, cut)].map((x) => (rand() < 0.2 ? `v${Math.floor(rand() * 1e9)}` : x)).filter(() => rand() < 0.9);
    const script = editScript(a, b)!;
    wellFormed(a, b, script);
    expect(applied(a, b, script)).toEqual(b);
  }
});

const dir = mkdtempSync(join(tmpdir(), 'kpc-anchors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** GNU patch applied to `oldText` with `diff`: the text it makes. */
function patched(oldText: string, diff: string): string {
  writeFileSync(join(dir, 'old'), oldText);
  writeFileSync(join(dir, 'diff'), diff);
  execFileSync('patch', ['--quiet', '--force', '-o', join(dir, 'new'), join(dir, 'old'), join(dir, 'diff')], { stdio: ['ignore', 'pipe', 'pipe'] });
  return readFileSync(join(dir, 'new'), 'utf8');
}

it('makes a unified diff GNU patch applies, for texts far more than EXACT_EDITS apart', () => {
  const lines = Array.from({ length: 30_000 }, (_, i) => `-A KUBE-SVC-${i} -m comment --comment "ns/svc-${i}:p" -j KUBE-SEP-${i}`);
  // Scattered changes, a block deleted, a block inserted, repeated lines, no final newline.
  const changed = lines.flatMap((l, i) => (i % 7 === 3 ? [`${l} changed`] : i >= 12_000 && i < 12_500 ? [] : i === 20_000 ? ['COMMIT', 'COMMIT', l] : [l]));
  const oldText = lines.join('\n') + '\n';
  const newText = changed.join('\n');
  const diff = unifiedDiff(oldText, newText, 'a/golden', 'b/kpc');
  expect(diff.startsWith('--- a/golden\n+++ b/kpc\n')).toBe(true);
  expect(patched(oldText, diff)).toBe(newText);
});

it('makes a unified diff GNU patch applies for two unrelated texts of 200,000 lines (bounded memory: no row per edit)', () => {
  const oldText = Array.from({ length: 200_000 }, (_, i) => `old ${i % 1000}\n`).join('');
  const newText = Array.from({ length: 200_000 }, (_, i) => `new ${i}\n`).join('');
  const diff = unifiedDiff(oldText, newText, 'a', 'b');
  expect(patched(oldText, diff)).toBe(newText);
}, 60_000);

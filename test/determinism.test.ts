/**
 * Property: the output depends on the objects, not on how they are laid out. The same
 * objects shuffled, with their keys reordered, split across several files, written as YAML
 * streams, JSON or `kind: List`, must compile to identical bytes.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { caseArgv, loadGoldenCases } from './helpers/fixtures.js';
import { runKpc } from './helpers/run-kpc.js';
// The generator's seeded PRNG (mulberry32), so a failure can be replayed.
import { prng } from '../bench/gen.js';

function shuffle<T>(items: T[], rand: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Reorder the keys of every mapping (array order is meaningful and kept). */
function shuffleKeys(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, rand));
  if (value === null || typeof value !== 'object') return value;
  const entries = shuffle(Object.entries(value as Record<string, unknown>), rand);
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, rand)]));
}

function readObjects(dir: string): unknown[] {
  const out: unknown[] = [];
  for (const f of readdirSync(dir, { recursive: true }) as string[]) {
    if (!/\.(ya?ml|json)$/.test(f)) continue;
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8')) as ReturnType<typeof parseAllDocuments> & unknown[]) {
      const v = doc.toJS();
      if (v === null) continue;
      if (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items)) out.push(...v.items);
      else out.push(v);
    }
  }
  return out;
}

/** Write the objects as 1–4 files in mixed formats. */
function writeScrambled(objects: unknown[], dir: string, rand: () => number): void {
  const shuffled = shuffle(objects, rand).map((o) => shuffleKeys(o, rand));
  const files = 1 + Math.floor(rand() * 4);
  const groups: unknown[][] = Array.from({ length: files }, () => []);
  shuffled.forEach((o) => groups[Math.floor(rand() * files)]!.push(o));
  groups.forEach((group, i) => {
    if (group.length === 0) return;
    const style = Math.floor(rand() * 4);
    if (style === 0) writeFileSync(join(dir, `part${i}.yaml`), group.map((o) => stringify(o)).join('---\n'));
    else if (style === 1) writeFileSync(join(dir, `part${i}.json`), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: group }, null, 2));
    else if (style === 2) writeFileSync(join(dir, `part${i}.yml`), stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: group }));
    else group.forEach((o, k) => writeFileSync(join(dir, `part${i}-${k}.json`), JSON.stringify(o)));
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'kpc-determinism-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cases = loadGoldenCases().filter((c) => c.hasInput && c.exit === 0);

describe('output is independent of object order, key order and file split', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const reference = await runKpc(caseArgv(c));
      expect(reference.code, reference.stderr).toBe(0);
      const objects = readObjects(`${c.dir}/input`);
      for (const seed of [1, 2, 3]) {
        const dir = mkdtempSync(join(tmp, 'case-'));
        writeScrambled(objects, dir, prng(seed * 7919 + c.name.length));
        const run = await runKpc(caseArgv(c, dir));
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout, `seed ${seed}`).toBe(reference.stdout);
      }
    });
  }
});

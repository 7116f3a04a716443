/**
 * The IPVS bundle depends on the objects, not on their layout: every bundle case compiled from
 * its objects reversed and re-split (one JSON List, plus one YAML stream with keys reordered)
 * gives the same files byte for byte. Compiling twice gives the same bytes too.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { loadGoldenCases } from '../helpers/fixtures.js';
import { compileBundleCase } from './helpers/compile-case.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-ipvs-det-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cases = loadGoldenCases(undefined, { bundles: true }).filter((c) => c.expectedFiles !== undefined && c.hasInput);

function objectsOf(dir: string): unknown[] {
  const out: unknown[] = [];
  for (const f of readdirSync(dir).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8')) as unknown as { toJS(): unknown }[]) {
      const v = doc.toJS();
      if (v !== null && typeof v === 'object') out.push(v);
    }
  }
  return out;
}

function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).reverse().map(([k, x]) => [k, reverseKeys(x)]));
}

describe('IPVS bundles do not depend on object order, key order or file split', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const reference = await compileBundleCase(c);
      const again = await compileBundleCase(c);
      expect(again.files).toEqual(reference.files);
      const objects = objectsOf(join(c.dir, 'input')).reverse();
      if (objects.length < 2) return;
      const dir = join(tmp, c.name.replaceAll('/', '_'));
      mkdirSync(dir, { recursive: true });
      const half = Math.ceil(objects.length / 2);
      writeFileSync(join(dir, 'a.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects.slice(0, half) }));
      writeFileSync(join(dir, 'b.yaml'), objects.slice(half).map((o) => stringify(reverseKeys(o))).join('---\n') || '{}\n');
      const scrambled = await compileBundleCase(c, dir);
      expect(scrambled.via).toBe(reference.via);
      expect(scrambled.files).toEqual(reference.files);
    });
  }
});

/**
 * IPVS bundle goldens (fixtures/README.md, "Bundle cases"): every case with an `expected/`
 * directory is compiled (see helpers/compile-case.ts for the paths tried) and each file in
 * `expected/` must equal the bundle's file of that name byte for byte. Files absent from
 * `expected/` are not compared.
 */

import { describe, expect, it } from 'vitest';
import { loadGoldenCases } from '../helpers/fixtures.js';
import { compileBundleCase, type Via } from './helpers/compile-case.js';

const cases = loadGoldenCases(undefined, { bundles: true }).filter((c) => c.expectedFiles !== undefined);
const used = new Map<Via, number>();

describe('IPVS bundle goldens', () => {
  it('finds the bundle cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const run = await compileBundleCase(c);
      used.set(run.via, (used.get(run.via) ?? 0) + 1);
      for (const [name, expected] of Object.entries(c.expectedFiles!)) {
        expect(run.files[name], `${c.name}: ${name} (compiled via ${run.via}; ${run.skipped.join('; ') || 'no path skipped'})`).toBe(expected);
      }
    });
  }

  it('reports which compile path ran', () => {
    console.info(`ipvs goldens: ${[...used].map(([via, n]) => `${n} via ${via}`).join(', ')}`);
  });
});

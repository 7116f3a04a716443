/**
 * Every golden case under fixtures/: kpc's output must equal the reviewed expectation byte
 * for byte (or, for `chain:` cases, that chain's rules), with the expected exit code and
 * the expected lines on stderr.
 */

import { describe, expect, it } from 'vitest';
import { caseArgv, loadGoldenCases } from './helpers/fixtures.js';
import { chainRules, runKpc } from './helpers/run-kpc.js';

const cases = loadGoldenCases();

describe('golden cases', () => {
  it('finds the fixtures', () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const run = await runKpc(caseArgv(c));
      expect.soft(run.code, `exit code; stderr:\n${run.stderr}`).toBe(c.exit);
      if (c.expectedOut !== undefined) {
        if (c.chain) {
          const rules = chainRules(run.stdout, c.chain.table, c.chain.chain);
          expect(rules.join('\n')).toBe(c.expectedOut.trimEnd());
        } else {
          expect(run.stdout).toBe(c.expectedOut);
        }
      }
      if (c.exit !== 0) expect(run.stdout).toBe('');
      let rest = run.stderr;
      for (const line of c.expectedErr ?? []) {
        const at = rest.indexOf(line);
        expect(at, `stderr should contain, in order: ${line}\nstderr was:\n${run.stderr}`).toBeGreaterThanOrEqual(0);
        rest = rest.slice(at + line.length);
      }
    });
  }
});

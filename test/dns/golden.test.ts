/**
 * The `kpc dns` golden cases (fixtures/dns/): the zone text must equal the hand-derived
 * expected.zone byte for byte, on stdout and as `-o DIR` files, with the expected lines on
 * stderr; the expectation itself must be consistent with the case's `absent` names and resolve
 * expectations (so a wrong expected.zone is caught here too, not only by the server test).
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKpc } from '../helpers/run-kpc.js';
import { authoritativeAnswer, caseArgv, expectedZones, loadDnsCases, splitZones } from './helpers.js';

const cases = loadDnsCases();
const tmp = mkdtempSync(join(tmpdir(), 'kpc-dns-golden-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('kpc dns golden cases', () => {
  it('finds the cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(8);
  });

  for (const c of cases) {
    describe(c.name, () => {
      it('stdout is expected.zone; stderr has the expected lines', async () => {
        const run = await runKpc(caseArgv(c));
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toBe(c.expectedZone);
        let rest = run.stderr;
        for (const line of c.expectedErr) {
          const at = rest.indexOf(line);
          expect(at, `stderr should contain, in order: ${line}\nstderr was:\n${run.stderr}`).toBeGreaterThanOrEqual(0);
          rest = rest.slice(at + line.length);
        }
        if (c.expectedErr.length === 0) expect(run.stderr).not.toMatch(/warning:/);
      });

      it('-o DIR writes one file per zone, each the zone of expected.zone', async () => {
        const dir = join(tmp, c.name);
        const run = await runKpc(caseArgv(c, ['-o', dir]));
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toBe('');
        const zones = splitZones(c.expectedZone);
        // Besides the zones, the manifest that marks the directory as kpc's (cli/write/bundle.ts).
        const files = readdirSync(dir).sort();
        const names = zones.map((z) => `${/^; zone (\S+):/.exec(z)![1]}.zone`).sort();
        expect(files).toEqual(['.kpc-bundle', ...names]);
        for (const z of zones) {
          const name = `${/^; zone (\S+):/.exec(z)![1]}.zone`;
          expect(readFileSync(join(dir, name), 'utf8'), name).toBe(z);
        }
      });

      it("the expectation is consistent with the case's absent names", () => {
        const zones = expectedZones(c);
        for (const name of c.absent) {
          const a = authoritativeAnswer(zones, name, 'A');
          expect(a?.rcode, `${name} should not exist in expected.zone`).toBe('NXDOMAIN');
        }
      });
    });
  }
});

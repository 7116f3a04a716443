/**
 * Golden cases of `kpc diff` (human view and `-o json`) and `kpc compile --previous` (the delta):
 * fixtures/diff/<case>/ (format: fixtures/diff/README.md), reviewed by hand.
 *
 * Each case:
 *   - `kpc diff ARGS -f input -R --previous previous.txt`         stdout = expected.txt, exit = `exit`
 *   - the same with `-o json`                                      stdout = expected.json, same exit
 *   - `kpc compile ARGS -f input -R --previous previous.txt`       stdout = expected.delta, exit 0
 *   - on a real kernel (root): previous.txt loaded, expected.delta applied with --noflush; then
 *     every kube-proxy chain equals the new full output's and every other chain (built-in,
 *     foreign, mangle, raw) is exactly as before.
 * A case with `knownBug` runs its diff checks as `it.fails` (kpc prints something else today).
 *
 * Run alone: `npx vitest run test/diff/iptables/diff-golden.test.ts`.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { isKubeProxyChain } from '../../../src/diff/iptables/state.js';
import { loadDiffCases, type DiffCase } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { isCI, labRequirements, withNetns } from '../../netns/lab.js';
import { cleanupTmp, load, rawChains, readStateOf, save } from './harness.js';

const CASES = loadDiffCases();
const family = (c: DiffCase) => (c.args.includes('ipv6') ? 'ipv6' : 'ipv4') as 'ipv4' | 'ipv6';
const kernel = labRequirements({ commands: ['iptables-restore', 'iptables-save', 'ip6tables-restore', 'ip6tables-save', 'nfacct'] });
// As describeLab does: without root or the commands the kernel checks are skipped loudly, and
// under CI=true they fail instead.
if (!kernel.ok && !isCI()) console.warn(`\n*** SKIPPED the kernel checks of fixtures/diff: ${kernel.reasons.join('; ')} ***\n`);

afterAll(() => cleanupTmp());

describe('kpc diff golden cases (fixtures/diff)', () => {
  it('finds the cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(5);
    for (const c of CASES) expect(c.exit, `${c.name}: a golden diff shows a change`).toBe(1);
  });

  for (const c of CASES) {
    const base = ['-f', c.inputDir, '-R', '--previous', c.previousPath];
    const diffIt = c.knownBug ? it.fails : it;
    describe(c.name, () => {
      diffIt(`human view${c.knownBug ? ' (known bug, see diff.yaml)' : ''}`, async () => {
        const r = await runKpc(['diff', ...c.args, ...base]);
        expect(r.stdout).toBe(c.expectedText);
        expect(r.code, r.stderr).toBe(c.exit);
      });

      diffIt(`-o json${c.knownBug ? ' (known bug, see diff.yaml)' : ''}`, async () => {
        const r = await runKpc(['diff', ...c.args, ...base, '-o', 'json']);
        expect(r.stdout).toBe(c.expectedJSON);
        expect(r.code, r.stderr).toBe(c.exit);
      });

      it.runIf(c.expectedDelta !== undefined)('delta (compile --previous)', async () => {
        const r = await runKpc(['compile', ...c.args, ...base]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe(c.expectedDelta);
      });

      it.runIf(c.expectedDelta !== undefined && (kernel.ok || isCI()))('kernel: previous.txt + expected.delta = the new state, other chains untouched', { timeout: 20_000 }, async () => {
        if (!kernel.ok) throw new Error(`CI=true but the netns lab cannot run: ${kernel.reasons.join('; ')}`);
        const { readFileSync } = await import('node:fs');
        const previous = readFileSync(c.previousPath, 'utf8');
        const fam = family(c);
        const full = await runKpc(['compile', ...c.args, '-f', c.inputDir, '-R']);
        expect(full.code, full.stderr).toBe(0);
        const { before, after } = await withNetns('dgold', async (ns) => {
          await load(ns, previous, fam, false, 'previous.txt');
          const before = await save(ns, fam);
          await load(ns, c.expectedDelta!, fam, true, 'expected.delta');
          return { before, after: await save(ns, fam) };
        });
        const F = fam === 'ipv6' ? 'IPv6' : 'IPv4';
        const want = readStateOf(full.stdout, F);
        const got = readStateOf(after, F);
        const was = readStateOf(before, F);
        const problems: string[] = [];
        for (const table of ['filter', 'nat'] as const) {
          const names = new Set([...got.get(table)!.keys(), ...want.get(table)!.keys(), ...was.get(table)!.keys()]);
          for (const name of names) {
            if (!isKubeProxyChain(table, name)) continue;
            const g = got.get(table)!.get(name)?.rules.map((r) => r.key);
            // A kube-proxy chain the new output does not write stays as it was (kube-proxy never
            // deletes its fixed chains); a per-service chain it does not write must be gone.
            const w = want.get(table)!.get(name)?.rules.map((r) => r.key) ?? (/^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(name) ? undefined : was.get(table)!.get(name)?.rules.map((r) => r.key));
            if (JSON.stringify(g) !== JSON.stringify(w)) problems.push(`${table}/${name}: ${JSON.stringify(g)} != ${JSON.stringify(w)}`);
          }
        }
        // Everything that is not kube-proxy's, in every table, exactly as iptables-save printed it before.
        const rawBefore = rawChains(before);
        const rawAfter = rawChains(after);
        for (const [table, chains] of new Map([...rawBefore, ...rawAfter])) {
          for (const name of new Set([...(rawBefore.get(table)?.keys() ?? []), ...(rawAfter.get(table)?.keys() ?? []), ...chains.keys()])) {
            if ((table === 'filter' || table === 'nat') && isKubeProxyChain(table, name)) continue;
            const b = (rawBefore.get(table)?.get(name) ?? []).join('\n');
            const a = (rawAfter.get(table)?.get(name) ?? []).join('\n');
            if (a !== b) problems.push(`${table}/${name} (not kube-proxy's) changed`);
          }
        }
        expect(problems, problems.join('\n')).toEqual([]);
      });
    });
  }
});

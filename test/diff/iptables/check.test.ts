/**
 * `kpc check --golden PATH` (CI drift check): identical → exit 0 and nothing on stdout; drift →
 * exit 1, a unified diff on stdout (checked by applying it with `patch`: the golden patched
 * must become exactly what kpc compiles) and one line on stderr; errors → exit 2.
 *
 * Run alone: `npx vitest run test/diff/iptables/check.test.ts`.
 */

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { hasCommand } from '../../netns/lab.js';
import { cleanupTmp, tmpDir } from './harness.js';

const REPEATED = join(FIXTURES_ROOT, 'kube-proxy/iptables');
const step = (n: string) => join(REPEATED, `TestSyncProxyRulesRepeated-${n}`);
const ARGS = ['--hostname-override', 'test-node', '--node-ip', '192.168.0.2', '--cluster-cidr', '10.0.0.0/8', '--kube-proxy-version', '1.34', '--nfacct', '--no-masquerade-random-fully'];

function check(input: string, golden: string, extra: string[] = []) {
  return runKpc(['check', ...ARGS, ...extra, '-f', input, '-R', '--golden', golden]);
}

async function compile(input: string, extra: string[] = []): Promise<string> {
  const r = await runKpc(['compile', ...ARGS, ...extra, '-f', input, '-R']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

function goldenFile(text: string, name = 'golden.out'): string {
  const path = join(tmpDir('check'), name);
  writeFileSync(path, text);
  return path;
}

/** Applies a unified diff to a copy of `golden` with patch(1); returns the patched text. */
function patched(golden: string, diff: string): string {
  const copy = goldenFile(readFileSync(golden, 'utf8'), 'patched.out');
  const r = spawnSync('patch', ['-s', '-p0', copy], { input: diff, encoding: 'utf8' });
  expect(r.status, `patch failed: ${r.stderr}${r.stdout}`).toBe(0);
  return readFileSync(copy, 'utf8');
}

const hasPatch = hasCommand('patch');

/** The golden cases whose expected.out is a whole `kpc compile` output in iptables mode. */
const WHOLE = loadGoldenCases().filter(
  (c) => c.args[0] === 'compile' && c.exit === 0 && !c.chain && c.expectedOut !== undefined && !c.args.includes('--proxy-mode') && !c.args.includes('-o') && !c.args.includes('--previous') && !(c.hasConfig && /^mode:\s*ipvs/m.test(readFileSync(join(c.dir, 'config.yaml'), 'utf8'))),
);

afterAll(() => cleanupTmp());

describe('kpc check --golden', () => {
  it(`identical: every whole-output golden case (${WHOLE.length}) checks against its own expected.out → exit 0, nothing on stdout`, { timeout: 60_000 }, async () => {
    expect(WHOLE.length).toBeGreaterThan(40);
    const bad: string[] = [];
    for (const c of WHOLE) {
      const argv = caseArgv(c);
      const r = await runKpc(['check', ...argv.slice(1), '--golden', join(c.dir, 'expected.out')]);
      if (r.code !== 0 || r.stdout !== '' || /drift/.test(r.stderr)) bad.push(`${c.name}: exit ${r.code}\n${r.stdout}${r.stderr}`);
    }
    expect(bad, bad.join('\n')).toEqual([]);
  });

  it('drift: a Service deleted since the golden → exit 1, a unified diff that patches the golden into the new output', async () => {
    const golden = join(step('02-add-svc3'), 'expected.out');
    const r = await check(join(step('03-delete-svc2'), 'input'), golden);
    expect(r.code).toBe(1);
    expect(r.stdout.startsWith(`--- ${golden}\n+++ kpc compile\n@@ -`)).toBe(true);
    expect(r.stderr).toContain(`drift: ${golden} differs from what kpc compiles`);
    // Only svc2's lines go; nothing is added.
    const changed = r.stdout.split('\n').slice(2).filter((l) => l.startsWith('-') || l.startsWith('+'));
    expect(changed.length).toBe(7);
    expect(changed.every((l) => l.startsWith('-') && /svc2|UHEGFW77JX3KXTOV|2VJB64SDSIJUP5T6/.test(l))).toBe(true);
    if (hasPatch) expect(patched(golden, r.stdout)).toBe(await compile(join(step('03-delete-svc2'), 'input')));
  });

  it.runIf(hasPatch)('drift with scattered changes (lines edited, removed and inserted; four hunks): the diff still patches exactly', async () => {
    const input = join(step('07-add-svc3-endpoint'), 'input');
    const out = await compile(input);
    const lines = out.split('\n');
    expect(lines.length).toBeGreaterThan(45);
    // Far enough apart (more than 2 × 3 context lines) to make separate hunks.
    const edited = lines
      .flatMap((l, k) => (k === 2 || k === 40 ? [`${l} # edited`] : k === 14 ? [] : k === 27 ? [l, '# an extra line'] : [l]))
      .join('\n');
    const golden = goldenFile(edited);
    const r = await check(input, golden);
    expect(r.code).toBe(1);
    expect((r.stdout.match(/^@@ /gm) ?? []).length).toBe(4);
    expect(patched(golden, r.stdout)).toBe(out);
  });

  it('--standalone: compares the standalone form', async () => {
    const input = join(step('05-add-svc4-endpoints'), 'input');
    const standalone = goldenFile(await compile(input, ['--standalone']));
    expect((await check(input, standalone, ['--standalone'])).code).toBe(0);
    const plain = join(step('05-add-svc4-endpoints'), 'expected.out');
    const r = await check(input, plain, ['--standalone']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\+-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES$/m);
  });

  it('an empty golden → exit 1, every line added', async () => {
    const input = join(step('01-initial'), 'input');
    const golden = goldenFile('');
    const r = await check(input, golden);
    expect(r.code).toBe(1);
    const out = await compile(input);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length).toBe(out.split('\n').length - 1);
    if (hasPatch) expect(patched(golden, r.stdout)).toBe(out);
  });

  it('a golden with CRLF line ends → exit 1 and a non-empty diff', async () => {
    const input = join(step('01-initial'), 'input');
    const golden = goldenFile((await compile(input)).replace(/\n/g, '\r\n'));
    const r = await check(input, golden);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toBe('');
  });

  // BUG (reported to the lead): a golden that lacks only its final newline (an editor or
  // `printf %s "$(cat …)"` drops it) → exit 1 "drift", but stdout is EMPTY: unified.ts splits
  // both texts into the same lines. diff -u prints "\ No newline at end of file". Remove
  // `.fails` once fixed.
  it('a golden without its final newline → exit 1 with a diff that says "\\ No newline at end of file"', async () => {
    const input = join(step('02-add-svc3'), 'input');
    const golden = goldenFile((await compile(input)).replace(/\n$/, ''));
    const r = await check(input, golden);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\\ No newline at end of file/);
    if (hasPatch) expect(patched(golden, r.stdout)).toBe(await compile(input));
  });

  it('errors: a missing golden file → exit 2, a message, nothing on stdout', async () => {
    const r = await check(join(step('01-initial'), 'input'), '/nonexistent/kpc/golden.out');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: --golden: the path "/nonexistent/kpc/golden.out" does not exist');
  });

  it('--golden - (standard input): the same answers as from a file', async () => {
    const golden = readFileSync(join(step('02-add-svc3'), 'expected.out'), 'utf8');
    const same = await runKpc(['check', ...ARGS, '-f', join(step('02-add-svc3'), 'input'), '-R', '--golden', '-'], golden);
    expect([same.code, same.stdout]).toEqual([0, '']);
    const drifted = await runKpc(['check', ...ARGS, '-f', join(step('03-delete-svc2'), 'input'), '-R', '--golden', '-'], golden);
    const fromFile = await check(join(step('03-delete-svc2'), 'input'), join(step('02-add-svc3'), 'expected.out'));
    expect(drifted.code).toBe(1);
    expect(drifted.stdout.split('\n').slice(2)).toEqual(fromFile.stdout.split('\n').slice(2));
  });

  it('errors: no --golden → exit 2', async () => {
    const r = await runKpc(['check', ...ARGS, '-f', join(step('01-initial'), 'input'), '-R']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });
});

/**
 * Every -o write path (paths.ts) and stdout under the file system's own failures: ENOSPC (a
 * small tmpfs, space and inodes cut at random points of the write), EFBIG (RLIMIT_FSIZE at
 * random sizes), EROFS (the tmpfs remounted read-only) and a missing parent directory.
 *
 * After each run: exit 0 and the target is the complete new output, or exit 2 with one line
 * `error: cannot write …: CODE (…); … was left as it was` and the target is the complete old
 * output; no temporary entry is left; nothing around the target changed (harness.ts
 * plantSentinels).
 */

import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  closeFd,
  contentOf,
  describeContent,
  describeFaults,
  kpc,
  leftovers,
  oneLineError,
  openForStdout,
  plantSentinels,
  prlimitFsize,
  printFigures,
  random,
  record,
  sameContent,
  sizesOf,
  surroundings,
  sweepStaleMounts,
  usedBytes,
  usedInodes,
  Workdir,
  type Content,
  type Outcome,
} from './harness.js';
import { prepareInputs, type Inputs, type WritePath } from './paths.js';
import { existsSync, readFileSync } from 'node:fs';

const BIG = 64 * 1024 * 1024;
const PAGE = 4096;

describeFaults('-o and stdout under ENOSPC, EFBIG, EROFS and a missing parent', () => {
  let work: Workdir;
  let inputs: Inputs;
  const rand = random();

  beforeAll(async () => {
    sweepStaleMounts();
    work = new Workdir('faults');
    inputs = await prepareInputs(work, 100);
  }, 120_000);
  afterAll(() => {
    work?.cleanup();
    printFigures('write-faults figures:');
  });

  /** A tmpfs holding the sentinels and the old output of `path` at `mnt/out`. */
  async function seeded(path: WritePath): Promise<{ mnt: string; target: string; old: Content; fresh: Content; around: Record<string, string> }> {
    const mnt = work.tmpfs('enospc', BIG);
    plantSentinels(mnt, 'out');
    const target = join(mnt, 'out');
    await writeOld(path, target);
    return { mnt, target, old: await inputs.reference(path, inputs.old), fresh: await inputs.reference(path, inputs.new), around: surroundings(mnt, 'out') };
  }

  async function writeOld(path: WritePath, target: string): Promise<void> {
    const r = await kpc([...path.args(inputs.old), '-o', target]);
    expect(r.code, r.stderr).toBe(0);
  }

  /** The contract after one run that may have failed with `code`. */
  function check(what: string, r: Outcome, target: string, mnt: string, old: Content, fresh: Content, around: Record<string, string>, code: RegExp): 'new' | 'old' {
    const now = contentOf(target);
    expect(leftovers(mnt, 'out'), `${what}: temporary entries left`).toEqual([]);
    expect(surroundings(mnt, 'out'), `${what}: something beside the target changed`).toEqual(around);
    if (r.code === 0) {
      expect(sameContent(now, fresh), `${what}: exit 0 but the target is ${describeContent(now)}`).toBe(true);
      return 'new';
    }
    expect(r.code, `${what}: ${r.stderr}`).toBe(2);
    const line = oneLineError(r.stderr);
    expect(line, `${what}: not one error line: ${r.stderr}`).toBeDefined();
    expect(line).toMatch(code);
    expect(line).toMatch(/was left as it was$/);
    expect(sameContent(now, old), `${what}: exit 2 but the target is ${describeContent(now)}, not the old output`).toBe(true);
    return 'old';
  }

  for (const pathName of ['iptables file', 'ipvs bundle', 'iptables delta', 'ipvs delta']) {
    it(`${pathName}: ENOSPC with the space cut at 8 random points, and the inodes at each create`, { timeout: 120_000 }, async () => {
      const path = inputs.paths.find((p) => p.name === pathName)!;
      const { mnt, target, old, fresh, around } = await seeded(path);
      const outcomes = { new: 0, old: 0 };
      // Space: the new output needs `need` bytes more than is used now; allow a random part.
      const need = newSize(fresh);
      for (let i = 0; i < 8; i++) {
        const base = usedBytes(mnt);
        const allow = Math.floor((rand() * need) / PAGE) * PAGE;
        work.resize(mnt, base + allow);
        const r = await kpc([...path.args(inputs.new), '-o', target]);
        work.resize(mnt, BIG);
        const got = check(`space +${allow}`, r, target, mnt, old, fresh, around, /ENOSPC/);
        outcomes[got]++;
        if (got === 'new') await writeOld(path, target);
      }
      // Inodes: a file write creates 1, a bundle 8 (directory, 5 files, manifest, link).
      const creates = path.kind === 'file' ? 1 : 8;
      for (let k = 0; k <= creates; k++) {
        work.resize(mnt, BIG, usedInodes(mnt) + k);
        const r = await kpc([...path.args(inputs.new), '-o', target]);
        work.resize(mnt, BIG, 1000);
        const got = check(`inodes +${k}`, r, target, mnt, old, fresh, around, /ENOSPC/);
        outcomes[got]++;
        if (k < creates) expect(got, `only ${k} of ${creates} inodes`).toBe('old');
        if (got === 'new') await writeOld(path, target);
      }
      expect(outcomes.old).toBeGreaterThan(creates - 1);
      record(`${pathName}: ENOSPC ${8 + creates + 1} runs: ${outcomes.old} failed cleanly (old kept), ${outcomes.new} fitted (new written)`);
    });

    it(`${pathName}: EFBIG at 6 random file size limits`, { timeout: 60_000 }, async () => {
      const path = inputs.paths.find((p) => p.name === pathName)!;
      const { mnt, target, old, fresh, around } = await seeded(path);
      const largest = largestFile(fresh);
      let failed = 0;
      for (let i = 0; i < 6; i++) {
        const limit = i === 0 ? 0 : Math.floor(rand() * largest);
        const r = await kpc([...path.args(inputs.new), '-o', target], { wrap: prlimitFsize(limit) });
        expect(r.signal, 'killed by SIGXFSZ: Node must ignore it').toBeNull();
        expect(check(`fsize ${limit}`, r, target, mnt, old, fresh, around, /EFBIG/)).toBe('old');
        failed++;
      }
      record(`${pathName}: EFBIG 6 runs (limits below the largest file, ${largest} bytes): ${failed} failed cleanly`);
    });

    it(`${pathName}: EROFS, and a missing parent directory`, { timeout: 60_000 }, async () => {
      const path = inputs.paths.find((p) => p.name === pathName)!;
      const { mnt, target, old, fresh, around } = await seeded(path);
      work.readOnly(mnt, true);
      const r = await kpc([...path.args(inputs.new), '-o', target]);
      work.readOnly(mnt, false);
      expect(check('read-only', r, target, mnt, old, fresh, around, /EROFS/)).toBe('old');
      const missing = join(mnt, 'no-such-dir', 'out');
      const m = await kpc([...path.args(inputs.new), '-o', missing]);
      expect(m.code).toBe(2);
      expect(oneLineError(m.stderr)).toMatch(/cannot write .*no-such-dir\/out: ENOENT/);
      expect(existsSync(join(mnt, 'no-such-dir'))).toBe(false);
      expect(surroundings(mnt, 'out')).toEqual(around);
    });
  }

  const STDOUT_CASES: { name: string; args: (i: Inputs) => string[] }[] = [
    { name: 'iptables', args: (i) => i.paths[0]!.args(i.new) },
    { name: 'ipvs (inline apply.sh)', args: (i) => i.paths[1]!.args(i.new) },
    { name: 'iptables delta', args: (i) => i.paths[2]!.args(i.new) },
    { name: 'ipvs delta (inline apply.sh)', args: (i) => i.paths[3]!.args(i.new) },
  ];

  for (const c of STDOUT_CASES) {
    it(`stdout, ${c.name}: /dev/full, a full file system and a file size limit are one-line errors, exit 2`, { timeout: 60_000 }, async () => {
      const args = c.args(inputs);
      const whole = await kpc(args);
      expect(whole.code, whole.stderr).toBe(0);
      expect(whole.stdout.length).toBeGreaterThan(8192);

      const fullFd = openForStdout('/dev/full');
      const full = await kpc(args, { stdoutFd: fullFd });
      closeFd(fullFd);
      expect(full.code, full.stderr).toBe(2);
      expect(oneLineError(full.stderr)).toMatch(/^error: cannot write stdout: ENOSPC \(no space left on the device\); what was written to stdout is incomplete$/);

      const mnt = work.tmpfs('stdout', BIG);
      const file = join(mnt, 'stdout.txt');
      work.resize(mnt, usedBytes(mnt) + Math.floor((whole.stdout.length / 2) / PAGE) * PAGE);
      const fd = openForStdout(file);
      const small = await kpc(args, { stdoutFd: fd });
      closeFd(fd);
      expect(small.code, small.stderr).toBe(2);
      expect(oneLineError(small.stderr)).toMatch(/cannot write stdout: ENOSPC .*incomplete$/);
      const written = readFileSync(file);
      expect(written.length).toBeLessThan(whole.stdout.length);
      expect(whole.stdout.subarray(0, written.length).equals(written), 'what was written is a prefix of the output').toBe(true);
      work.resize(mnt, BIG);

      const limit = Math.floor(whole.stdout.length / 3);
      const fd2 = openForStdout(join(mnt, 'limited.txt'));
      const efbig = await kpc(args, { stdoutFd: fd2, wrap: prlimitFsize(limit) });
      closeFd(fd2);
      expect(efbig.signal).toBeNull();
      expect(efbig.code, efbig.stderr).toBe(2);
      expect(oneLineError(efbig.stderr)).toMatch(/cannot write stdout: EFBIG .*incomplete$/);
      expect(readFileSync(join(mnt, 'limited.txt')).length).toBe(limit);
      work.unmount(mnt);
    });
  }
});

/** Bytes (in whole pages) the new output takes on a tmpfs, with a page for a directory. */
function newSize(c: Content): number {
  return sizesOf(c).reduce((sum, n) => sum + Math.ceil(n / PAGE) * PAGE, PAGE);
}

function largestFile(c: Content): number {
  return Math.max(...sizesOf(c));
}

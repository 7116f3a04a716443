/**
 * Faults between and at the renames, made real by the kernel through strace's syscall fault
 * injection (`-e inject=rename:error=EIO:when=N`, `...:signal=KILL`): kpc's own rename(2),
 * symlink(2), mkdir(2), fsync(2), unlink(2) and rmdir(2) fail, or kpc is killed as it makes
 * the call (the call is not made). kpc has no hook for this: the same binary, the same code.
 *
 *   -o FILE         the one rename (the commit), the fsync before it
 *   -o DIR          the commit rename of the link over DIR, the symlink, the mkdir, every fsync,
 *                   the removal of the previous directory after the commit
 *   migration       DIR a real directory (an older kpc's bundle, or empty): the rename aside,
 *                   the rename of the link to DIR, the rename back; a kill between the two
 *                   renames, and what an older kpc left when killed between its own two renames
 *
 * After each: the target is the old or the new complete output (or, only in the migration's
 * window, missing with the old directory at `.DIR.PID.HEX.old`, which the next write puts back:
 * shown by a next write that itself fails at its commit and leaves exactly the old directory).
 */

import { cpSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  contentOf,
  describeContent,
  describeFaults,
  kpc,
  kpcEntries,
  leftovers,
  oneLineError,
  plantSentinels,
  printFigures,
  record,
  sameContent,
  straceInject,
  surroundings,
  sweepStaleMounts,
  tree,
  Workdir,
  type Content,
  type Outcome,
} from './harness.js';
import { prepareInputs, type Inputs, type WritePath } from './paths.js';

describeFaults('faults at and between the renames (strace syscall injection)', () => {
  let work: Workdir;
  let inputs: Inputs;
  let fileP: WritePath;
  let dirP: WritePath;
  let deltaP: WritePath;

  beforeAll(async () => {
    sweepStaleMounts();
    work = new Workdir('renames');
    inputs = await prepareInputs(work, 60);
    fileP = inputs.paths.find((p) => p.name === 'iptables file')!;
    dirP = inputs.paths.find((p) => p.name === 'ipvs bundle')!;
    deltaP = inputs.paths.find((p) => p.name === 'ipvs delta')!;
  }, 120_000);
  afterAll(() => {
    work?.cleanup();
    printFigures('renames figures:');
  });

  interface Place {
    dir: string;
    target: string;
    around: Record<string, string>;
  }

  async function place(path: WritePath): Promise<Place> {
    const dir = work.dir('renames');
    plantSentinels(dir, 'out');
    const target = join(dir, 'out');
    const r = await kpc([...path.args(inputs.old), '-o', target]);
    expect(r.code, r.stderr).toBe(0);
    return { dir, target, around: surroundings(dir, 'out') };
  }

  function expectState(p: Place, want: Content, what: string): void {
    const now = contentOf(p.target);
    expect(sameContent(now, want), `${what}: the target is ${describeContent(now)}, expected ${describeContent(want)}`).toBe(true);
    expect(surroundings(p.dir, 'out'), `${what}: something beside the target changed`).toEqual(p.around);
  }

  function expectFailed(r: Outcome, code: RegExp, what: string): void {
    expect(r.code, `${what}: ${r.stderr}`).toBe(2);
    expect(oneLineError(r.stderr), what).toMatch(code);
  }

  function expectKilled(r: Outcome): void {
    expect(r.code === 137 || r.signal === 'SIGKILL', `exit ${r.code} ${r.signal}`).toBe(true);
  }

  let injected = 0;
  async function faulted(path: WritePath, p: Place, input: string, ...rules: string[]): Promise<Outcome> {
    injected++;
    return kpc([...path.args(input), '-o', p.target], { wrap: straceInject(...rules) });
  }

  async function clean(path: WritePath, p: Place, input: string): Promise<void> {
    const r = await kpc([...path.args(input), '-o', p.target]);
    expect(r.code, r.stderr).toBe(0);
    expect(leftovers(p.dir, 'out'), 'the next write sweeps every leftover').toEqual([]);
  }

  it('-o FILE: the commit rename fails, or kpc is killed at it; the fsync before it fails', { timeout: 120_000 }, async () => {
    for (const path of [fileP, inputs.paths.find((x) => x.name === 'iptables delta')!]) {
      const p = await place(path);
      const old = await inputs.reference(path, inputs.old);
      const fresh = await inputs.reference(path, inputs.new);
      let r = await faulted(path, p, inputs.new, 'rename:error=EIO:when=1');
      expectFailed(r, /EIO .*was left as it was$/, 'rename EIO');
      expectState(p, old, 'rename EIO');
      expect(leftovers(p.dir, 'out')).toEqual([]);

      r = await faulted(path, p, inputs.new, 'fsync:error=EIO:when=1');
      expectFailed(r, /EIO/, 'fsync EIO');
      expectState(p, old, 'fsync EIO');
      expect(leftovers(p.dir, 'out')).toEqual([]);

      r = await faulted(path, p, inputs.new, 'rename:error=EIO:signal=KILL:when=1');
      expectKilled(r);
      expectState(p, old, 'killed at the rename');
      expect(leftovers(p.dir, 'out')).toHaveLength(1); // its .tmp, swept next:
      await clean(path, p, inputs.new);
      expectState(p, fresh, 'after the next write');
    }
  });

  it('-o DIR: every step before the commit fails, and the old bundle stays whole', { timeout: 120_000 }, async () => {
    for (const path of [dirP, deltaP]) {
      const p = await place(path);
      const old = await inputs.reference(path, inputs.old);
      const fresh = await inputs.reference(path, inputs.new);
      const steps = ['rename:error=EIO:when=1', 'symlink:error=ENOSPC:when=1', 'mkdir:error=EACCES:when=1'];
      for (let k = 1; k <= 7; k++) steps.push(`fsync:error=EIO:when=${k}`); // 5 files, manifest, directory
      for (const step of steps) {
        const r = await faulted(path, p, inputs.new, step);
        expectFailed(r, /(EIO|ENOSPC|EACCES) .*was left as it was$/, step);
        expectState(p, old, step);
        expect(leftovers(p.dir, 'out'), step).toEqual([]);
      }
      // The 8th fsync is the parent directory's, after the commit: the bundle is in place.
      const late = await faulted(path, p, inputs.new, 'fsync:error=EIO:when=8');
      expect(late.code, late.stderr).toBe(0);
      expectState(p, fresh, 'fsync 8');
      await clean(path, p, inputs.old);
      record(`${path.name}: ${steps.length} failing steps before the commit: each exit 2, old bundle whole, nothing left; the fsync after it: exit 0`);
    }
  });

  it('-o DIR: killed at the commit, or while the previous directory is removed', { timeout: 120_000 }, async () => {
    const p = await place(dirP);
    const old = await inputs.reference(dirP, inputs.old);
    const fresh = await inputs.reference(dirP, inputs.new);
    let r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:signal=KILL:when=1');
    expectKilled(r);
    expectState(p, old, 'killed at the commit');
    expect(leftovers(p.dir, 'out').sort()).toEqual(expect.arrayContaining([expect.stringMatching(/\.d$/), expect.stringMatching(/\.lnk$/)]));
    await clean(dirP, p, inputs.old);
    expectState(p, old, 'swept');

    // After the commit: the previous directory's files are removed one by one.
    for (const rule of ['unlink:error=EIO:when=1', 'rmdir:error=EIO:when=1']) {
      r = await faulted(dirP, p, inputs.new, rule);
      expect(r.code, `${rule}: ${r.stderr}`).toBe(0);
      expectState(p, fresh, rule);
      expect(leftovers(p.dir, 'out'), `${rule}: the previous directory stays`).toHaveLength(1);
      await clean(dirP, p, inputs.old);
    }
    for (const k of [1, 3, 6]) {
      r = await faulted(dirP, p, inputs.new, `unlink:error=EIO:signal=KILL:when=${k}`);
      expectKilled(r);
      expectState(p, fresh, `killed at unlink ${k}`);
      await clean(dirP, p, inputs.old);
    }
  });

  /** A real directory holding an older kpc's bundle: the five files, no manifest. */
  async function legacy(): Promise<{ p: Place; old: Content }> {
    const dir = work.dir('legacy');
    plantSentinels(dir, 'out');
    const made = join(work.dir('legacy-src'), 'b');
    const r = await kpc([...dirP.args(inputs.old), '-o', made]);
    expect(r.code, r.stderr).toBe(0);
    const target = join(dir, 'out');
    mkdirSync(target);
    for (const name of readdirSync(made)) if (name !== '.kpc-bundle') cpSync(join(made, name), join(target, name), { preserveTimestamps: true });
    expect(lstatSync(target).isDirectory()).toBe(true);
    return { p: { dir, target, around: surroundings(dir, 'out') }, old: contentOf(target) };
  }

  function expectRealDir(p: Place, old: Content, what: string): void {
    expect(lstatSync(p.target).isDirectory(), `${what}: still the real directory`).toBe(true);
    expectState(p, old, what);
  }

  it('migration of a real directory: each rename fails, and kpc is killed between them', { timeout: 120_000 }, async () => {
    const fresh = await inputs.reference(dirP, inputs.new);
    {
      const { p, old } = await legacy();
      let r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:when=1'); // the rename aside
      expectFailed(r, /EIO .*was left as it was$/, 'aside');
      expectRealDir(p, old, 'aside fails');
      expect(leftovers(p.dir, 'out')).toEqual([]);

      r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:when=2'); // the link to DIR; put back
      expectFailed(r, /EIO .*was left as it was$/, 'flip');
      expectRealDir(p, old, 'flip fails');
      expect(leftovers(p.dir, 'out')).toEqual([]);

      // The link's rename and the rename back both fail: DIR is missing, the old is aside.
      r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:when=2+');
      expectFailed(r, /EIO .* is missing: the previous one is at .*\.out\.\d+\.[0-9a-f]{8}\.old, and the next kpc write to .* puts it back$/, 'flip and back');
      expect(contentOf(p.target).kind).toBe('missing');
      const aside = kpcEntries(p.dir, 'out');
      expect(aside).toHaveLength(1);
      expect(sameContent(contentOf(join(p.dir, aside[0]!)), old)).toBe(true);
      // The next write puts it back first (rename 1), then fails at its own commit (rename 3):
      r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:when=3');
      expectFailed(r, /EIO .*was left as it was$/, 'next write');
      expectRealDir(p, old, 'restored by the next write');
      expect(leftovers(p.dir, 'out')).toEqual([]);
      await clean(dirP, p, inputs.new);
      expectState(p, fresh, 'migrated');
      expect(lstatSync(p.target).isSymbolicLink()).toBe(true);
    }
    for (const kind of ['older kpc bundle', 'empty directory']) {
      const { p, old } = kind === 'empty directory' ? await emptyDir() : await legacy();
      const r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:signal=KILL:when=2'); // between the renames
      expectKilled(r);
      expect(contentOf(p.target).kind, 'killed between the renames: DIR is missing').toBe('missing');
      const next = await faulted(dirP, p, inputs.new, 'rename:error=EIO:when=3');
      expectFailed(next, /EIO/, 'next write');
      expectRealDir(p, old, `${kind}: restored by the next write`);
      await clean(dirP, p, inputs.new);
      expectState(p, fresh, 'migrated');
    }
    record('migration: the rename aside fails, the rename to DIR fails (put back), both fail (DIR missing, restored by the next write), killed between them (restored by the next write): old directory whole each time');
  });

  async function emptyDir(): Promise<{ p: Place; old: Content }> {
    const dir = work.dir('empty');
    plantSentinels(dir, 'out');
    mkdirSync(join(dir, 'out'));
    return { p: { dir, target: join(dir, 'out'), around: surroundings(dir, 'out') }, old: contentOf(join(dir, 'out')) };
  }

  it('what an older kpc left when killed between its two renames is put back', { timeout: 60_000 }, async () => {
    const { p, old } = await legacy();
    // The older kpc renamed DIR to .DIR.PID.HEX.old, then died before renaming its new one in.
    const gone = spawnSync('true').pid!;
    const aside = join(p.dir, `.out.${gone}.0badc0de.old`);
    renameSync(p.target, aside);
    mkdirSync(join(p.dir, `.out.${gone}.0badc0de.tmp`));
    cpSync(join(aside, 'apply.sh'), join(p.dir, `.out.${gone}.0badc0de.tmp`, 'apply.sh'));
    const r = await faulted(dirP, p, inputs.new, 'rename:error=EIO:when=3');
    expectFailed(r, /EIO/, 'next write');
    expectRealDir(p, old, 'restored');
    expect(leftovers(p.dir, 'out'), 'the older kpc\'s unfinished directory is swept').toEqual([]);
    rmSync(p.target, { recursive: true });
    expect(tree(p.dir)).toEqual(p.around);
    record(`strace injections: ${injected} faulted runs`);
  });
});

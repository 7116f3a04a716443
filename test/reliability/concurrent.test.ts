/**
 * Two kpc processes writing the same -o at once, started together (a random 0-3 ms apart):
 *
 *   ipvs bundle   100 pairs over a kpc bundle, 10 over an older kpc's real directory (both
 *                 migrate it at once), 10 over nothing
 *   ipvs delta    10 pairs
 *   iptables file 20 pairs
 *
 * How often the two writes really overlapped (the second made its first temporary entry before
 * the first renamed its link or file into place; seen with inotify) is counted and reported.
 *
 * Both must exit 0 with no error; the target is then exactly one of the two outputs (bytes
 * compared); a loser's directory may be left when it exits just as the winner sweeps (bundle.ts),
 * never more than one, and the next write removes it.
 */

import { cpSync, mkdirSync, readdirSync, rmSync, watch } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cluster, contentOf, describeContent, describeFaults, kpc, leftovers, plantSentinels, printFigures, random, record, sameContent, surroundings, sweepStaleMounts, Workdir, type Content } from './harness.js';
import { prepareInputs, type Inputs, type WritePath } from './paths.js';

describeFaults('concurrent writers to one -o', () => {
  let work: Workdir;
  let inputs: Inputs;
  let a: string;
  let b: string;
  const rand = random(31);

  beforeAll(async () => {
    sweepStaleMounts();
    work = new Workdir('concurrent');
    inputs = await prepareInputs(work, 20);
    const d = work.dir('pair-inputs');
    a = cluster(d, 20, 5);
    b = cluster(d, 20, 6);
  }, 120_000);
  afterAll(() => {
    work?.cleanup();
    printFigures('concurrent figures:');
  });

  async function pairs(path: WritePath, n: number, start: 'previous' | 'older kpc directory' | 'nothing'): Promise<void> {
    const dir = work.dir('pairs');
    plantSentinels(dir, 'out');
    const target = join(dir, 'out');
    const around = surroundings(dir, 'out');
    const outA = await inputs.reference(path, a);
    const outB = await inputs.reference(path, b);
    const legacySource = join(work.dir('legacy-src'), 'b');
    if (start === 'older kpc directory') expect((await kpc([...path.args(inputs.old), '-o', legacySource])).code).toBe(0);
    const won = { a: 0, b: 0 };
    let lingering = 0;
    let overlapped = 0;
    for (let i = 0; i < n; i++) {
      if (start === 'previous' && i === 0) expect((await kpc([...path.args(inputs.old), '-o', target])).code).toBe(0);
      if (start === 'older kpc directory') {
        rmSync(target, { recursive: true, force: true });
        mkdirSync(target);
        for (const f of readdirSync(legacySource)) if (f !== '.kpc-bundle') cpSync(join(legacySource, f), join(target, f));
      }
      if (start === 'nothing') rmSync(target, { recursive: true, force: true });
      const gap = rand() * 3;
      const first = rand() < 0.5 ? 'a' : 'b';
      const seen = watchWriters(dir);
      const [ra, rb] = await Promise.all([
        delayed(first === 'a' ? 0 : gap, () => kpc([...path.args(a), '-o', target])),
        delayed(first === 'b' ? 0 : gap, () => kpc([...path.args(b), '-o', target])),
      ]);
      seen.close();
      if (seen.overlapped(ra.pid, rb.pid)) overlapped++;
      for (const r of [ra, rb]) {
        expect(r.code, `pair ${i}: ${r.stderr}`).toBe(0);
        expect(r.stderr, `pair ${i}`).not.toMatch(/error/);
      }
      const now: Content = contentOf(target);
      const isA = sameContent(now, outA);
      expect(isA || sameContent(now, outB), `pair ${i}: the target is ${describeContent(now)}`).toBe(true);
      won[isA ? 'a' : 'b']++;
      const left = leftovers(dir, 'out');
      expect(left.length, `pair ${i}: ${left.join(', ')}`).toBeLessThanOrEqual(1);
      lingering += left.length;
      expect(surroundings(dir, 'out'), `pair ${i}`).toEqual(around);
    }
    const last = await kpc([...path.args(inputs.old), '-o', target]);
    expect(last.code, last.stderr).toBe(0);
    expect(leftovers(dir, 'out')).toEqual([]);
    record(`${path.name}, ${n} pairs over ${start}: all 2×${n} exit 0; the writes overlapped in ${overlapped}; A won ${won.a}, B won ${won.b}; a loser's directory lingered after ${lingering} pairs (swept by the next write)`);
  }

  /** When each writer pid made its first temporary entry and renamed its link/file away (inotify). */
  function watchWriters(dir: string): { close(): void; overlapped(p: number, q: number): boolean } {
    const first = new Map<number, number>();
    const commit = new Map<number, number>();
    const w = watch(dir, (_e, name) => {
      const m = typeof name === 'string' ? /^\.out\.(\d+)\.[0-9a-f]{8}\.(d|lnk|tmp)$/.exec(name) : null;
      if (!m) return;
      const pid = Number(m[1]);
      const t = performance.now();
      if (!first.has(pid)) first.set(pid, t);
      if (m[2] !== 'd') commit.set(pid, t); // its creation, then its rename away: the last event
    });
    return {
      close: () => w.close(),
      overlapped(p, q) {
        const [fp, fq, cp, cq] = [first.get(p), first.get(q), commit.get(p), commit.get(q)];
        if (fp === undefined || fq === undefined || cp === undefined || cq === undefined) return false;
        return fp < fq ? fq < cp : fp < cq;
      },
    };
  }

  function delayed<T>(ms: number, fn: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => setTimeout(() => fn().then(resolve, reject), ms));
  }

  it('ipvs bundle: 100 pairs over a kpc bundle', { timeout: 300_000 }, async () => {
    await pairs(inputs.paths.find((p) => p.name === 'ipvs bundle')!, 100, 'previous');
  });

  it('ipvs bundle: 10 pairs migrating an older kpc\'s directory, 10 pairs over nothing', { timeout: 200_000 }, async () => {
    const path = inputs.paths.find((p) => p.name === 'ipvs bundle')!;
    await pairs(path, 10, 'older kpc directory');
    await pairs(path, 10, 'nothing');
  });

  it('ipvs delta: 10 pairs; iptables file: 20 pairs', { timeout: 200_000 }, async () => {
    await pairs(inputs.paths.find((p) => p.name === 'ipvs delta')!, 10, 'previous');
    await pairs(inputs.paths.find((p) => p.name === 'iptables file')!, 20, 'previous');
  });
});

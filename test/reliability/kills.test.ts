/**
 * Signals at random points of every -o write path: ≥ 20 SIGKILL and ≥ 20 SIGTERM each, half at
 * a random time of the whole run, half a random delay after the run's first temporary entry
 * appears (inotify), so that they land while the output is being written. Then SIGINT and
 * SIGHUP.
 *
 * Each run writes the other of two large outputs (A and B) over the one the target holds.
 * After every run the target is exactly A or exactly B (bytes compared), nothing beside it
 * changed, and:
 *   SIGTERM/INT/HUP  no temporary entry is left; kpc died of the signal (a write under way
 *                    completes or rolls back first, signals.ts) or finished with exit 0
 *   SIGKILL          leftovers are allowed; the next run that reaches its write removes them
 *                    (after every exit 0, none of any earlier run is left)
 */

import { readlinkSync, watch } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  cluster,
  contentOf,
  describeContent,
  describeFaults,
  kpc,
  kpcEntries,
  leftovers,
  plantSentinels,
  printFigures,
  random,
  record,
  sameContent,
  surroundings,
  sweepStaleMounts,
  Workdir,
  type Content,
  type Outcome,
} from './harness.js';
import { prepareInputs, type Inputs, type WritePath } from './paths.js';

const SERVICES = 300;
const KILLS = 20;

describeFaults('signals at random points of every -o write', () => {
  vi.setConfig({ maxConcurrency: 2 });
  let work: Workdir;
  let inputs: Inputs;
  let other: string;

  beforeAll(async () => {
    sweepStaleMounts();
    work = new Workdir('kills');
    inputs = await prepareInputs(work, SERVICES);
    other = cluster(work.dir('inputs-b'), SERVICES, 9);
  }, 180_000);
  afterAll(() => {
    work?.cleanup();
    printFigures('kills figures:');
  });

  interface Lane {
    path: WritePath;
    dir: string;
    target: string;
    a: Content;
    b: Content;
    around: Record<string, string>;
    /** A clean run's time, and the time from its first temporary entry to its exit (ms). */
    runMs: number;
    writeMs: number;
    rand: () => number;
  }

  async function lane(path: WritePath, seed: number): Promise<Lane> {
    const dir = work.tmpfs(path.name.replace(' ', '-'), 512 * 1024 * 1024, 10_000);
    plantSentinels(dir, 'out');
    const target = join(dir, 'out');
    const a = await inputs.reference(path, inputs.new);
    const b = await inputs.reference(path, other);
    expect(sameContent(a, b)).toBe(false);
    // Two clean runs: the target then holds B, and their timings set the kill windows: the
    // whole run, and the write (its first temporary entry to the rename that commits it).
    const times: { run: number; write: number }[] = [];
    for (const input of [inputs.new, other]) {
      let first = 0;
      let commit = 0;
      const r = await kpc([...path.args(input), '-o', target], {
        onSpawn: (c) => {
          const w = watch(dir, (_e, name) => {
            if (typeof name !== 'string' || !name.includes(`.${c.pid}.`)) return;
            const t = performance.now();
            if (first === 0) first = t;
            if (/\.(tmp|lnk)$/.test(name)) commit = t; // made, then renamed away: the last event
          });
          c.on('exit', () => w.close());
        },
      });
      expect(r.code, r.stderr).toBe(0);
      times.push({ run: r.ms, write: first > 0 && commit > first ? commit - first : 10 });
    }
    return { path, dir, target, a, b, rand: random(seed), around: surroundings(dir, 'out'), runMs: Math.min(...times.map((t) => t.run)), writeMs: Math.max(...times.map((t) => t.write)) };
  }

  /** Call `fn` once, when process `pid` makes its first temporary entry in `dir`. */
  function onFirstTemp(dir: string, pid: number, fn: () => void): () => void {
    let done = false;
    const w = watch(dir, (_event, name) => {
      if (done || typeof name !== 'string' || !name.startsWith('.out.') || !name.includes(`.${pid}.`)) return;
      done = true;
      w.close();
      fn();
    });
    setTimeout(() => w.close(), 30_000).unref();
    return () => w.close();
  }

  type Mode = 'anytime' | 'mid-write';

  /** One run writing the other output, hit by `signal` at a random point. */
  async function hit(l: Lane, signal: NodeJS.Signals, mode: Mode): Promise<{ r: Outcome; before: Content; wrote: Content; now: Content }> {
    const before = contentOf(l.target);
    const toB = sameContent(before, l.a);
    expect(toB || sameContent(before, l.b), `the target holds ${describeContent(before)}`).toBe(true);
    const input = toB ? other : inputs.new;
    const wrote = toB ? l.b : l.a;
    let stop = (): void => {};
    const r = await kpc([...l.path.args(input), '-o', l.target], {
      onSpawn: (child) => {
        const send = () => child.kill(signal);
        if (mode === 'anytime') {
          const t = setTimeout(send, l.rand() * l.runMs * 0.9);
          stop = () => clearTimeout(t);
        } else {
          const delay = l.rand() * l.writeMs;
          stop = onFirstTemp(l.dir, child.pid!, () => setTimeout(send, delay));
        }
      },
    });
    stop();
    const now = contentOf(l.target);
    expect(sameContent(now, before) || sameContent(now, wrote), `${signal} ${mode}: the target is ${describeContent(now)}, neither the old nor the new output`).toBe(true);
    expect(surroundings(l.dir, 'out'), `${signal}: something beside the target changed`).toEqual(l.around);
    if (r.code === 0) {
      expect(sameContent(now, wrote)).toBe(true);
      expect(leftovers(l.dir, 'out'), 'an exit-0 write sweeps every earlier leftover').toEqual([]);
    }
    return { r, before, wrote, now };
  }

  function killedBy(r: Outcome, signal: NodeJS.Signals): boolean {
    return r.signal === signal || r.code === 128 + ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal]!;
  }

  // Two lanes at a time (it.concurrent, maxConcurrency 2 above): one per core.
  ['iptables file', 'ipvs bundle', 'iptables delta', 'ipvs delta'].forEach((pathName, index) => {
    it.concurrent(`${pathName}: ${KILLS} SIGKILL and ${KILLS} SIGTERM at random points`, { timeout: 300_000 }, async () => {
      const l = await lane(inputs.paths.find((p) => p.name === pathName)!, 100 + index);
      const tally = { kill: { early: 0, mid: 0, done: 0, left: 0 }, term: { early: 0, completed: 0, done: 0 } };
      for (let i = 0; i < KILLS; i++) {
        const mode: Mode = i % 2 === 0 ? 'anytime' : 'mid-write';
        const { r, before, now } = await hit(l, 'SIGKILL', mode);
        if (r.code === 0) tally.kill.done++;
        else {
          expect(killedBy(r, 'SIGKILL'), `exit ${r.code} ${r.signal}: ${r.stderr}`).toBe(true);
          if (sameContent(now, before)) tally.kill.early++;
          else tally.kill.mid++;
          if (leftovers(l.dir, 'out').length > 0) tally.kill.left++;
        }
      }
      for (let i = 0; i < KILLS; i++) {
        const mode: Mode = i % 2 === 0 ? 'anytime' : 'mid-write';
        const { r, before, now } = await hit(l, 'SIGTERM', mode);
        if (r.code === 0) tally.term.done++;
        else {
          expect(killedBy(r, 'SIGTERM'), `exit ${r.code} ${r.signal}: ${r.stderr}`).toBe(true);
          if (sameContent(now, before)) tally.term.early++;
          else tally.term.completed++;
        }
        // A SIGTERM never leaves a temporary entry of its own run (the SIGKILLed runs' may
        // still be there when this run died before its write swept them).
        const current = contentOf(l.target).kind === 'dir' ? readlinkSync(l.target) : undefined;
        const mine = kpcEntries(l.dir, 'out').filter((e) => e.includes(`.${r.pid}.`) && e !== current);
        expect(mine, `SIGTERM left ${mine.join(', ')}`).toEqual([]);
      }
      // A clean write sweeps whatever the SIGKILLed runs left.
      const clean = await kpc([...l.path.args(inputs.old), '-o', l.target]);
      expect(clean.code, clean.stderr).toBe(0);
      expect(leftovers(l.dir, 'out')).toEqual([]);
      expect(surroundings(l.dir, 'out')).toEqual(l.around);
      record(
        `${pathName} (${SERVICES} Services, run ~${Math.round(l.runMs)} ms, first temporary entry to commit ~${Math.round(l.writeMs)} ms): ` +
          `SIGKILL x${KILLS}: ${tally.kill.early} before the commit (old kept), ${tally.kill.mid} after it (new), ${tally.kill.done} finished first; ` +
          `${tally.kill.left} left temporary entries, all swept by the next write; ` +
          `SIGTERM x${KILLS}: ${tally.term.early} died before writing (old kept), ${tally.term.completed} completed the write then died, ${tally.term.done} finished first; none left a temporary entry`,
      );
    });
  });

  it('SIGINT and SIGHUP behave as SIGTERM', { timeout: 180_000 }, async () => {
    for (const pathName of ['iptables file', 'ipvs bundle']) {
      const l = await lane(inputs.paths.find((p) => p.name === pathName)!, 200);
      for (const [signal, n] of [['SIGINT', 5], ['SIGHUP', 3]] as const) {
        for (let i = 0; i < n; i++) {
          const { r } = await hit(l, signal, 'mid-write');
          expect(r.code === 0 || killedBy(r, signal), `exit ${r.code} ${r.signal}`).toBe(true);
          expect(leftovers(l.dir, 'out'), `${signal} left a temporary entry`).toEqual([]);
        }
      }
      record(`${pathName}: SIGINT x5, SIGHUP x3 mid-write: no temporary entry left`);
    }
  });
});

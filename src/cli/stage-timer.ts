/**
 * Where a compile spends its time, by stage (read, validate, ir, emit, write), for the
 * benchmarks: `KPC_TIMINGS=1 kpc compile ...` prints one JSON line on stderr at the end.
 * Stages interleave (files are read and validated in turn), so each stage's time is summed.
 * Stages may nest (the output is rendered while it is written): the inner stage's time is
 * its own, not also the outer one's.
 */

import { performance } from 'node:perf_hooks';

export type Stage = 'read' | 'validate' | 'ir' | 'emit' | 'write';

const totals = new Map<Stage, number>();

/** The stage running now, and since when it has been counting. */
let running: { stage: Stage; since: number } | undefined;

function count(stage: Stage, ms: number): void {
  totals.set(stage, (totals.get(stage) ?? 0) + ms);
}

export function timed<T>(stage: Stage, fn: () => T): T {
  const outer = running;
  const start = performance.now();
  if (outer) count(outer.stage, start - outer.since);
  const self = { stage, since: start };
  running = self;
  try {
    return fn();
  } finally {
    const end = performance.now();
    count(stage, end - self.since);
    running = outer;
    if (outer) outer.since = end;
  }
}

/** `chunks`, with the time spent producing each one counted to `stage`. */
export function* timedChunks<T>(stage: Stage, chunks: Iterable<T>): Generator<T> {
  const it = chunks[Symbol.iterator]();
  for (;;) {
    const next = timed(stage, () => it.next());
    if (next.done) return;
    yield next.value;
  }
}

export function timingsEnabled(): boolean {
  return process.env.KPC_TIMINGS === '1';
}

/** `{"read":123.4,...}` in milliseconds, stages in pipeline order. */
export function timingsJSON(): string {
  const order: Stage[] = ['read', 'validate', 'ir', 'emit', 'write'];
  return JSON.stringify(Object.fromEntries(order.map((s) => [s, Math.round((totals.get(s) ?? 0) * 10) / 10])));
}

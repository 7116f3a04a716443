/**
 * Where a compile spends its time, by stage (read, validate, ir, emit, write), for the
 * benchmarks: `KPC_TIMINGS=1 kpc compile ...` prints one JSON line on stderr at the end.
 * Stages interleave (files are read and validated in turn), so each stage's time is summed.
 */

import { performance } from 'node:perf_hooks';

export type Stage = 'read' | 'validate' | 'ir' | 'emit' | 'write';

const totals = new Map<Stage, number>();

export function timed<T>(stage: Stage, fn: () => T): T {
  const start = performance.now();
  try {
    return fn();
  } finally {
    totals.set(stage, (totals.get(stage) ?? 0) + performance.now() - start);
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

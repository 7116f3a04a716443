/**
 * kpc as the benchmark runs it: `node dist/bench/kpc-child.js compile ...` is exactly
 * `node bin/kpc.js compile ...` (the same bundle, process and arguments), plus one line
 * on stderr at the end for the harness (bench/run.ts):
 *
 *   kpc-bench-result: {"code":0,"importMs":..,"mainMs":..,"stages":{...},"maxRssKB":..,...}
 *
 * - `stages` are kpc's own stage timers (src/cli/stage-timer.ts: read, validate, ir, emit,
 *   write, in both modes; they are always collected, KPC_TIMINGS=1 only prints them). The
 *   harness reports mainMs minus the timed stages as "other".
 * - `maxRssKB` is getrusage(RUSAGE_SELF).ru_maxrss (`process.resourceUsage().maxRSS`): the
 *   kernel's high-water mark of this process's resident set, the same figure as VmHWM in
 *   /proc/PID/status and `/usr/bin/time -f %M`, taken when kpc has finished.
 */

import { writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const started = performance.now();
// The bundle, loaded as bin/kpc.js loads it (bin/bundle-loader.js, two levels up from this
// file's dist/bench/), so the import is timed as a user's start is; its timers are its own.
const LOADER = new URL('../../bin/bundle-loader.js', import.meta.url).href;
const { loadBundle } = (await import(LOADER)) as { loadBundle: () => { exports: typeof import('../src/cli/entry.js') } };
const { main, timingsJSON } = loadBundle().exports;
const imported = performance.now();
// The harness reads the stages from our own line; kpc's would be a duplicate.
delete process.env.KPC_TIMINGS;
const code = await main(process.argv.slice(2));
const finished = performance.now();
const usage = process.resourceUsage();
const result = {
  code,
  importMs: imported - started,
  mainMs: finished - imported,
  stages: JSON.parse(timingsJSON()) as Record<string, number>,
  maxRssKB: usage.maxRSS,
  userMs: usage.userCPUTime / 1000,
  systemMs: usage.systemCPUTime / 1000,
};
writeSync(2, `\nkpc-bench-result: ${JSON.stringify(result)}\n`);
process.exitCode = code;

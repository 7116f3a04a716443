/**
 * kpc watch's per-event latency and memory (issue 19): a generated cluster (bench/gen.ts) as
 * the initial -f objects, then a stream of single-object changes written one at a time to the
 * watch's --events - (stdin); each event's latency is from the write of its line to the read of
 * its step's last framing line on the watch's stdout (the delta fully written). RSS of the
 * watch process is sampled along the way.
 *
 *   npm run build && node dist/bench/watch.js --services 20000 --events 500 --mode iptables
 *   node dist/bench/watch.js --services 20000 --events 100000 --mode iptables --quiet   # memory
 *
 * Changes (seeded): ~70% endpoint churn (an endpoint of a random EndpointSlice turns not ready,
 * ready again, or gets a new address), ~30% a Service's internalTrafficPolicy toggled
 * (Cluster <-> Local). Every change alters rules, so each event prints a delta.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateCluster, prng, renderCluster } from './gen.js';

interface Options {
  services: number;
  events: number;
  mode: 'iptables' | 'ipvs' | 'nftables';
  seed: number;
  quiet: boolean;
}

const USAGE = [
  'usage: node dist/bench/watch.js [--services N] [--events N] [--mode iptables|ipvs|nftables] [--seed N] [--quiet]',
  'Starts kpc watch on a generated cluster (default 20,000 Services) and feeds it N single-object',
  'changes (default 500) one at a time; prints per-event latency quantiles and RSS as JSON.',
].join('\n');

/** The options, or undefined when only the usage is asked for; a flag it does not know, or a bad value, is an error. */
function parseArgs(argv: string[]): Options | undefined {
  if (argv.includes('--help') || argv.includes('-h')) return undefined;
  const o: Options = { services: 20000, events: 500, mode: 'iptables', seed: 1, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = (): string => {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${a} needs a value`);
      return value;
    };
    const count = (): number => {
      const n = Number(v());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${a} takes a whole number above 0`);
      return n;
    };
    if (a === '--services') o.services = count();
    else if (a === '--events') o.events = count();
    else if (a === '--mode') {
      const mode = v();
      if (mode !== 'iptables' && mode !== 'ipvs' && mode !== 'nftables') throw new Error(`--mode takes iptables, ipvs or nftables, not ${mode}`);
      o.mode = mode;
    } else if (a === '--seed') o.seed = count();
    else if (a === '--quiet') o.quiet = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

type Obj = { kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, unknown>; endpoints?: Array<Record<string, unknown>> };

function rssOf(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const MB = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;

async function main(): Promise<number> {
  let parsed: Options | undefined;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed === undefined) {
    console.log(USAGE);
    return 0;
  }
  const o = parsed;
  const dir = mkdtempSync(join(tmpdir(), 'kpc-watch-bench-'));
  try {
    const objects = generateCluster({ services: o.services, seed: o.seed }) as Obj[];
    const cluster = join(dir, 'cluster.json');
    writeFileSync(cluster, [...renderCluster(objects, 'json-compact')].join(''));
    const slices = objects.filter((x) => x.kind === 'EndpointSlice' && (x.endpoints?.length ?? 0) > 0);
    const services = objects.filter((x) => x.kind === 'Service');
    const rand = prng(o.seed * 7919);
    let nextIP = (10 << 24) | (200 << 16);

    const kpc = join(import.meta.dirname, '..', '..', 'bin', 'kpc.js');
    const args = ['watch', '--proxy-mode', o.mode, '--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9', '-f', cluster, '--events', '-', '-q'];
    const t0 = performance.now();
    const child = spawn(process.execPath, [kpc, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.length > 1 << 16) stderr = stderr.slice(-(1 << 15));
    });
    // Framing lines, as they arrive, found without decoding the rules around them (the first
    // step is ~80 MB: the bench must not spend its own time, and garbage, on it). A framing
    // line cut by a chunk boundary is kept whole from its start.
    let carry: Buffer | undefined;
    let waiting: { marker: RegExp; resolve: (line: string) => void } | undefined;
    const FRAME = Buffer.from('# kpc watch:');
    child.stdout.on('data', (chunk: Buffer) => {
      const d = carry ? Buffer.concat([carry, chunk]) : chunk;
      carry = undefined;
      let at = 0;
      for (;;) {
        const i = d.indexOf(FRAME, at);
        if (i < 0) {
          // Keep a possible start of a framing line at the end.
          const tail = Math.max(0, d.length - FRAME.length);
          const nl = d.lastIndexOf(0x0a);
          if (nl >= tail) carry = d.subarray(nl + 1);
          else if (d.length > 0 && d.length - tail > 0) carry = Buffer.from(d.subarray(tail));
          break;
        }
        const end = d.indexOf(0x0a, i);
        if (end < 0) {
          carry = Buffer.from(d.subarray(i));
          break;
        }
        const line = d.toString('latin1', i, end);
        at = end + 1;
        if (waiting && waiting.marker.test(line)) {
          const w = waiting;
          waiting = undefined;
          w.resolve(line);
        }
      }
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const until = (marker: RegExp) => new Promise<string>((resolve) => (waiting = { marker, resolve }));

    await until(/^# kpc watch: end of event 0$/);
    const startup = performance.now() - t0;
    const afterStart = rssOf(child.pid!);
    if (!o.quiet) console.error(`initial output after ${(startup / 1000).toFixed(1)} s, RSS ${MB(afterStart.rss)}`);

    const latencies: number[] = [];
    const samples: Array<{ event: number; rss: number }> = [];
    let kinds = { endpoint: 0, service: 0, noChange: 0, rejected: 0 };
    for (let n = 1; n <= o.events; n++) {
      let event: unknown;
      if (rand() < 0.7) {
        const slice = slices[Math.floor(rand() * slices.length)]!;
        const eps = slice.endpoints!;
        const e = eps[Math.floor(rand() * eps.length)]!;
        const conditions = e.conditions as Record<string, unknown>;
        if (rand() < 0.5) {
          const ready = conditions.ready !== false;
          e.conditions = { ...conditions, ready: !ready, serving: !ready, terminating: false };
        } else {
          nextIP++;
          e.addresses = [`${(nextIP >>> 24) & 255}.${(nextIP >>> 16) & 255}.${(nextIP >>> 8) & 255}.${nextIP & 255}`];
          delete e.targetRef;
        }
        event = { type: 'MODIFIED', object: slice };
        kinds.endpoint++;
      } else {
        const svc = services[Math.floor(rand() * services.length)]!;
        svc.spec!.internalTrafficPolicy = svc.spec!.internalTrafficPolicy === 'Local' ? 'Cluster' : 'Local';
        event = { type: 'MODIFIED', object: svc };
        kinds.service++;
      }
      const line = JSON.stringify(event) + '\n';
      const done = until(new RegExp(`^# kpc watch: (end of event ${n}|event ${n} .*(no change|rejected))$`));
      const start = performance.now();
      child.stdin.write(line);
      const last = await done;
      latencies.push(performance.now() - start);
      if (last.endsWith('no change')) kinds.noChange++;
      if (last.endsWith('rejected')) kinds.rejected++;
      if (n % Math.max(1, Math.floor(o.events / 20)) === 0 || n === o.events) {
        const r = rssOf(child.pid!);
        samples.push({ event: n, rss: r.rss });
        if (!o.quiet) console.error(`event ${n}: RSS ${MB(r.rss)}, last ${latencies[latencies.length - 1]!.toFixed(1)} ms`);
      }
    }
    const final = rssOf(child.pid!);
    child.stdin.end();
    const code = await exited;
    const sorted = [...latencies].sort((a, b) => a - b);
    const result = {
      mode: o.mode,
      services: o.services,
      events: o.events,
      changes: kinds,
      startupSeconds: +(startup / 1000).toFixed(2),
      latencyMs: { p50: +quantile(sorted, 0.5).toFixed(1), p99: +quantile(sorted, 0.99).toFixed(1), max: +sorted[sorted.length - 1]!.toFixed(1), mean: +(latencies.reduce((a, b) => a + b, 0) / latencies.length).toFixed(1) },
      worst: latencies.map((ms, i) => ({ event: i + 1, ms: +ms.toFixed(1) })).sort((a, b) => b.ms - a.ms).slice(0, 8),
      rss: { afterInitial: MB(afterStart.rss), final: MB(final.rss), peak: MB(final.hwm), samples: samples.map((s) => `${s.event}:${MB(s.rss)}`) },
      exit: code,
    };
    console.log(JSON.stringify(result, null, 2));
    if (code !== 0) console.error(stderr.slice(-4000));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}

process.exitCode = await main();

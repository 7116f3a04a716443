/**
 * `npm run bench`: kpc at 1,000 / 5,000 / 20,000 / 100,000 Services (bench/gen.ts clusters),
 * each figure beside a floor and the consumer, measured in the same run. BENCHMARKS.md reads
 * the results.
 *
 *   npm run bench                                   # everything (tens of minutes; root for the kernel parts)
 *   npm run bench -- --sizes 1000,5000              # a quick subset
 *   npm run bench -- --sizes 20000 --formats json --modes iptables --incremental 20000
 *   node dist/bench/run.js --help
 *
 * Per size S, format (json|yaml) and mode (iptables|ipvs|nftables):
 *   kpc       `node dist/bench/kpc-child.js compile -f INPUT --hostname-override node-0
 *             --cluster-cidr 10.128.0.0/9 [--proxy-mode ipvs|nftables] -o OUT` as a child process (the
 *             same `main` as bin/kpc.js; kpc-child.ts adds one result line): wall time from
 *             spawn to exit, peak RSS (getrusage ru_maxrss of the child), kpc's stage timers
 *             (read = reading + parsing, validate, ir, emit, write), rules, lines and bytes out.
 *   floor     `node dist/bench/floor.js`: read the input, JSON.parse the cluster, write as many
 *             bytes as kpc wrote (fsync + rename) — the least any Node tool must do. Ratio kpc/floor.
 *   consumer  iptables mode: `iptables-restore --test` of kpc's output in a fresh network
 *             namespace. ipvs mode: `ipset restore` (real) + `iptables-restore --test` of
 *             iptables.rules + the kube-ipvs0 addresses (`ip -batch`) in a fresh namespace;
 *             ipvs.rules cannot be loaded (no IP_VS in this kernel; test/vm has a VM for
 *             correctness, far too slow to time). nftables mode: `nft -f` of kpc's output (the
 *             transaction kube-proxy sends on a full sync, default release) really loaded in a
 *             fresh namespace, and beside it, when the iptables mode of the same size ran, a real
 *             `iptables-restore` (not --test) of the iptables output of the same cluster in
 *             another fresh namespace (BENCHMARKS.md "nftables load time": nf_tables' handling
 *             of anonymous sets makes the nft load quadratic). Ratio kpc/consumer. Measured once per size
 *             and mode when the JSON and YAML outputs are byte-identical (checked).
 * Sizes ≤ 5,000 run 3× (median of each figure), larger ones once (--repeat overrides).
 * A YAML List above 128 MiB (the 100,000-Service one is 338 MB) is cut into several List
 * files at item boundaries and given with repeated -f (yamlParts).
 *
 * Incremental (--incremental S, default 20000 when 20000 is among the sizes; JSON, iptables):
 * bench/gen's `one-changed` variant (one Service's port 80 → 8443) compiled with
 * `--previous BASE`: time and delta size. Then, each applied to a namespace already holding
 * the full base rules and timed: kpc's delta (`iptables-restore --noflush`); a kube-proxy-style
 * partial sync (`--noflush` of the whole filter table and every top-level nat chain — all
 * chains but KUBE-SVC/SVL/EXT/FW/SEP — declared and rewritten, plus the changed Service's
 * chains); the whole new output without --noflush (both tables replaced); and the whole new
 * output with --noflush, as kube-proxy's full sync does, under a time cap (--noflush-cap; on
 * nf_tables it can take far longer than a fresh load: the bytes read by the cap are
 * reported). Up to 5,000 Services (or with --verify) the states after the delta, the rewrite
 * and the full replace are compared (`iptables-save`, sorted, counters dropped); beyond,
 * iptables-save itself takes more than 10 minutes on nf_tables.
 * Consumer commands are capped too (--consumer-cap, default 30 min): `iptables-restore --test`
 * of the 100,000-Service output (386 MB) reads only ~0.3 MB/s on nf_tables here.
 *
 * Namespaces need root; without it those parts are skipped with a note. Machine facts and the
 * 1-minute load average before every measurement are recorded (the machine may be shared).
 * Inputs are cached in --cache (default $TMPDIR/kpc-bench-cache), keyed by bench/gen's hash.
 */

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findCommand, netnsUnavailable, nsCapture, nsTimed, withNamespaces, type Timed } from './netns.js';

const HERE = dirname(fileURLToPath(import.meta.url)); // dist/bench
const ROOT = resolve(HERE, '..', '..');
const GEN = join(HERE, 'gen.js');
const KPC_CHILD = join(HERE, 'kpc-child.js');
const FLOOR = join(HERE, 'floor.js');

/** The node every benchmark compiles for, and the generator's pod range. */
export const KPC_ARGS = ['--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9'];

export type Format = 'json' | 'yaml';
export type Mode = 'iptables' | 'ipvs' | 'nftables';
export const MODES: readonly Mode[] = ['iptables', 'ipvs', 'nftables'];

export interface BenchOptions {
  sizes: number[];
  formats: Format[];
  modes: Mode[];
  /** Runs per measurement; undefined: 3 for S ≤ 5,000, else 1. */
  repeat?: number;
  seed: number;
  /** Size of the incremental case, or undefined for none. */
  incremental?: number;
  /** 'auto': namespaces when root; 'off': never. */
  netns: 'auto' | 'off';
  /**
   * Compare the namespaces' iptables-save after the incremental loads. 'auto': only up to
   * 5,000 Services (iptables-save of the 20,000-Service ruleset took more than 10 minutes
   * on nf_tables here).
   */
  verify: 'auto' | 'on' | 'off';
  cache: string;
  keep: boolean;
  json?: string;
  markdown?: string;
  /** Per child process. */
  timeoutMs: number;
  /** What kpc is being measured (default: the checkout's git commit). */
  label?: string;
  /** Time limit of the `--noflush` full reload (0: skip it). */
  noflushCapMs: number;
  /** Time limit of each consumer command (iptables-restore --test takes ~20 min at 100,000 Services). */
  consumerCapMs: number;
}

export interface Stats {
  wallMs: number;
  maxRssMB: number;
  stages: Record<string, number>;
  userMs: number;
  systemMs: number;
  importMs: number;
}

export interface OutputSize {
  bytes: number;
  lines: number;
  /** iptables: `-A` rules (both tables). ipvs: virtual servers + real servers + ipset entries + iptables rules. nftables: `add rule` lines. */
  rules: number;
  chains?: number;
  detail?: Record<string, number>;
  sha256: string;
}

export interface ConsumerResult {
  /** With timedOut: the cap (a lower bound). */
  ms: number;
  timedOut?: boolean;
  maxRssMB?: number;
  parts: Record<string, number>;
  ok: boolean;
  note?: string;
  load1: number;
}

export interface FloorResult {
  wallMs: number;
  readMs: number;
  parseMs: number;
  writeMs: number;
  maxRssMB: number;
}

export interface Measurement {
  services: number;
  format: Format;
  mode: Mode;
  runs: number;
  inputBytes: number;
  kpc?: Stats;
  error?: string;
  output?: OutputSize;
  floor?: FloorResult;
  consumer?: ConsumerResult;
  load1: number[];
  command: string;
}

export interface IncrementalResult {
  services: number;
  changed: string;
  delta?: Stats & { lines: number; bytes: number };
  fullRecompile?: Stats;
  rewrite: { lines: number; bytes: number };
  fullOutput: { lines: number; bytes: number };
  kernel?: {
    /** `iptables-restore` of the base into an empty namespace. */
    fullLoadEmptyMs?: number;
    /** `--noflush` of kpc's delta, the base loaded. */
    deltaMs?: number;
    /** `--noflush` of the kube-proxy-style rewrite, the base loaded. */
    rewriteMs?: number;
    /** `iptables-restore` (no --noflush: both tables replaced) of the whole new output, the base loaded. */
    fullReplaceMs?: number;
    /** `--noflush` of the whole new output (kube-proxy's full sync), the base loaded; capped. */
    noflushFullReload?: { ms: number; timedOut: boolean; bytesRead?: number; bytesTotal: number; capMs: number };
    /** The delta, the rewrite and a full replace reach the same iptables-save (sorted, counters dropped). */
    sameState?: boolean;
    stateNote?: string;
    failures: string[];
    load1: Record<string, number>;
  };
  note?: string;
  command: string;
}

export interface MachineFacts {
  date: string;
  nproc: number;
  cpu: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  iptables: string;
  ipset: string;
  loadAtStart: number[];
  kpcCommit: string;
  srcDirty: number;
}

export interface BenchResult {
  machine: MachineFacts;
  options: BenchOptions;
  measurements: Measurement[];
  incremental?: IncrementalResult;
  notes: string[];
  loadAtEnd: number[];
  totalSeconds: number;
}

// -------------------------------------------------------------------------------------------
// helpers

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

function cmdOut(argv: string[]): string {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', cwd: ROOT });
  return r.status === 0 ? (r.stdout ?? '').trim() : '';
}

export function machineFacts(label?: string): MachineFacts {
  const ipt = findCommand('iptables');
  const ips = findCommand('ipset');
  return {
    date: new Date().toISOString(),
    nproc: Number(cmdOut(['nproc'])) || cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    iptables: ipt ? cmdOut([ipt, '--version']) : 'not installed',
    ipset: ips ? cmdOut([ips, '--version']).split('\n')[0] ?? '' : 'not installed',
    loadAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    kpcCommit: label ?? (cmdOut(['git', 'rev-parse', '--short', 'HEAD']) || 'unknown'),
    srcDirty: label !== undefined ? 0 : cmdOut(['git', 'status', '--porcelain', 'src']).split('\n').filter(Boolean).length,
  };
}

/** Lines, `-A` rules and `:` chain declarations of iptables-restore text, counted on bytes. */
export function countRestore(buf: Buffer): { lines: number; rules: number; chains: number } {
  let lines = 0;
  let rules = 0;
  let chains = 0;
  let start = true;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (start) {
      if (b === 0x2d && buf[i + 1] === 0x41 && buf[i + 2] === 0x20) rules++;
      else if (b === 0x3a) chains++;
    }
    start = b === 0x0a;
    if (start) lines++;
  }
  return { lines, rules, chains };
}

function countPrefix(text: string, prefix: string): number {
  let n = 0;
  for (const line of text.split('\n')) if (line.startsWith(prefix)) n++;
  return n;
}

/** `add rule` / `add chain` / `add element` / `add set`+`add map` lines of an nft -f transaction. */
export function countNft(buf: Buffer): { lines: number; rules: number; chains: number; elements: number; sets: number } {
  const c = { lines: 0, rules: 0, chains: 0, elements: 0, sets: 0 };
  const at = (i: number, word: string) => buf.toString('latin1', i, i + word.length) === word;
  let start = true;
  for (let i = 0; i < buf.length; i++) {
    if (start && buf[i] === 0x61 /* a */) {
      if (at(i, 'add rule ')) c.rules++;
      else if (at(i, 'add chain ')) c.chains++;
      else if (at(i, 'add element ')) c.elements++;
      else if (at(i, 'add set ') || at(i, 'add map ')) c.sets++;
    }
    start = buf[i] === 0x0a;
    if (start) c.lines++;
  }
  return c;
}

function sizeOfOutput(path: string, mode: Mode): OutputSize {
  if (mode === 'nftables') {
    const buf = readFileSync(path);
    const c = countNft(buf);
    return { bytes: buf.length, lines: c.lines, rules: c.rules, chains: c.chains, detail: { elements: c.elements, setsAndMaps: c.sets }, sha256: createHash('sha256').update(buf).digest('hex') };
  }
  if (mode === 'iptables') {
    const buf = readFileSync(path);
    const c = countRestore(buf);
    return { bytes: buf.length, lines: c.lines, rules: c.rules, chains: c.chains, sha256: createHash('sha256').update(buf).digest('hex') };
  }
  const hash = createHash('sha256');
  let bytes = 0;
  let lines = 0;
  const text: Record<string, string> = {};
  for (const name of readdirSync(path).sort()) {
    const buf = readFileSync(join(path, name));
    hash.update(name).update(buf);
    bytes += buf.length;
    text[name] = buf.toString('utf8');
    lines += countRestore(buf).lines;
  }
  const detail = {
    virtualServers: countPrefix(text['ipvs.rules'] ?? '', '-A '),
    realServers: countPrefix(text['ipvs.rules'] ?? '', '-a '),
    ipsetEntries: countPrefix(text['ipset.rules'] ?? '', 'add '),
    iptablesRules: countPrefix(text['iptables.rules'] ?? '', '-A '),
    addresses: (text['kube-ipvs0.addrs'] ?? '').split('\n').filter(Boolean).length,
  };
  return {
    bytes,
    lines,
    rules: detail.virtualServers + detail.realServers + detail.ipsetEntries + detail.iptablesRules,
    detail,
    sha256: hash.digest('hex'),
  };
}

interface ChildRun {
  code: number;
  ms: number;
  stderr: string;
}

function runChild(argv: string[], timeoutMs: number): Promise<ChildRun> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, KPC_TIMINGS: '' } });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal === 'SIGKILL' ? 137 : 1), ms: performance.now() - started, stderr });
    });
  });
}

function resultLine<T>(stderr: string, tag: string): T | undefined {
  const i = stderr.lastIndexOf(`${tag}: `);
  if (i < 0) return undefined;
  return JSON.parse(stderr.slice(i + tag.length + 2).split('\n')[0]!) as T;
}

interface KpcChildResult {
  code: number;
  importMs: number;
  mainMs: number;
  stages: Record<string, number>;
  maxRssKB: number;
  userMs: number;
  systemMs: number;
}

/** One kpc run as a child process. Throws with kpc's stderr tail when it fails. */
async function runKpc(args: string[], timeoutMs: number): Promise<Stats> {
  const r = await runChild([KPC_CHILD, ...args], timeoutMs);
  const res = resultLine<KpcChildResult>(r.stderr, 'kpc-bench-result');
  if (r.code !== 0 || !res) {
    const tail = r.stderr.trim().split('\n').slice(-6).join('\n');
    throw new Error(`kpc exited ${r.code}${r.code === 137 ? ' (killed: timeout or out of memory)' : ''}: ${tail}`);
  }
  const stages = { ...res.stages };
  const timed = Object.values(stages).reduce((a, b) => a + b, 0);
  stages.other = Math.max(0, res.mainMs - timed);
  stages.startup = res.importMs;
  return { wallMs: r.ms, maxRssMB: res.maxRssKB / 1024, stages, userMs: res.userMs, systemMs: res.systemMs, importMs: res.importMs };
}

function medianStats(runs: Stats[]): Stats {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.stages)))];
  return {
    wallMs: median(runs.map((r) => r.wallMs)),
    maxRssMB: median(runs.map((r) => r.maxRssMB)),
    stages: Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r.stages[k] ?? 0))])),
    userMs: median(runs.map((r) => r.userMs)),
    systemMs: median(runs.map((r) => r.systemMs)),
    importMs: median(runs.map((r) => r.importMs)),
  };
}

async function runFloor(inputs: string[], json: string, bytes: number, output: string, timeoutMs: number): Promise<FloorResult> {
  const argv = [FLOOR, ...inputs.flatMap((f) => ['--input', f]), '--write-bytes', String(bytes), '--output', output];
  if (inputs.length !== 1 || json !== inputs[0]) argv.push('--json', json);
  const r = await runChild(argv, timeoutMs);
  const res = resultLine<{ readMs: number; parseMs: number; writeMs: number; maxRssKB: number }>(r.stderr, 'floor-bench-result');
  if (r.code !== 0 || !res) throw new Error(`floor exited ${r.code}: ${r.stderr.trim().split('\n').slice(-4).join('\n')}`);
  rmSync(output, { force: true });
  return { wallMs: r.ms, readMs: res.readMs, parseMs: res.parseMs, writeMs: res.writeMs, maxRssMB: res.maxRssKB / 1024 };
}

function medianFloor(runs: FloorResult[]): FloorResult {
  const m = (k: keyof FloorResult) => median(runs.map((r) => r[k]));
  return { wallMs: m('wallMs'), readMs: m('readMs'), parseMs: m('parseMs'), writeMs: m('writeMs'), maxRssMB: m('maxRssMB') };
}

// -------------------------------------------------------------------------------------------
// inputs

function genHash(): string {
  return createHash('sha256').update(readFileSync(GEN)).digest('hex').slice(0, 12);
}

/** The generated cluster for (S, seed, variant, format), made once and cached. */
async function input(opts: BenchOptions, services: number, format: Format, variant: 'base' | 'one-changed', log: (s: string) => void): Promise<string> {
  const dir = join(opts.cache, `gen-${genHash()}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `s${services}-seed${opts.seed}-${variant}.${format}`);
  if (existsSync(path)) return path;
  const started = performance.now();
  const tmp = `${path}.${process.pid}.tmp`;
  const r = await runChild([GEN, '--services', String(services), '--seed', String(opts.seed), '--format', format, '--variant', variant, '--output', tmp], opts.timeoutMs);
  if (r.code !== 0) throw new Error(`bench/gen failed: ${r.stderr.trim()}`);
  renameSync(tmp, path);
  log(`  generated ${path} (${mb(statSync(path).size)} MB, ${Math.round(performance.now() - started)} ms)`);
  return path;
}

/** kpc reads a YAML file of at most 256 MiB (a JSON List of any size). */
const YAML_PART_BYTES = 128 << 20;

/**
 * A YAML List larger than YAML_PART_BYTES (the 100,000-Service cluster, 338 MB) as several
 * List files cut at item boundaries (cached beside it), which kpc reads with repeated -f, as
 * its error message advises. Smaller files are returned as they are.
 */
export function yamlParts(path: string, partBytes = YAML_PART_BYTES): string[] {
  const size = statSync(path).size;
  if (size <= partBytes) return [path];
  const count = Math.ceil(size / partBytes);
  const parts = Array.from({ length: count }, (_, i) => `${path}.part${i + 1}-of-${count}.yaml`);
  if (parts.every((p) => existsSync(p))) return parts;
  const buf = readFileSync(path);
  const header = Buffer.from('apiVersion: v1\nitems:\n');
  const footerAt = buf.lastIndexOf('\nkind: List\n') + 1;
  const footer = buf.subarray(footerAt);
  // Item starts: "- " at the beginning of a line (nested sequences are indented).
  const starts: number[] = [];
  for (let i = buf.indexOf('\n- ', header.length - 1); i >= 0 && i < footerAt; i = buf.indexOf('\n- ', i + 1)) starts.push(i + 1);
  let from = 0;
  for (let k = 0; k < count; k++) {
    const target = Math.ceil(((k + 1) * starts.length) / count);
    const a = starts[from]!;
    const b = target < starts.length ? starts[target]! : footerAt;
    writeFileSync(`${parts[k]}.tmp`, Buffer.concat([header, buf.subarray(a, b), footer]));
    renameSync(`${parts[k]}.tmp`, parts[k]!);
    from = target;
  }
  return parts;
}

// -------------------------------------------------------------------------------------------
// consumer

/**
 * `iptablesOut`: nftables mode only, the iptables output of the same cluster, loaded for real
 * (`iptables-restore`, no --test) in a second fresh namespace beside the `nft -f` load.
 */
async function consumer(mode: Mode, out: string, runs: number, work: string, capMs: number, iptablesOut?: string): Promise<ConsumerResult> {
  const results: ConsumerResult[] = [];
  for (let i = 0; i < runs; i++) {
    const load = load1();
    results.push(
      await withNamespaces(mode === 'nftables' ? 2 : 1, async ([ns, ns2]) => {
        if (mode === 'nftables') {
          // The transaction kube-proxy sends on a full sync, on an empty namespace: a real load.
          const parts: Record<string, number> = {};
          const notes: string[] = [];
          let rss = 0;
          const step = (name: string, t: Timed, file: string) => {
            parts[name] = t.ms;
            rss = Math.max(rss, t.maxRssKB ?? 0);
            if (t.timedOut) notes.push(`${name}: stopped at the cap (${fmtMs(capMs)}) after reading ${mb(t.bytesRead ?? 0)} of ${mb(statSync(file).size)} MB`);
            else if (t.code !== 0) notes.push(`${name}: exit ${t.code}: ${t.stderr.slice(0, 300)}`);
          };
          step('nft -f', await nsTimed(ns!, ['nft', '-f', '-'], out, capMs), out);
          const nftMs = parts['nft -f']!;
          if (iptablesOut !== undefined) step('beside it: iptables-restore (iptables mode, same cluster)', await nsTimed(ns2!, ['iptables-restore'], iptablesOut, capMs), iptablesOut);
          const timedOut = notes.some((n) => n.includes('stopped at the cap'));
          return {
            // The consumer of this mode is nft alone; iptables-restore is reported beside it.
            ms: nftMs,
            ...(rss ? { maxRssMB: rss / 1024 } : {}),
            parts,
            ok: notes.length === 0,
            ...(timedOut ? { timedOut } : {}),
            ...(notes.length ? { note: notes.join('; ') } : {}),
            load1: load,
          };
        }
        if (mode === 'iptables') {
          const t = await nsTimed(ns!, ['iptables-restore', '--test'], out, capMs);
          const note = t.timedOut
            ? `stopped at the cap (${fmtMs(capMs)}) after reading ${mb(t.bytesRead ?? 0)} of ${mb(statSync(out).size)} MB`
            : t.code !== 0
              ? `exit ${t.code}: ${t.stderr.slice(0, 300)}`
              : undefined;
          return {
            ms: t.ms,
            ...(t.maxRssKB !== undefined ? { maxRssMB: t.maxRssKB / 1024 } : {}),
            parts: { 'iptables-restore --test': t.ms },
            ok: t.code === 0 && !t.timedOut,
            ...(t.timedOut ? { timedOut: true } : {}),
            ...(note ? { note } : {}),
            load1: load,
          };
        }
        // ipvs: the parts apply.sh loads, minus ipvsadm (no IP_VS here).
        const parts: Record<string, number> = {};
        const notes: string[] = [];
        let rss = 0;
        const step = async (name: string, t: Timed) => {
          parts[name] = t.ms;
          rss = Math.max(rss, t.maxRssKB ?? 0);
          if (t.timedOut) notes.push(`${name}: stopped at the cap (${fmtMs(capMs)})`);
          else if (t.code !== 0) notes.push(`${name}: exit ${t.code}: ${t.stderr.slice(0, 200)}`);
        };
        await step('ipset restore', await nsTimed(ns!, ['ipset', 'restore'], join(out, 'ipset.rules'), capMs));
        await step('iptables-restore --test', await nsTimed(ns!, ['iptables-restore', '--test'], join(out, 'iptables.rules'), capMs));
        const addrs = readFileSync(join(out, 'kube-ipvs0.addrs'), 'utf8').split('\n').filter(Boolean);
        // kube-proxy binds them to the dummy interface kube-ipvs0; a kernel without the dummy
        // driver gets them on lo (the same netlink work per address).
        const dummy = await nsTimed(ns!, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'dummy']);
        const dev = dummy.code === 0 ? 'kube-ipvs0' : 'lo';
        const batch = join(work, 'addrs.batch');
        writeFileSync(batch, addrs.map((a) => `address replace ${a} dev ${dev}`).join('\n') + '\n');
        await step(`ip -batch (addresses on ${dev})`, await nsTimed(ns!, ['ip', '-batch', '-'], batch, capMs));
        rmSync(batch, { force: true });
        const ms = Object.values(parts).reduce((a, b) => a + b, 0);
        const timedOut = notes.some((n) => n.includes('stopped at the cap'));
        return {
          ms,
          ...(rss ? { maxRssMB: rss / 1024 } : {}),
          parts,
          ok: notes.length === 0,
          ...(timedOut ? { timedOut } : {}),
          ...(notes.length ? { note: notes.join('; ') } : {}),
          load1: load,
        };
      }),
    );
  }
  const keys = Object.keys(results[0]!.parts);
  const rss = results.map((r) => r.maxRssMB).filter((x): x is number => x !== undefined);
  return {
    ms: median(results.map((r) => r.ms)),
    ...(rss.length ? { maxRssMB: median(rss) } : {}),
    parts: Object.fromEntries(keys.map((k) => [k, median(results.map((r) => r.parts[k] ?? 0))])),
    ok: results.every((r) => r.ok),
    ...(results.some((r) => r.timedOut) ? { timedOut: true } : {}),
    ...(results.some((r) => r.note) ? { note: results.find((r) => r.note)!.note! } : {}),
    load1: results[0]!.load1,
  };
}

// -------------------------------------------------------------------------------------------
// incremental

function chainOf(line: string): string | undefined {
  if (line.startsWith(':')) return line.slice(1).split(' ')[0];
  const m = /^-[ADIRXFZN] (\S+)/.exec(line);
  return m?.[1];
}

const isPerService = (chain: string | undefined): boolean => chain !== undefined && /^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(chain);

/**
 * kube-proxy's partial sync, built from kpc's full new output: per table, every chain that is
 * not a per-Service chain (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-POSTROUTING, the filter chains,
 * ...) declared (which flushes it under --noflush) with all its rules, plus what the delta does
 * to per-Service chains (the changed Service's chains, declared and written, or deleted).
 */
export function kubeProxyRewrite(full: string, delta: string): string {
  const deltaByTable = new Map<string, string[]>();
  let table = '';
  for (const line of delta.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    else if (table && isPerService(chainOf(line))) {
      if (!deltaByTable.has(table)) deltaByTable.set(table, []);
      deltaByTable.get(table)!.push(line);
    }
  }
  const out: string[] = [];
  let decls: string[] = [];
  let rules: string[] = [];
  table = '';
  const flush = () => {
    if (!table) return;
    const extra = deltaByTable.get(table) ?? [];
    const extraDecls = extra.filter((l) => l.startsWith(':'));
    const extraRest = extra.filter((l) => !l.startsWith(':') && !l.startsWith('-X '));
    const deletes = extra.filter((l) => l.startsWith('-X '));
    out.push(`*${table}`, ...decls, ...extraDecls, ...rules, ...extraRest, ...deletes, 'COMMIT');
    deltaByTable.delete(table);
  };
  for (const line of full.split('\n')) {
    if (line.startsWith('*')) {
      flush();
      table = line.slice(1);
      decls = [];
      rules = [];
    } else if (line === 'COMMIT' || line === '' || line.startsWith('#')) {
      continue;
    } else if (line.startsWith(':')) {
      if (!isPerService(chainOf(line))) decls.push(line);
    } else if (!isPerService(chainOf(line))) {
      rules.push(line);
    }
  }
  flush();
  // A table only the delta touches.
  for (const [t, extra] of deltaByTable) out.push(`*${t}`, ...extra, 'COMMIT');
  return `${out.join('\n')}\n`;
}

/** iptables-save text without counters and comments, lines sorted: equal texts = same rules. */
function canonicalSave(buf: Buffer): string[] {
  return buf
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => (l.startsWith(':') ? l.replace(/ \[\d+:\d+\]$/, '') : l))
    .sort();
}

async function incremental(opts: BenchOptions, work: string, nsOK: boolean, baseOut: string | undefined, log: (s: string) => void): Promise<IncrementalResult> {
  const S = opts.incremental!;
  const runs = opts.repeat ?? (S <= 5000 ? 3 : 1);
  const verify = opts.verify === 'on' || (opts.verify === 'auto' && S <= 5000);
  const baseIn = await input(opts, S, 'json', 'base', log);
  const changedIn = await input(opts, S, 'json', 'one-changed', log);
  const base = baseOut ?? join(work, `inc-base-${S}.txt`);
  if (!baseOut) await runKpc(['compile', '-f', baseIn, ...KPC_ARGS, '-o', base], opts.timeoutMs);
  const next = join(work, `inc-next-${S}.txt`);
  const deltaPath = join(work, `inc-delta-${S}.txt`);
  const deltaArgs = ['compile', '-f', changedIn, ...KPC_ARGS, '--previous', base, '-o', deltaPath];
  const command = `node dist/bench/kpc-child.js ${deltaArgs.join(' ')}`;
  const deltaRuns: Stats[] = [];
  for (let i = 0; i < runs; i++) deltaRuns.push(await runKpc(deltaArgs, opts.timeoutMs));
  const deltaText = readFileSync(deltaPath, 'utf8');
  const dc = countRestore(Buffer.from(deltaText));
  const full = await runKpc(['compile', '-f', changedIn, ...KPC_ARGS, '-o', next], opts.timeoutMs);
  const nextText = readFileSync(next, 'utf8');
  const rewriteText = kubeProxyRewrite(nextText, deltaText);
  const rewritePath = join(work, `inc-rewrite-${S}.txt`);
  writeFileSync(rewritePath, rewriteText);
  const result: IncrementalResult = {
    services: S,
    changed: `svc-${Math.floor(S / 2)}: first port 80 → 8443 (bench/gen --variant one-changed)`,
    delta: { ...medianStats(deltaRuns), lines: dc.lines, bytes: Buffer.byteLength(deltaText) },
    fullRecompile: full,
    rewrite: { lines: countRestore(Buffer.from(rewriteText)).lines, bytes: Buffer.byteLength(rewriteText) },
    fullOutput: { lines: countRestore(Buffer.from(nextText)).lines, bytes: Buffer.byteLength(nextText) },
    command,
  };
  log(`  delta: ${dc.lines} lines, ${Buffer.byteLength(deltaText)} bytes, kpc ${ms(result.delta!.wallMs)}; rewrite ${result.rewrite.lines} lines`);
  if (!nsOK) {
    result.note = 'kernel loads skipped (no namespaces)';
    return result;
  }
  // Two namespaces, each holding the full base rules before every timed step:
  //   ns1: base (timed: full load into an empty namespace) → kpc delta (timed) → save;
  //        then the whole new output without --noflush (timed: both tables replaced) → save
  //   ns2: base → kube-proxy-style rewrite (timed) → save; then the whole new output with
  //        --noflush, as kube-proxy's full sync does (timed, capped: on nf_tables this can take
  //        far longer than a fresh load, and the bytes read by the cap are reported)
  result.kernel = await withNamespaces(2, async ([ns1, ns2]) => {
    const k: NonNullable<IncrementalResult['kernel']> = { failures: [], load1: {} };
    const step = async (ns: string, name: string, argv: string[], file: string, timeoutMs = opts.timeoutMs): Promise<Timed | undefined> => {
      k.load1[name] = load1();
      const t = await nsTimed(ns, argv, file, timeoutMs);
      if (t.code !== 0 && !t.timedOut) {
        k.failures.push(`${name}: exit ${t.code}: ${t.stderr.slice(0, 300)}`);
        log(`  ${name} FAILED: ${t.stderr.slice(0, 300)}`);
        return undefined;
      }
      log(`  ${name}: ${t.timedOut ? `stopped at the cap, ${ms(t.ms)}` : ms(t.ms)}`);
      return t;
    };
    const saves = new Map<string, string[]>();
    const save = async (ns: string, name: string) => {
      try {
        saves.set(name, canonicalSave(await nsCapture(ns, ['iptables-save'])));
      } catch (e) {
        k.failures.push(`iptables-save (${name}): ${(e as Error).message.slice(0, 300)}`);
      }
    };
    const empty = await step(ns1!, 'full load of the base into an empty namespace', ['iptables-restore'], base);
    if (!empty) return k;
    k.fullLoadEmptyMs = empty.ms;
    const delta = await step(ns1!, 'kpc delta (--noflush)', ['iptables-restore', '--noflush'], deltaPath);
    if (delta) k.deltaMs = delta.ms;
    if (verify) await save(ns1!, 'delta');
    if (await step(ns2!, 'base load (not timed)', ['iptables-restore'], base)) {
      const rewrite = await step(ns2!, 'kube-proxy-style rewrite (--noflush)', ['iptables-restore', '--noflush'], rewritePath);
      if (rewrite) k.rewriteMs = rewrite.ms;
      if (verify) await save(ns2!, 'rewrite');
    }
    const replace = await step(ns1!, 'whole new output, tables replaced (no --noflush)', ['iptables-restore'], next);
    if (replace) k.fullReplaceMs = replace.ms;
    if (verify) await save(ns1!, 'full');
    if (verify && saves.size > 1) {
      const key = (l: string[]) => createHash('sha256').update(l.join('\n')).digest('hex');
      const keys = [...saves.values()].map(key);
      k.sameState = saves.size === 3 && keys.every((x) => x === keys[0]);
      if (!k.sameState) {
        const full = saves.get('full') ?? [];
        const diff = (x: string[], y: string[]) => {
          const sx = new Set(x);
          const sy = new Set(y);
          return x.filter((l) => !sy.has(l)).length + y.filter((l) => !sx.has(l)).length;
        };
        k.stateNote = [...saves].filter(([n]) => n !== 'full').map(([n, l]) => `${n} vs full: ${diff(l, full)} lines differ`).join('; ') + (saves.size < 3 ? ' (a save is missing)' : '');
      }
      log(`  iptables-save after delta / rewrite / full replace: ${k.sameState ? 'identical' : `DIFFERENT (${k.stateNote})`}`);
    } else if (!verify) {
      k.stateNote = 'states not compared (iptables-save is very slow at this size; --verify forces it)';
    }
    if (opts.noflushCapMs > 0 && k.rewriteMs !== undefined) {
      const total = statSync(next).size;
      const t = await step(ns2!, 'whole new output with --noflush (kube-proxy full sync)', ['iptables-restore', '--noflush'], next, opts.noflushCapMs);
      if (t) k.noflushFullReload = { ms: t.ms, timedOut: t.timedOut, ...(t.bytesRead !== undefined ? { bytesRead: t.bytesRead } : {}), bytesTotal: total, capMs: opts.noflushCapMs };
    }
    return k;
  });
  return result;
}

// -------------------------------------------------------------------------------------------
// the matrix

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const ms = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);

export async function runBench(opts: BenchOptions, log: (s: string) => void = (s) => console.error(s)): Promise<BenchResult> {
  const started = performance.now();
  for (const f of [GEN, KPC_CHILD, FLOOR]) if (!existsSync(f)) throw new Error(`${f} is missing: run \`npx tsc -p tsconfig.json\` first`);
  const machine = machineFacts(opts.label);
  const notes: string[] = [];
  const why = opts.netns === 'off' ? 'disabled with --netns off' : netnsUnavailable(['iptables-restore', 'ipset', ...(opts.modes.includes('nftables') ? ['nft'] : [])]);
  const nsOK = why === '';
  if (!nsOK) notes.push(`consumer and kernel loads SKIPPED: ${why}`);
  log(`kpc bench: ${machine.nproc} cores, ${machine.memoryGiB} GiB, load ${machine.loadAtStart.join(' ')}, ${machine.iptables}, kernel ${machine.kernel}, node ${machine.node}`);
  const work = join(opts.cache, `work-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const measurements: Measurement[] = [];
  const keptOutputs = new Map<string, string>();
  try {
    for (const S of opts.sizes) {
      const runs = opts.repeat ?? (S <= 5000 ? 3 : 1);
      const jsonIn = await input(opts, S, 'json', 'base', log);
      const consumerByMode = new Map<Mode, { sha: string; result: ConsumerResult }>();
      // The iptables output of this size (JSON input), loaded beside the nftables one.
      let iptablesOut: string | undefined;
      for (const mode of opts.modes) {
        for (const format of opts.formats) {
          const inPaths = format === 'json' ? [jsonIn] : yamlParts(await input(opts, S, format, 'base', log));
          const out = join(work, `out-${S}-${format}-${mode}${mode === 'iptables' ? '.txt' : mode === 'nftables' ? '.nft' : ''}`);
          const args = ['compile', ...inPaths.flatMap((p) => ['-f', p]), ...KPC_ARGS, ...(mode === 'iptables' ? [] : ['--proxy-mode', mode]), '-o', out];
          const m: Measurement = {
            services: S,
            format,
            mode,
            runs,
            inputBytes: inPaths.reduce((n, p) => n + statSync(p).size, 0),
            load1: [],
            command: `node dist/bench/kpc-child.js ${args.join(' ')}`,
          };
          measurements.push(m);
          log(`S=${S} ${format} ${mode}: kpc ×${runs} (load ${load1()})`);
          try {
            const kpcRuns: Stats[] = [];
            for (let i = 0; i < runs; i++) {
              m.load1.push(load1());
              kpcRuns.push(await runKpc(args, opts.timeoutMs));
            }
            m.kpc = medianStats(kpcRuns);
            m.output = sizeOfOutput(out, mode);
          } catch (e) {
            m.error = (e as Error).message;
            log(`  FAILED: ${m.error}`);
            continue;
          }
          log(`  kpc ${ms(m.kpc.wallMs)}, ${Math.round(m.kpc.maxRssMB)} MB, stages ${JSON.stringify(roundAll(m.kpc.stages))}, ${m.output.rules} rules, ${mb(m.output.bytes)} MB out`);
          const floorRuns: FloorResult[] = [];
          for (let i = 0; i < runs; i++) floorRuns.push(await runFloor(inPaths, jsonIn, m.output.bytes, join(work, 'floor.out'), opts.timeoutMs));
          m.floor = medianFloor(floorRuns);
          log(`  floor ${ms(m.floor.wallMs)} → kpc/floor ${(m.kpc.wallMs / m.floor.wallMs).toFixed(2)}`);
          if (nsOK) {
            const seen = consumerByMode.get(mode);
            if (seen && seen.sha === m.output.sha256) {
              m.consumer = { ...seen.result, note: `same output bytes as the ${opts.formats[0]} run: consumer measured once` };
            } else {
              log(`  consumer ×${runs} (load ${load1()})`);
              m.consumer = await consumer(mode, out, runs, work, opts.consumerCapMs, mode === 'nftables' ? iptablesOut : undefined);
              consumerByMode.set(mode, { sha: m.output.sha256, result: m.consumer });
              log(`  consumer ${ms(m.consumer.ms)}${m.consumer.ok ? '' : ` FAILED: ${m.consumer.note}`} → kpc/consumer ${(m.kpc.wallMs / m.consumer.ms).toFixed(2)}`);
            }
          }
          if (mode === 'iptables' && format === 'json') {
            keptOutputs.set(`${S}`, out);
            iptablesOut = out;
          } else rmSync(out, { recursive: true, force: true });
        }
      }
      // Keep only what the incremental case needs.
      for (const [k, path] of keptOutputs) if (Number(k) !== opts.incremental) rmSync(path, { force: true });
    }
    let inc: IncrementalResult | undefined;
    if (opts.incremental !== undefined) {
      log(`incremental at S=${opts.incremental} (load ${load1()})`);
      inc = await incremental(opts, work, nsOK, keptOutputs.get(`${opts.incremental}`), log);
    }
    const result: BenchResult = {
      machine,
      options: opts,
      measurements,
      ...(inc ? { incremental: inc } : {}),
      notes,
      loadAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
      totalSeconds: Math.round((performance.now() - started) / 1000),
    };
    return result;
  } finally {
    if (!opts.keep) rmSync(work, { recursive: true, force: true });
  }
}

function roundAll(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v)]));
}

// -------------------------------------------------------------------------------------------
// report

const fmtMs = (x: number | undefined) => (x === undefined ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || !b ? '—' : `${(a / b).toFixed(2)}×`);

/** The result as markdown: machine, one table per size, the stage split, the incremental case. */
export function renderMarkdown(r: BenchResult): string {
  const m = r.machine;
  const out: string[] = [];
  out.push(
    `Machine: ${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB, kernel ${m.kernel}, node ${m.node}, ${m.iptables}, ${m.ipset}; ` +
      `kpc ${m.kpcCommit}${m.srcDirty ? ` + ${m.srcDirty} uncommitted file(s) in src/` : ''}; ${m.date}.`,
    `Load average (1/5/15 min) at start ${m.loadAtStart.join(' / ')}, at end ${r.loadAtEnd.join(' / ')}; total ${r.totalSeconds} s.`,
    '',
  );
  for (const n of r.notes) out.push(`Note: ${n}`, '');
  for (const S of [...new Set(r.measurements.map((x) => x.services))]) {
    const rows = r.measurements.filter((x) => x.services === S);
    out.push(`### ${S.toLocaleString('en-US')} Services`, '');
    out.push(
      '| mode | input | runs | kpc wall | peak RSS | rules | lines | out MB | floor | kpc/floor | consumer | kpc/consumer | load |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const x of rows) {
      if (!x.kpc || !x.output) {
        const err = (x.error ?? '').split('\n')[0]!.replace(/\|/g, '/').slice(0, 240);
        out.push(`| ${x.mode} | ${x.format} (${mb(x.inputBytes)} MB) | ${x.runs} | FAILED: ${err} | | | | | | | | | ${x.load1.join(', ')} |`);
        continue;
      }
      out.push(
        `| ${x.mode} | ${x.format} (${mb(x.inputBytes)} MB) | ${x.runs} | ${fmtMs(x.kpc.wallMs)} | ${Math.round(x.kpc.maxRssMB)} MB | ${x.output.rules.toLocaleString('en-US')} | ` +
          `${x.output.lines.toLocaleString('en-US')} | ${mb(x.output.bytes)} | ${fmtMs(x.floor?.wallMs)} | ${ratio(x.kpc.wallMs, x.floor?.wallMs)} | ` +
          `${x.consumer ? `${x.consumer.timedOut ? '> ' : ''}${fmtMs(x.consumer.ms)}${x.consumer.ok || x.consumer.timedOut ? '' : ' (failed)'}` : 'skipped'} | ` +
          `${x.consumer?.timedOut ? '< ' : ''}${ratio(x.kpc.wallMs, x.consumer?.ms)} | ${x.load1.join(', ')} |`,
      );
    }
    out.push('', 'Stage split (ms, median; read = reading + parsing the input; startup = loading kpc\'s modules):', '');
    const keys = ['startup', 'read', 'validate', 'ir', 'emit', 'write', 'other'];
    out.push(`| mode | input | ${keys.join(' | ')} | parser share | floor read / parse / write |`, `| --- | --- | ${keys.map(() => '---:').join(' | ')} | ---: | --- |`);
    for (const x of rows) {
      if (!x.kpc) continue;
      const st = x.kpc.stages;
      const share = (st.read ?? 0) / x.kpc.wallMs;
      out.push(
        `| ${x.mode} | ${x.format} | ${keys.map((k) => (st[k] === undefined ? '—' : Math.round(st[k]!).toLocaleString('en-US'))).join(' | ')} | ${Math.round(share * 100)}% | ` +
          `${x.floor ? `${Math.round(x.floor.readMs)} / ${Math.round(x.floor.parseMs)} / ${Math.round(x.floor.writeMs)}` : '—'} |`,
      );
    }
    const cons = rows.filter((x) => x.consumer && !x.consumer.note?.startsWith('same output'));
    if (cons.length) {
      out.push('', 'Consumer detail:', '');
      for (const x of cons) {
        const c = x.consumer!;
        out.push(
          `- ${x.mode}: ${Object.entries(c.parts).map(([k, v]) => `${k} ${fmtMs(v)}`).join(', ')}` +
            `${c.maxRssMB ? `; peak RSS ${Math.round(c.maxRssMB)} MB` : ''}; load ${c.load1}` +
            `${c.ok ? '' : `; ${c.timedOut ? '' : 'FAILED: '}${(c.note ?? '').replace(/\s*\n\s*/g, ' ').slice(0, 400)}`}`,
        );
      }
    }
    out.push('');
  }
  const inc = r.incremental;
  if (inc) {
    out.push(`### Incremental: one Service changed at ${inc.services.toLocaleString('en-US')} Services`, '');
    out.push(`Change: ${inc.changed}.`, '');
    out.push('| what | lines | bytes | time |', '| --- | ---: | ---: | ---: |');
    if (inc.delta) out.push(`| kpc compile --previous (delta) | ${inc.delta.lines} | ${inc.delta.bytes} | ${fmtMs(inc.delta.wallMs)} (peak RSS ${Math.round(inc.delta.maxRssMB)} MB) |`);
    if (inc.fullRecompile) out.push(`| kpc full compile of the changed cluster | ${inc.fullOutput.lines.toLocaleString('en-US')} | ${inc.fullOutput.bytes.toLocaleString('en-US')} | ${fmtMs(inc.fullRecompile.wallMs)} |`);
    out.push(`| kube-proxy-style rewrite text | ${inc.rewrite.lines.toLocaleString('en-US')} | ${inc.rewrite.bytes.toLocaleString('en-US')} | — |`, '');
    if (inc.delta) out.push(`Delta stages (ms): ${JSON.stringify(roundAll(inc.delta.stages))}.`, '');
    if (inc.kernel) {
      const k = inc.kernel;
      const nf = k.noflushFullReload;
      const nfText = !nf
        ? 'not run'
        : nf.timedOut
          ? `> ${fmtMs(nf.capMs)} (stopped at the cap after reading ${mb(nf.bytesRead ?? 0)} of ${mb(nf.bytesTotal)} MB)`
          : fmtMs(nf.ms);
      out.push(
        '| iptables-restore into a namespace | time | vs delta | load before |',
        '| --- | ---: | ---: | ---: |',
        `| full load of the base into an empty namespace | ${fmtMs(k.fullLoadEmptyMs)} | ${ratio(k.fullLoadEmptyMs, k.deltaMs)} | ${k.load1['full load of the base into an empty namespace'] ?? '—'} |`,
        `| kpc delta, --noflush (base loaded) | ${fmtMs(k.deltaMs)} | 1× | ${k.load1['kpc delta (--noflush)'] ?? '—'} |`,
        `| kube-proxy-style rewrite of the top-level chains, --noflush (base loaded) | ${fmtMs(k.rewriteMs)} | ${ratio(k.rewriteMs, k.deltaMs)} | ${k.load1['kube-proxy-style rewrite (--noflush)'] ?? '—'} |`,
        `| whole new output, tables replaced (no --noflush; base loaded) | ${fmtMs(k.fullReplaceMs)} | ${ratio(k.fullReplaceMs, k.deltaMs)} | ${k.load1['whole new output, tables replaced (no --noflush)'] ?? '—'} |`,
        `| whole new output with --noflush, as kube-proxy's full sync (base loaded) | ${nfText} | ${nf && !nf.timedOut ? ratio(nf.ms, k.deltaMs) : '—'} | ${k.load1['whole new output with --noflush (kube-proxy full sync)'] ?? '—'} |`,
        '',
        (k.sameState === undefined
          ? k.stateNote
            ? `${k.stateNote}. `
            : ''
          : `iptables-save after the delta, after the rewrite and after the full replace (sorted, counters dropped): ${k.sameState ? 'identical' : `DIFFERENT — ${k.stateNote}`}. `) +
          (k.failures.length ? `Failures: ${k.failures.join('; ')}.` : ''),
        '',
      );
    } else if (inc.note) out.push(`Kernel part: ${inc.note}.`, '');
    out.push(`Command: \`${inc.command.split(`${r.options.cache}/`).join('$CACHE/')}\``, '');
  }
  out.push('Commands (kpc-child.js runs bin/kpc.js\'s `main` and adds one result line):', '');
  const tidy = (c: string) => c.split(`${r.options.cache}/`).join('$CACHE/').replace(/-o \S+$/, '-o OUT');
  for (const x of r.measurements.filter((y) => y.runs > 0).slice(0, 4)) out.push(`- \`${tidy(x.command)}\``);
  out.push('');
  return out.join('\n');
}

// -------------------------------------------------------------------------------------------
// command line

const HELP = `usage: node dist/bench/run.js [options]   (npm run bench -- [options])
  --sizes 1000,5000,20000,100000   Service counts
  --formats json,yaml              input formats
  --modes iptables,ipvs,nftables   proxy modes (nftables: nft -f load in a namespace, beside iptables-restore)
  --repeat N                       runs per measurement (default 3 for S ≤ 5000, else 1; median)
  --seed N                         generator seed (default 1)
  --incremental S|off              one-Service-changed case at S (default 20000 if among the sizes)
  --netns auto|off                 consumer and kernel loads in namespaces (auto: when root)
  --verify | --no-verify           compare the namespaces' iptables-save after the incremental loads
                                   (default: only up to 5,000 Services; iptables-save is very slow beyond)
  --cache DIR                      generated inputs (default $TMPDIR/kpc-bench-cache)
  --keep                           keep kpc's outputs in DIR/work-PID
  --json FILE                      write all results as JSON
  --markdown FILE                  write the tables as markdown (also printed on stdout)
  --timeout SECONDS                per child process (default 1800)
  --consumer-cap SECONDS           time limit of each consumer command (default 1800; the bytes read by then are reported)
  --noflush-cap SECONDS            time limit of the --noflush full reload in the incremental case (default 180; 0 skips it)
  --label TEXT                     what kpc is being measured (default: the checkout's git commit)`;

export function parseArgs(argv: string[]): BenchOptions {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
    return v;
  };
  const known = new Set(['label', 'noflush-cap', 'consumer-cap', 'verify', 'sizes', 'formats', 'modes', 'repeat', 'seed', 'incremental', 'netns', 'no-verify', 'cache', 'keep', 'json', 'markdown', 'timeout', 'help']);
  for (const a of argv) if (a.startsWith('--') && !known.has(a.slice(2))) throw new Error(`unknown option ${a}\n${HELP}`);
  const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
  const sizes = list(get('sizes') ?? '1000,5000,20000,100000').map((x) => {
    const n = Number(x.replace(/_/g, ''));
    if (!Number.isInteger(n) || n < 1) throw new Error(`--sizes: ${x} is not a positive integer`);
    return n;
  });
  const formats = list(get('formats') ?? 'json,yaml') as Format[];
  for (const f of formats) if (f !== 'json' && f !== 'yaml') throw new Error(`--formats: ${f}`);
  const modes = list(get('modes') ?? MODES.join(',')) as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`--modes: ${m}`);
  // iptables first: the nftables consumer loads the iptables output of the same size beside its own.
  modes.sort((a, b) => MODES.indexOf(a) - MODES.indexOf(b));
  const incArg = get('incremental');
  const incremental = incArg === 'off' ? undefined : incArg !== undefined ? Number(incArg) : sizes.includes(20000) ? 20000 : undefined;
  const netns = (get('netns') ?? 'auto') as 'auto' | 'off';
  if (netns !== 'auto' && netns !== 'off') throw new Error(`--netns: ${netns}`);
  const repeat = get('repeat');
  const json = get('json');
  const markdown = get('markdown');
  const label = get('label');
  return {
    ...(label !== undefined ? { label } : {}),
    sizes,
    formats,
    modes,
    ...(repeat !== undefined ? { repeat: Number(repeat) } : {}),
    seed: Number(get('seed') ?? '1'),
    ...(incremental !== undefined ? { incremental } : {}),
    netns,
    verify: argv.includes('--no-verify') ? 'off' : argv.includes('--verify') ? 'on' : 'auto',
    cache: resolve(get('cache') ?? join(tmpdir(), 'kpc-bench-cache')),
    keep: argv.includes('--keep'),
    ...(json !== undefined ? { json: resolve(json) } : {}),
    ...(markdown !== undefined ? { markdown: resolve(markdown) } : {}),
    timeoutMs: Number(get('timeout') ?? '1800') * 1000,
    noflushCapMs: Number(get('noflush-cap') ?? '180') * 1000,
    consumerCapMs: Number(get('consumer-cap') ?? '1800') * 1000,
  };
}

async function cli(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  let opts: BenchOptions;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  const result = await runBench(opts);
  const md = renderMarkdown(result);
  process.stdout.write(md);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
  if (opts.markdown) writeFileSync(opts.markdown, md);
  const failed = result.measurements.filter((m) => m.error || (m.consumer && !m.consumer.ok && !m.consumer.timedOut));
  if (result.incremental?.kernel?.sameState === false) return 1;
  return failed.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await cli(process.argv.slice(2));

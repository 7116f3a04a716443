/**
 * Side-by-side pairs: two kpc runs that a target compares (compact JSON against indented JSON,
 * YAML against JSON, ...), measured in one sitting, alternating A B A B so that drift of the
 * machine falls on both. Prints the medians, the ratio B/A, and whether the two outputs are the
 * same bytes when the pair says they must be.
 *
 *   npm run build && node dist/bench/pairs.js --services 20000 --repeat 5 --pairs compact-json
 *
 * Each run is `node dist/bench/kpc-child.js …`, which is `node bin/kpc.js …` plus one result line
 * (bench/kpc-child.ts). Inputs come from bench/gen.ts, cached under --cache.
 */

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCluster, renderCluster, type ClusterFormat } from './gen.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const KPC_CHILD = join(HERE, 'kpc-child.js');

interface Side {
  label: string;
  /** kpc's arguments; INPUT(format) is replaced by the generated input's path, OUT by an output path. */
  argv: string[];
}

interface Pair {
  name: string;
  what: string;
  a: Side;
  b: Side;
  /** The target for B/A, when the issue sets one. */
  target?: number;
  /** The two runs must write the same bytes. */
  sameBytes: boolean;
  /** Exit codes of B that are not failures (kpc diff exits 1 when something differs). */
  bExits?: number[];
}

const NODE = ['--hostname-override', 'node-0', '--cluster-cidr', '10.0.0.0/8'];

const PAIRS: Record<string, Pair> = {
  'compact-json': {
    name: 'compact-json',
    what: 'compact one-line JSON (jq -c) against kubectl-indented JSON, iptables mode',
    a: { label: 'indented JSON', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compact JSON', argv: ['compile', ...NODE, '-f', 'INPUT(json-compact)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: true,
  },
  'yaml-json': {
    name: 'yaml-json',
    what: 'YAML against JSON of the same cluster, iptables mode',
    a: { label: 'JSON', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'YAML', argv: ['compile', ...NODE, '-f', 'INPUT(yaml)', '-o', 'OUT'] },
    target: 1.25,
    sameBytes: true,
  },
  'yaml-anchors': {
    name: 'yaml-anchors',
    what: 'YAML with 112 aliases of shared port lists against JSON of the same cluster, iptables mode',
    a: { label: 'JSON', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'YAML with anchors', argv: ['compile', ...NODE, '-f', 'INPUT(yaml-anchors)', '-o', 'OUT'] },
    target: 1.5,
    sameBytes: true,
  },
  trace: {
    name: 'trace',
    what: 'kpc trace of one connection (to a cluster IP) against a compile of the same input, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'trace', argv: ['trace', ...NODE, '-f', 'INPUT(json)', '--to', '10.96.0.10:80', '--from', '10.0.3.4', '-o', 'json'] },
    target: 1.1,
    sameBytes: false,
  },
  explain: {
    name: 'explain',
    what: 'kpc explain of one Service against a compile of the same input, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'explain', argv: ['explain', 'ns-0/svc-0', ...NODE, '-f', 'INPUT(json)', '-o', 'json'] },
    target: 1.1,
    sameBytes: false,
  },
  'trace-nft': {
    name: 'trace-nft',
    what: 'kpc trace of one connection (to a cluster IP) against a compile of the same input, nftables mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'trace', argv: ['trace', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '--to', '10.96.0.10:80', '--from', '10.0.3.4', '-o', 'json'] },
    target: 1.1,
    sameBytes: false,
  },
  'explain-nft': {
    name: 'explain-nft',
    what: 'kpc explain of one Service against a compile of the same input, nftables mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'explain', argv: ['explain', 'ns-0/svc-0', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'json'] },
    target: 1.1,
    sameBytes: false,
  },
  'trace-ipvs': {
    name: 'trace-ipvs',
    what: 'kpc trace of one connection (to a cluster IP) against a compile of the same input, ipvs mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'trace', argv: ['trace', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '--to', '10.96.0.10:80', '--from', '10.0.3.4', '-o', 'json'] },
    target: 1.1,
    sameBytes: false,
  },
  'explain-ipvs': {
    name: 'explain-ipvs',
    what: 'kpc explain of one Service against a compile of the same input, ipvs mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'explain', argv: ['explain', 'ns-0/svc-0', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'json'] },
    target: 1.1,
    sameBytes: false,
  },
  previous: {
    name: 'previous',
    what: 'compile --previous (its own output: nothing changed) against a compile, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compile --previous', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS(json)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: false,
  },
  'previous-ipvs': {
    name: 'previous-ipvs',
    what: 'compile --previous (its own output: nothing changed) against a compile, ipvs mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compile --previous', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-IPVS(json)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: false,
  },
  'previous-nft': {
    name: 'previous-nft',
    what: 'compile --previous (its own output: nothing changed) against a compile, nftables mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compile --previous', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-NFT(json)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: false,
  },
  'diff-ipvs': {
    name: 'diff-ipvs',
    what: 'kpc diff against its own output (nothing changed) against a compile, ipvs mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'diff', argv: ['diff', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-IPVS(json)'] },
    target: 1.2,
    sameBytes: false,
  },
  'diff-nft': {
    name: 'diff-nft',
    what: 'kpc diff against its own output (nothing changed) against a compile, nftables mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'diff', argv: ['diff', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-NFT(json)'] },
    target: 1.2,
    sameBytes: false,
  },
  // One Service changed: the previous output is kpc's of the input with one endpoint of
  // ns-0/svc-0 moved (CHANGED: its first "10.128.0.2" written "10.128.250.250").
  previous1: {
    name: 'previous1',
    what: 'compile --previous (one Service changed: an endpoint) against a compile, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compile --previous', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-CHANGED(json)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: false,
  },
  diff1: {
    name: 'diff1',
    what: 'kpc diff (one Service changed: an endpoint) against a compile, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'diff', argv: ['diff', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-CHANGED(json)'] },
    target: 1.2,
    sameBytes: false,
    bExits: [0, 1],
  },
  'previous1-ipvs': {
    name: 'previous1-ipvs',
    what: 'compile --previous (one Service changed: an endpoint) against a compile, ipvs mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compile --previous', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-CHANGED-IPVS(json)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: false,
  },
  'previous1-nft': {
    name: 'previous1-nft',
    what: 'compile --previous (one Service changed: an endpoint) against a compile, nftables mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'compile --previous', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-CHANGED-NFT(json)', '-o', 'OUT'] },
    target: 1.1,
    sameBytes: false,
  },
  'diff1-nft': {
    name: 'diff1-nft',
    what: 'kpc diff (one Service changed: an endpoint) against a compile, nftables mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'diff', argv: ['diff', '--proxy-mode', 'nftables', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-CHANGED-NFT(json)'] },
    target: 1.2,
    sameBytes: false,
    bExits: [0, 1],
  },
  'diff1-ipvs': {
    name: 'diff1-ipvs',
    what: 'kpc diff (one Service changed: an endpoint) against a compile, ipvs mode',
    a: { label: 'compile', argv: ['compile', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'diff', argv: ['diff', '--proxy-mode', 'ipvs', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS-CHANGED-IPVS(json)'] },
    target: 1.2,
    sameBytes: false,
    bExits: [0, 1],
  },
  check1: {
    name: 'check1',
    what: 'kpc check with one Service drifted (an endpoint) against a compile, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'check', argv: ['check', ...NODE, '-f', 'INPUT(json)', '--golden', 'PREVIOUS-CHANGED(json)'] },
    target: 1.2,
    sameBytes: false,
    bExits: [1],
  },
  diff: {
    name: 'diff',
    what: 'kpc diff against its own output (nothing changed) against a compile, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'diff', argv: ['diff', ...NODE, '-f', 'INPUT(json)', '--previous', 'PREVIOUS(json)'] },
    target: 1.2,
    sameBytes: false,
  },
  check: {
    name: 'check',
    what: 'kpc check against its own output (no drift) against a compile, iptables mode',
    a: { label: 'compile', argv: ['compile', ...NODE, '-f', 'INPUT(json)', '-o', 'OUT'] },
    b: { label: 'check', argv: ['check', ...NODE, '-f', 'INPUT(json)', '--golden', 'PREVIOUS(json)'] },
    target: 1.2,
    sameBytes: false,
  },
};

interface Options {
  services: number;
  seed: number;
  repeat: number;
  pairs: string[];
  cache: string;
}

const FLAGS = ['services', 'seed', 'repeat', 'pairs', 'cache'];

function usage(): string {
  const names = Object.entries(PAIRS).map(([name, p]) => `  ${name.padEnd(14)} ${p.what}`);
  return [
    'usage: node dist/bench/pairs.js [--services N] [--repeat N] [--seed N] [--pairs a,b,...] [--cache DIR]',
    'Runs each pair (all of them when --pairs is not given: 24 pairs, 6 runs each by default, about 10 minutes at 20,000 Services).',
    'pairs:',
    ...names,
  ].join('\n');
}

/** The options, or undefined when only the usage is asked for (any flag it does not know is an error: a typo must not start every pair). */
function parseArgs(argv: string[]): Options | undefined {
  if (argv.includes('--help') || argv.includes('-h')) return undefined;
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!;
    if (!flag.startsWith('--') || !FLAGS.includes(flag.slice(2))) throw new Error(`unknown argument ${flag}\n${usage()}`);
    if (argv[i + 1] === undefined) throw new Error(`${flag} needs a value`);
  }
  const arg = (name: string, dflt: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
  };
  const pairs = arg('pairs', Object.keys(PAIRS).join(',')).split(',');
  for (const p of pairs) if (!PAIRS[p]) throw new Error(`unknown pair ${p}; known: ${Object.keys(PAIRS).join(', ')}`);
  return {
    services: Number(arg('services', '20000')),
    seed: Number(arg('seed', '1')),
    repeat: Number(arg('repeat', '3')),
    pairs,
    cache: arg('cache', join(tmpdir(), 'kpc-bench-cache')),
  };
}

/** The generated input, written once per (size, seed, format) and generator version. */
function input(opts: Options, format: ClusterFormat): string {
  const genHash = createHash('sha256').update(readFileSync(join(HERE, 'gen.js'))).digest('hex').slice(0, 12);
  const dir = join(opts.cache, `pairs-${genHash}`);
  mkdirSync(dir, { recursive: true });
  const ext = format === 'json-compact' ? 'compact.json' : format === 'yaml-anchors' ? 'anchors.yaml' : format;
  const path = join(dir, `s${opts.services}-seed${opts.seed}.${ext}`);
  if (existsSync(path)) return path;
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  for (const chunk of renderCluster(generateCluster({ services: opts.services, seed: opts.seed }), format)) {
    const bytes = Buffer.from(chunk);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off);
  }
  closeSync(fd);
  renameSync(tmp, path);
  return path;
}

interface Run {
  ms: number;
  maxRssMB: number;
  sha256: string;
}

/**
 * kpc's full output of INPUT(format) in a mode (what PREVIOUS(format), PREVIOUS-IPVS(format)
 * and PREVIOUS-NFT(format) name), made once per run; `changed`: of the input with one endpoint
 * of ns-0/svc-0 moved (the PREVIOUS-CHANGED forms: one Service changed since).
 */
async function previousOutput(opts: Options, format: ClusterFormat, mode: 'iptables' | 'ipvs' | 'nftables', changed: boolean, work: string): Promise<string> {
  const path = join(work, `previous-${format}-${mode}${changed ? '-changed' : ''}`);
  if (existsSync(path)) return path;
  let from = input(opts, format);
  if (changed) {
    // As bytes: the 100,000-Service input is longer than a JavaScript string can be.
    const bytes = readFileSync(from);
    const at = bytes.indexOf('"10.128.0.2"');
    if (at < 0) throw new Error(`${from}: no "10.128.0.2" to change`);
    from = join(work, `changed-${format}`);
    writeFileSync(from, Buffer.concat([bytes.subarray(0, at), Buffer.from('"10.128.250.250"'), bytes.subarray(at + '"10.128.0.2"'.length)]));
  }
  await runKpc(['compile', '--proxy-mode', mode, ...NODE, '-f', from, '-o', path], path);
  return path;
}

/** Runs kpc; its output is `out` (the -o file, or its stdout when the arguments have no -o). */
function runKpc(argv: string[], out: string, exits: readonly number[] = [0]): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const toFile = !argv.includes('-o') || argv[argv.indexOf('-o') + 1] !== out;
    const stdoutFd = toFile ? openSync(out, 'w') : undefined;
    const child = spawn(process.execPath, [KPC_CHILD, ...argv], { cwd: ROOT, stdio: ['ignore', stdoutFd ?? 'ignore', 'pipe'] });
    if (stdoutFd !== undefined) closeSync(stdoutFd);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-100_000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      const line = stderr.slice(stderr.lastIndexOf('kpc-bench-result: ') + 'kpc-bench-result: '.length).split('\n')[0]!;
      if (!exits.includes(code ?? -1)) return reject(new Error(`kpc ${argv.join(' ')} exited ${code}:\n${stderr.slice(-2000)}`));
      const result = JSON.parse(line) as { maxRssKB: number };
      const sha256 = statSync(out).isDirectory() ? 'directory' : createHash('sha256').update(readFileSync(out)).digest('hex');
      resolvePromise({ ms, maxRssMB: result.maxRssKB / 1024, sha256 });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

async function measure(pair: Pair, opts: Options, work: string): Promise<string> {
  const resolveArg = async (a: string, out: string): Promise<string> => {
    if (a === 'OUT') return out;
    const m = /^(INPUT|PREVIOUS(-CHANGED)?(-IPVS|-NFT)?)\(([a-z-]+)\)$/.exec(a);
    if (!m) return a;
    const format = m[4] as ClusterFormat;
    const mode = m[3] === '-IPVS' ? 'ipvs' : m[3] === '-NFT' ? 'nftables' : 'iptables';
    return m[1] === 'INPUT' ? input(opts, format) : previousOutput(opts, format, mode, m[2] !== undefined, work);
  };
  const resolveArgv = async (side: Side, out: string) => {
    const argv: string[] = [];
    for (const a of side.argv) argv.push(await resolveArg(a, out));
    return argv;
  };
  const runs: Record<'a' | 'b', Run[]> = { a: [], b: [] };
  for (let i = 0; i < opts.repeat; i++) {
    // A B, then B A: each side runs first as often as the other.
    const order: Array<'a' | 'b'> = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const side of order) {
      const out = join(work, `${pair.name}-${side}.out`);
      rmSync(out, { recursive: true, force: true });
      runs[side].push(await runKpc(await resolveArgv(pair[side], out), out, side === 'b' ? pair.bExits : undefined));
    }
  }
  const a = median(runs.a.map((r) => r.ms));
  const b = median(runs.b.map((r) => r.ms));
  const dirs = runs.a[0]!.sha256 === 'directory' || runs.b[0]!.sha256 === 'directory';
  const same = !dirs && runs.a[0]!.sha256 === runs.b[0]!.sha256;
  const ratio = b / a;
  const verdict = pair.target === undefined ? '' : ratio <= pair.target ? ` (target ≤ ${pair.target}×: met)` : ` (target ≤ ${pair.target}×: NOT met)`;
  return [
    `${pair.name}: ${pair.what}; ${opts.services} Services, ${opts.repeat} runs each, medians`,
    `  A ${pair.a.label}: ${(a / 1000).toFixed(2)} s, ${Math.round(median(runs.a.map((r) => r.maxRssMB)))} MB   (${runs.a.map((r) => (r.ms / 1000).toFixed(2)).join(', ')})`,
    `  B ${pair.b.label}: ${(b / 1000).toFixed(2)} s, ${Math.round(median(runs.b.map((r) => r.maxRssMB)))} MB   (${runs.b.map((r) => (r.ms / 1000).toFixed(2)).join(', ')})`,
    `  B/A ${ratio.toFixed(2)}×${verdict}; ${dirs ? 'outputs are directories (not compared)' : `outputs ${same ? 'the same bytes' : 'DIFFER'} (sha256 ${runs.a[0]!.sha256.slice(0, 16)}${same ? '' : ` vs ${runs.b[0]!.sha256.slice(0, 16)}`})`}`,
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  let opts: Options | undefined;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    console.error(`pairs: ${(e as Error).message}`);
    return 2;
  }
  if (opts === undefined) {
    console.log(usage());
    return 0;
  }
  const work = join(opts.cache, `pairs-work-${process.pid}`);
  mkdirSync(work, { recursive: true });
  let failed = false;
  try {
    for (const name of opts.pairs) {
      const pair = PAIRS[name]!;
      const report = await measure(pair, opts, work);
      console.log(report);
      if (pair.sameBytes && report.includes('DIFFER')) failed = true;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));

/**
 * The fault-injection harness for kpc's writers (RELIABILITY.md): real faults, made by the
 * kernel, against the real CLI (bin/kpc.js in a child process):
 *
 *   ENOSPC    a small tmpfs (`mount -t tmpfs -o size=…,nr_inodes=…`), resized between runs
 *   EFBIG     `prlimit --fsize=N` (RLIMIT_FSIZE; Node ignores SIGXFSZ, so writes fail with EFBIG)
 *   EROFS     the tmpfs remounted read-only
 *   syscalls  `strace -e inject=SYSCALL:error=E:when=N` (or `:signal=KILL`): the Nth rename,
 *             symlink, write, fsync... fails, or the process is killed as it makes that call
 *   signals   SIGKILL/SIGTERM/SIGINT/SIGHUP sent at random times, or a random delay after the
 *             first temporary entry appears (inotify on the target's directory)
 *
 * Nothing in kpc knows about any of this: no test hook, no environment variable.
 *
 * Every mount lives under /tmp/kpc-rel-PID-XXXXXX (made by this process) and is unmounted by
 * `cleanup()`; `sweepStaleMounts()` unmounts those of test processes that are gone.
 *
 * `describeFaults` skips the suite without root (saying why), and FAILS under CI=true.
 */

import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'vitest';
import { generateCluster, renderCluster } from '../../bench/gen.js';
import { findCommand, isCI, isRoot } from '../netns/lab.js';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const KPC = join(REPO, 'bin', 'kpc.js');
/** The flags every generated cluster is compiled with (bench/gen.ts: the node is node-0). */
export const NODE_FLAGS = ['--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9'];

// ---------------------------------------------------------------------------------------------
// Requirements
// ---------------------------------------------------------------------------------------------

const COMMANDS = ['mount', 'umount', 'prlimit', 'strace', 'mknod', 'unshare', 'sh'];

let probed: string | undefined | null = null;

function probeTmpfs(): string | undefined {
  const dir = mkdtempSync('/tmp/kpc-rel-probe-');
  try {
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'kpc-rel', dir], { encoding: 'utf8' });
    if (m.status !== 0) return `cannot mount a tmpfs: ${(m.stderr || m.error?.message || '').trim()}`;
    spawnSync('umount', [dir]);
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function faultRequirements(): string[] {
  const reasons: string[] = [];
  if (!isRoot()) reasons.push('not running as root (the suite mounts tmpfs file systems)');
  const missing = COMMANDS.filter((c) => findCommand(c) === undefined);
  if (missing.length > 0) reasons.push(`missing command(s): ${missing.join(', ')} (.ci/run installs strace; the rest is util-linux/coreutils)`);
  if (!existsSync(join(REPO, 'dist', 'kpc.cjs'))) reasons.push('dist/kpc.cjs is missing: run npm run build');
  if (reasons.length === 0) {
    if (probed === null) probed = probeTmpfs();
    if (probed !== undefined) reasons.push(probed);
  }
  return reasons;
}

/** `describe` that skips (loudly) without root, and fails under CI=true. */
export function describeFaults(name: string, fn: () => void): void {
  const reasons = faultRequirements();
  const why = reasons.join('; ');
  if (reasons.length > 0 && isCI()) {
    describe(name, () => {
      it('has what CI promises (root, mount, strace, prlimit)', () => {
        throw new Error(`CI=true but the fault-injection suite cannot run: ${why}`);
      });
    });
    return;
  }
  if (reasons.length > 0) console.warn(`\n*** SKIPPED "${name}": ${why}. Run as root to run it. ***\n`);
  describe.skipIf(reasons.length > 0)(name, fn);
}

// ---------------------------------------------------------------------------------------------
// Work directories and mounts
// ---------------------------------------------------------------------------------------------

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
}

function mountPointsUnder(prefix: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Unmount and remove the work directories of earlier test processes that are gone. */
export function sweepStaleMounts(): void {
  for (const entry of readdirSync('/tmp')) {
    const m = /^kpc-rel-(\d+)-/.exec(entry);
    if (!m || alive(Number(m[1]))) continue;
    const root = join('/tmp', entry);
    for (const mp of mountPointsUnder(`${root}/`)) spawnSync('umount', ['-l', mp]);
    if (mountPointsUnder(`${root}/`).length === 0) rmSync(root, { recursive: true, force: true });
  }
}

export class Workdir {
  readonly root: string;
  private mounts: string[] = [];
  private n = 0;

  constructor(label: string) {
    this.root = mkdtempSync(`/tmp/kpc-rel-${process.pid}-${label}-`);
  }

  /** A fresh plain directory (on /tmp's file system). */
  dir(name: string): string {
    const d = join(this.root, `${name}-${this.n++}`);
    mkdirSync(d);
    return d;
  }

  /** A fresh tmpfs of `size` bytes (and `inodes` inodes). */
  tmpfs(name: string, size: number, inodes = 1000): string {
    const d = this.dir(name);
    run('mount', ['-t', 'tmpfs', '-o', `size=${size},nr_inodes=${inodes},mode=755`, 'kpc-rel', d]);
    this.mounts.push(d);
    return d;
  }

  resize(mountPoint: string, size: number, inodes?: number): void {
    run('mount', ['-o', `remount,size=${size}${inodes !== undefined ? `,nr_inodes=${inodes}` : ''}`, mountPoint]);
  }

  readOnly(mountPoint: string, ro: boolean): void {
    run('mount', ['-o', `remount,${ro ? 'ro' : 'rw'}`, mountPoint]);
  }

  unmount(mountPoint: string): void {
    run('umount', [mountPoint]);
    this.mounts = this.mounts.filter((m) => m !== mountPoint);
  }

  cleanup(): void {
    for (const m of [...this.mounts].reverse()) spawnSync('umount', ['-l', m]);
    this.mounts = [];
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Bytes used on the file system holding `path` (a tmpfs counts whole pages). */
export function usedBytes(path: string): number {
  const s = statfsSync(path);
  return (s.blocks - s.bfree) * s.bsize;
}

export function usedInodes(path: string): number {
  const s = statfsSync(path);
  return s.files - s.ffree;
}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/** A generated cluster (bench/gen.ts) as one JSON file in `dir`. */
export function cluster(dir: string, services: number, seed: number, variant: 'base' | 'one-changed' = 'base'): string {
  const file = join(dir, `cluster-${services}-${seed}-${variant}.json`);
  if (!existsSync(file)) writeFileSync(file, [...renderCluster(generateCluster({ services, seed, variant }), 'json')].join(''));
  return file;
}

// ---------------------------------------------------------------------------------------------
// Running kpc
// ---------------------------------------------------------------------------------------------

export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  pid: number;
  ms: number;
}

export interface RunOptions {
  /** Words put before `node bin/kpc.js` (prlimit …, strace …, sh -c trap …). */
  wrap?: string[];
  /** stdout: captured (default) or this fd. */
  stdoutFd?: number;
  /** Called once the child exists (to kill it). */
  onSpawn?: (child: ChildProcess) => void;
  timeoutMs?: number;
}

export function kpc(args: readonly string[], options: RunOptions = {}): Promise<Outcome> {
  const argv = [...(options.wrap ?? []), process.execPath, KPC, ...args];
  const spawnOptions: SpawnOptions = { stdio: ['ignore', options.stdoutFd ?? 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C', KPC_TIMINGS: '' } };
  const start = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), spawnOptions);
    const out: Buffer[] = [];
    let err = '';
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout: Buffer.concat(out), stderr: err, pid: child.pid!, ms: performance.now() - start });
    });
    options.onSpawn?.(child);
  });
}

/** `strace` injecting faults into kpc's own system calls (-f: Node's threads too). */
export function straceInject(...rules: string[]): string[] {
  return ['strace', '-f', '-qq', '-o', '/dev/null', ...rules.flatMap((r) => ['-e', `inject=${r}`])];
}

export function prlimitFsize(bytes: number): string[] {
  return ['prlimit', `--fsize=${bytes}`, '--'];
}

/** kpc's errors are single lines `error: …`, never a stack trace. */
export function oneLineError(stderr: string): string | undefined {
  const lines = stderr.split('\n').filter((l) => l.startsWith('error: ') || l.startsWith('internal error') || /^\s+at /.test(l));
  return lines.length === 1 && lines[0]!.startsWith('error: ') && !/\n\s+at /.test(stderr) ? lines[0] : undefined;
}

// ---------------------------------------------------------------------------------------------
// What is on disk
// ---------------------------------------------------------------------------------------------

export type Content = { kind: 'missing' } | { kind: 'file'; sha: string; size: number } | { kind: 'dir'; files: Record<string, string> } | { kind: 'other'; what: string };

function sha(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

/** What `path` holds, followed through links: a file's hash, or a directory's files' hashes. */
export function contentOf(path: string): Content {
  let st;
  try {
    st = statSync(path);
  } catch {
    return { kind: 'missing' };
  }
  if (st.isFile()) {
    const b = readFileSync(path);
    return { kind: 'file', sha: sha(b), size: b.length };
  }
  if (st.isDirectory()) {
    const files: Record<string, string> = {};
    for (const name of readdirSync(path).sort()) {
      const p = join(path, name);
      if (!lstatSync(p).isFile()) files[name] = `not a file: ${name}`;
      else {
        const b = readFileSync(p);
        files[name] = `${b.length}:${sha(b)}`;
      }
    }
    return { kind: 'dir', files };
  }
  return { kind: 'other', what: st.isFIFO() ? 'fifo' : st.isCharacterDevice() ? 'chardev' : 'special' };
}

/** The sizes of a file, or of each file of a directory. */
export function sizesOf(c: Content): number[] {
  if (c.kind === 'file') return [c.size];
  if (c.kind === 'dir') return Object.values(c.files).map((v) => Number(v.split(':')[0]));
  return [];
}

export function sameContent(a: Content, b: Content): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function describeContent(c: Content): string {
  if (c.kind === 'file') return `file of ${c.size} bytes ${c.sha.slice(0, 12)}`;
  if (c.kind === 'dir') return `directory {${Object.entries(c.files).map(([n, h]) => `${n}:${h.slice(0, 16)}`).join(' ')}}`;
  return c.kind === 'other' ? c.what : 'missing';
}

/** Every entry under `dir` (recursive, links not followed) with its type and content hash. */
export function tree(dir: string, skip: (name: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      if (rel === '' && skip(name)) continue;
      const p = join(d, name);
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = 'dir';
        walk(p, r);
      } else if (st.isFile()) out[r] = `file ${sha(readFileSync(p))}`;
      else out[r] = `special ${st.mode.toString(8)} ${st.rdev}`;
    }
  };
  walk(dir, '');
  return out;
}

/**
 * Things kpc must never delete or change, put beside the target `name` in `dir`: an unrelated
 * directory tree, a file, and decoys named like kpc's temporary entries but owned by pid 1
 * (alive), or not quite matching kpc's pattern.
 */
export function plantSentinels(dir: string, name: string): void {
  mkdirSync(join(dir, 'victim', 'sub', 'deeper'), { recursive: true });
  writeFileSync(join(dir, 'victim', 'a.txt'), 'keep me\n');
  writeFileSync(join(dir, 'victim', 'sub', 'deeper', 'b.txt'), 'keep me too\n');
  writeFileSync(join(dir, 'notes.txt'), 'the operator\'s notes\n');
  writeFileSync(join(dir, `.${name}.1.00000000.tmp`), 'pid 1 is alive: not a leftover\n');
  mkdirSync(join(dir, `.${name}.1.00000001.d`));
  writeFileSync(join(dir, `.${name}.1.00000001.d`, 'apply.sh'), 'pid 1 is alive: not a leftover\n');
  writeFileSync(join(dir, `.${name}.tmp`), 'not kpc\'s pattern\n');
  writeFileSync(join(dir, `${name}.bak`), 'a backup\n');
  mkdirSync(join(dir, `.${name}.999999999.zzzz.d`));
  writeFileSync(join(dir, `.${name}.999999999.zzzz.d`, 'x'), 'not kpc\'s pattern either\n');
}

/** kpc's temporary entries for `name` in `dir` (the pid-1 decoys excepted). */
export function kpcEntries(dir: string, name: string): string[] {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`^\\.${escaped}\\.(\\d+)\\.[0-9a-f]{8}\\.(tmp|d|lnk|old)$`);
  return readdirSync(dir).filter((e) => {
    const m = re.exec(e);
    return m !== null && m[1] !== '1';
  });
}

/**
 * kpc's entries for `name` that are not the bundle's current directory (the target of the
 * link `name`): what a finished run must not leave.
 */
export function leftovers(dir: string, name: string): string[] {
  let current: string | undefined;
  try {
    current = readlinkSync(join(dir, name));
  } catch {
    current = undefined;
  }
  return kpcEntries(dir, name).filter((e) => e !== current);
}

/** The directory tree around the target, without the target and kpc's own entries. */
export function surroundings(dir: string, name: string): Record<string, string> {
  const own = new Set(kpcEntries(dir, name));
  return tree(dir, (n) => n === name || own.has(n));
}

/** A seeded PRNG (mulberry32), so a campaign can be replayed: KPC_FAULT_SEED=N. */
export function random(seed = Number(process.env.KPC_FAULT_SEED ?? 12)): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Run `command` (sh) in a private mount namespace whose /dev is a fresh tmpfs holding null,
 * fd, stdin, stdout and stderr as a system has them. Tests of `-o /dev/stdout`, `-o /dev/null`
 * use it: a kpc that renamed over those names (the defect these tests look for) would replace
 * only the namespace's copies, never the machine's. Exit 90: the namespace could not be made.
 */
export function inPrivateDev(command: string): { status: number | null; stdout: Buffer; stderr: string } {
  const script = [
    'mount -t tmpfs -o size=16m kpc-rel-dev /dev || exit 90',
    'mknod -m 666 /dev/null c 1 3 || exit 90',
    'ln -s /proc/self/fd /dev/fd && ln -s /proc/self/fd/0 /dev/stdin && ln -s /proc/self/fd/1 /dev/stdout && ln -s /proc/self/fd/2 /dev/stderr || exit 90',
    command,
  ].join('\n');
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** `node bin/kpc.js ARGS` as sh words. */
export function kpcWords(args: readonly string[]): string {
  return [process.execPath, KPC, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
}

/** Open `path` for the child's stdout. */
export function openForStdout(path: string): number {
  return openSync(path, 'w');
}

export function closeFd(fd: number): void {
  closeSync(fd);
}

/** Campaign figures, printed at the end of each file (RELIABILITY.md quotes them). */
export const figures: string[] = [];
export function record(line: string): void {
  figures.push(line);
}
export function printFigures(title: string): void {
  if (figures.length > 0) console.log(`${title}\n${figures.map((f) => `  ${f}`).join('\n')}`);
}

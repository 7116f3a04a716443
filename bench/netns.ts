/**
 * The few network-namespace operations the benchmark needs (the consumer side: loading kpc's
 * output with iptables-restore / ipset). test/netns/lab.ts is the full lab for tests; it
 * imports vitest, so the benchmark keeps this small copy. The same naming is used
 * (`kpc-bench-<pid>-<n>`), so the lab's sweeper removes namespaces a killed benchmark left.
 *
 * Every namespace is deleted by `withNamespaces` (finally) and by an exit hook. Commands get
 * their stdin straight from a file descriptor, so hundreds of MB of rules never pass through
 * this process. Each command runs under `/usr/bin/time -f '%e %M'` when that exists, for the
 * consumer's peak RSS.
 */

import { spawn, spawnSync } from 'node:child_process';
import { accessSync, closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { performance } from 'node:perf_hooks';

const PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin']
  .filter((d, i, all) => d !== '' && all.indexOf(d) === i)
  .join(delimiter);
const ENV: NodeJS.ProcessEnv = { ...process.env, PATH, LC_ALL: 'C' };

export function findCommand(name: string): string | undefined {
  for (const dir of PATH.split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // next
    }
  }
  return undefined;
}

/** Why namespaces cannot be used here ('' when they can): root, `ip`, the commands, a probe. */
export function netnsUnavailable(commands: readonly string[]): string {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'not running as root';
  const missing = ['ip', ...commands].filter((c) => !findCommand(c));
  if (missing.length > 0) return `missing command(s): ${missing.join(', ')}`;
  const probe = `kpc-bench-${process.pid}-probe`;
  const add = spawnSync('ip', ['netns', 'add', probe], { env: ENV, encoding: 'utf8' });
  spawnSync('ip', ['netns', 'delete', probe], { env: ENV });
  if (add.status !== 0) return `ip netns add failed: ${(add.stderr ?? '').trim()}`;
  return '';
}

let counter = 0;
const live = new Set<string>();
let hooked = false;

function deleteSync(ns: string): void {
  const pids = spawnSync('ip', ['netns', 'pids', ns], { env: ENV, encoding: 'utf8' });
  for (const pid of (pids.stdout ?? '').split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone
    }
  }
  spawnSync('ip', ['netns', 'delete', ns], { env: ENV });
  live.delete(ns);
}

function create(): string {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const ns of [...live]) deleteSync(ns);
    });
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        for (const ns of [...live]) deleteSync(ns);
        process.exit(130);
      });
    }
  }
  const ns = `kpc-bench-${process.pid}-${counter++}`;
  const add = spawnSync('ip', ['netns', 'add', ns], { env: ENV, encoding: 'utf8' });
  if (add.status !== 0) throw new Error(`ip netns add ${ns}: ${add.stderr}`);
  live.add(ns);
  spawnSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up'], { env: ENV });
  return ns;
}

/** Runs fn with `count` fresh namespaces, always deleting them afterwards. */
export async function withNamespaces<T>(count: number, fn: (ns: string[]) => Promise<T>): Promise<T> {
  const made: string[] = [];
  try {
    for (let i = 0; i < count; i++) made.push(create());
    return await fn(made);
  } finally {
    for (const ns of made) deleteSync(ns);
  }
}

export interface Timed {
  code: number;
  ms: number;
  /** Killed at the time limit; `bytesRead` then says how far into stdin it had got. */
  timedOut: boolean;
  bytesRead?: number;
  /** Peak RSS of the command (KB), from /usr/bin/time; undefined without it. */
  maxRssKB?: number;
  stderr: string;
}

const TIME = findCommand('time');

/** Runs argv inside ns with stdin from `stdinFile` (or none), timing it from spawn to exit. */
export function nsTimed(ns: string, argv: readonly string[], stdinFile?: string, timeoutMs = 1_800_000): Promise<Timed> {
  const dir = mkdtempSync(join(tmpdir(), 'kpc-bench-time-'));
  const timeFile = join(dir, 'time');
  const full = TIME ? [TIME, '-f', '%e %M', '-o', timeFile, ...argv] : [...argv];
  const fd = stdinFile ? openSync(stdinFile, 'r') : 'ignore';
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('ip', ['netns', 'exec', ns, ...full], { env: ENV, stdio: [fd, 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 20_000) stderr += d;
    });
    let timedOut = false;
    let bytesRead: number | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      // stdin's file offset, shared by every process holding it: how much the command had read.
      try {
        const pos = /^pos:\s+(\d+)/m.exec(readFileSync(`/proc/${child.pid}/fdinfo/0`, 'utf8'));
        if (pos) bytesRead = Number(pos[1]);
      } catch {
        // gone
      }
      // The command runs under /usr/bin/time inside the namespace: kill everything in there.
      spawnSync('ip', ['netns', 'pids', ns], { env: ENV, encoding: 'utf8' })
        .stdout?.split(/\s+/)
        .filter(Boolean)
        .forEach((pid) => {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // gone
          }
        });
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      const ms = performance.now() - started;
      clearTimeout(timer);
      if (typeof fd === 'number') closeSync(fd);
      let maxRssKB: number | undefined;
      try {
        const fields = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ');
        maxRssKB = Number(fields[1]);
      } catch {
        // no /usr/bin/time
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({
        code: code ?? (signal ? 128 : 1),
        ms,
        timedOut,
        ...(bytesRead !== undefined ? { bytesRead } : {}),
        ...(maxRssKB !== undefined ? { maxRssKB } : {}),
        stderr: stderr.trim(),
      });
    });
  });
}

/** Runs argv inside ns and returns its stdout (for iptables-save); throws unless it exits 0. */
export function nsCapture(ns: string, argv: readonly string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, ...argv], { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`${argv.join(' ')} in ${ns}: exit ${code}: ${err.trim()}`))));
  });
}

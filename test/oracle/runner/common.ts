/**
 * Shared pieces of the differential runner: where the oracle binaries are, how the oracle and
 * kpc are run on one input (the SAME argv), and the List JSON they both read.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The repository root: the first folder above this file that holds package.json (the runner runs from test/oracle/runner/ under vitest and from dist/test/oracle/runner/ compiled). */
export const REPO_ROOT = ((): string => {
  let d = import.meta.dirname;
  while (!existsSync(join(d, 'package.json')) || !existsSync(join(d, 'fixtures'))) {
    const up = join(d, '..');
    if (up === d) throw new Error('cannot find the repository root');
    d = up;
  }
  return d;
})();
export const ORACLE_CACHE = process.env.KPC_ORACLE_CACHE ?? '/var/cache/kpc-oracle';
export const VERSIONS = ['1.34', '1.35', '1.36', '1.37'] as const;
/** The modes compared by default (and by the bounded campaign); ALL_MODES adds nftables. */
export const MODES = ['iptables', 'ipvs'] as const;
export const ALL_MODES = ['iptables', 'ipvs', 'nftables'] as const;
export type Mode = (typeof ALL_MODES)[number];

export const BUNDLE_FILES = ['ipvs.rules', 'ipset.rules', 'iptables.rules', 'kube-ipvs0.addrs'] as const;
/** What the oracle writes with -o DIR in nftables mode (src/nftables.go). */
export const NFT_FILES = ['kernel.listing', 'transaction.nft', 'expected.dump'] as const;

/** Where build.sh put the binaries (KPC_ORACLE_BIN, default ORACLE_CACHE/bin). */
export const ORACLE_BIN = process.env.KPC_ORACLE_BIN ?? join(ORACLE_CACHE, 'bin');

export function oracleBinary(version: string): string {
  return join(ORACLE_BIN, `kpc-oracle-v${version}`);
}

/** kpc's CLI: this checkout's bin/kpc.js, or KPC_ORACLE_KPC (another build of kpc, e.g. a branch's). */
export function kpcBin(): string {
  return process.env.KPC_ORACLE_KPC ?? join(REPO_ROOT, 'bin', 'kpc.js');
}

/** What one run produced: stdout, or (ipvs mode) the bundle's files. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  files?: Record<string, string>;
  /** nftables mode, kpc's side: why its output did not load into a fresh namespace (nft's message). */
  loadError?: string;
}

export function runProcess(cmd: string, args: readonly string[], timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/** Runs `cmd [prefix] compile argv`; with `files` (ipvs bundle, the oracle's nftables files) with `-o TMPDIR` and those files read back. */
async function runCompileLike(cmd: string, prefix: string[], argv: readonly string[], bundle: boolean | readonly string[]): Promise<RunResult> {
  if (!bundle) {
    const r = await runProcess(cmd, [...prefix, ...argv]);
    return r;
  }
  const names = bundle === true ? BUNDLE_FILES : bundle;
  const dir = mkdtempSync(join(tmpdir(), 'kpc-oracle-bundle-'));
  try {
    const r = await runProcess(cmd, [...prefix, ...argv, '-o', join(dir, 'out')]);
    const files: Record<string, string> = {};
    for (const f of names) {
      const p = join(dir, 'out', f);
      if (existsSync(p)) files[f] = readFileSync(p, 'utf8');
    }
    return { ...r, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function runOracle(version: string, argv: readonly string[], bundle: boolean | readonly string[]): Promise<RunResult> {
  return runCompileLike(oracleBinary(version), [], argv, bundle);
}

export function runKpcCli(argv: readonly string[], bundle: boolean | readonly string[]): Promise<RunResult> {
  return runCompileLike(process.execPath, [kpcBin()], argv, bundle);
}

/** Every manifest file below a path, in name order. */
export function manifestFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((n) => {
      const p = join(path, n);
      if (statSync(p).isDirectory()) return manifestFiles(p);
      return /\.(ya?ml|json)$/.test(n) ? [p] : [];
    });
}

/** The objects of YAML/JSON manifests (streams and `kind: List` flattened). */
export function readObjects(paths: readonly string[]): unknown[] {
  const items: unknown[] = [];
  for (const f of paths.flatMap(manifestFiles)) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
      const v = doc.toJS() as { kind?: unknown; items?: unknown } | null;
      if (v === null || v === undefined) continue;
      if (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items)) items.push(...(v.items as unknown[]));
      else items.push(v);
    }
  }
  return items;
}

export function listJSON(items: readonly unknown[]): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) + '\n';
}

export function writeTemp(name: string, text: string): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'kpc-oracle-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A first difference between two texts, as "line N: expected … / got …". */
export function firstDifference(want: string, got: string): string {
  const a = want.split('\n');
  const b = got.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: oracle ${JSON.stringify(a[i] ?? '<end>')} / kpc ${JSON.stringify(b[i] ?? '<end>')}`;
  }
  return 'same';
}

/** Runs tasks with at most `limit` at once. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(workers);
  return results;
}

/**
 * The differential campaign: each seed's generated cluster compiled by kpc and by kube-proxy's
 * own code (the oracle) with the same argv, per release and mode; every disagreement shrunk to
 * a minimal cluster and written as a golden case whose expected output is the ORACLE's.
 */

import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { BUNDLE_FILES, firstDifference, listJSON, type Mode, NFT_FILES, oracleBinary, REPO_ROOT, type RunResult, runKpcCli, runOracle, runProcess, writeTemp } from './common.js';
import { generate } from './generate.js';
import { canonicalNftListing, kpcRefusesNFTables, nftFamilyOf } from './nft.js';

export interface Verdict {
  version: string;
  mode: Mode;
  seed: number;
  agree: boolean;
  /** Both refused the input (same non-zero exit): agreement, but nothing compiled. */
  bothRejected: boolean;
  /** One line: what differs first. */
  detail: string;
  /** nftables mode: kpc refuses --proxy-mode nftables itself (nothing compared; not agreement). */
  kpcUnsupported?: boolean;
}

type Item = Record<string, unknown>;

/** kpc's runs, cached by argv (which names the release) and input. */
const kpcCache = new Map<string, Promise<RunResult>>();

let kpcVersionFlag: boolean | undefined;
export async function kpcHasVersionFlag(): Promise<boolean> {
  if (kpcVersionFlag === undefined) {
    const r = await runKpcCli(['compile', '--help'], false);
    kpcVersionFlag = r.stdout.includes('--kube-proxy-version');
  }
  return kpcVersionFlag;
}

async function runBoth(version: string, mode: Mode, flags: readonly string[], items: readonly Item[], config?: string): Promise<{ kpc: RunResult; oracle: RunResult }> {
  const text = listJSON(items);
  const tmp = writeTemp('cluster.json', text);
  const cfg = config === undefined ? undefined : writeTemp('config.yaml', config);
  try {
    const argv = ['compile', ...flags, '-f', tmp.path, ...(cfg ? ['--config', cfg.path] : [])];
    const bundle = mode === 'ipvs';
    const nft = mode === 'nftables';
    // nftables: kpc's --standalone file is what is loaded into a fresh namespace (the oracle
    // prints kube-proxy's own transaction and has no --standalone).
    const kpcArgv = [...((await kpcHasVersionFlag()) ? [...argv, '--kube-proxy-version', version] : argv), ...(nft ? ['--standalone'] : [])];
    const key = createHash('sha256').update(JSON.stringify([mode, kpcArgv.filter((a) => a !== tmp.path && a !== cfg?.path), text, config ?? null])).digest('hex');
    let kpcRun = kpcCache.get(key);
    if (!kpcRun) {
      // The temp files are gone once this call returns: kpc gets its own copies.
      const own = writeTemp('cluster.json', text);
      const ownCfg = config === undefined ? undefined : writeTemp('config.yaml', config);
      const ownArgv = kpcArgv.map((a) => (a === tmp.path ? own.path : a === cfg?.path ? ownCfg!.path : a));
      kpcRun = runKpcCli(ownArgv, bundle)
        .then((r) => (nft ? loadKpcNft(version, r, nftFamilyOf(flags)) : r))
        .finally(() => {
          own.cleanup();
          ownCfg?.cleanup();
        });
      kpcCache.set(key, kpcRun);
      if (kpcCache.size > 2000) kpcCache.delete(kpcCache.keys().next().value!);
    }
    const [kpc, oracle] = await Promise.all([kpcRun, runOracle(version, argv, nft ? NFT_FILES : bundle)]);
    return { kpc, oracle };
  } finally {
    tmp.cleanup();
    cfg?.cleanup();
  }
}

/**
 * nftables: kpc's output loaded with `nft -f` into a fresh network namespace and read back
 * (`kpc-oracle nft-load`: the same read-back as the oracle's own table), as files['kernel.listing'].
 */
async function loadKpcNft(version: string, r: RunResult, family: 'ip' | 'ip6'): Promise<RunResult> {
  if (r.code !== 0) return r;
  const tmp = writeTemp('kpc.nft', r.stdout);
  try {
    const l = await runProcess(oracleBinary(version), ['nft-load', '--family', family, tmp.path]);
    if (l.code !== 0) return { ...r, loadError: l.stderr.trim().split('\n').slice(0, 3).join(' | ') || `nft-load exit ${l.code}` };
    return { ...r, files: { 'kernel.listing': l.stdout } };
  } finally {
    tmp.cleanup();
  }
}

/** Both nftables listings in canonical form (runner/nft.ts), or why one cannot be read. */
function nftCompare(kpc: RunResult, oracle: RunResult): string {
  if (kpc.loadError !== undefined) return `kpc's output does not load into a fresh namespace: ${kpc.loadError}`;
  const o = oracle.files?.['kernel.listing'];
  const k = kpc.files?.['kernel.listing'];
  if (o === undefined || o === '') return 'the oracle wrote no kernel listing';
  if (k === undefined || k === '') return 'no listing of kpc\'s table';
  let co: string, ck: string;
  try {
    co = canonicalNftListing(o);
  } catch (e) {
    return `the oracle's listing: ${(e as Error).message}`;
  }
  try {
    ck = canonicalNftListing(k);
  } catch (e) {
    return `kpc's listing: ${(e as Error).message}`;
  }
  return co === ck ? '' : `kernel listing: ${firstDifference(co, ck)}`;
}

/** "" when kpc and the oracle agree, else what differs first. */
export function compareRuns(mode: Mode, kpc: RunResult, oracle: RunResult): string {
  // The first line that says what is wrong (not a warning, note or the closing count).
  const lastLine = (s: string) => {
    const lines = s.trim().split('\n').filter((l) => l !== '' && !l.startsWith('oracle: note'));
    const why = lines.find((l) => !/warning|^error: \d+ problem/.test(l)) ?? lines.at(-1) ?? '';
    return why.replace(/^\/tmp\/kpc-oracle-[^/]+\//, '');
  };
  if (oracle.code !== 0 || kpc.code !== 0) {
    if (oracle.code === kpc.code) return '';
    return `exit: oracle ${oracle.code} (${lastLine(oracle.stderr)}) / kpc ${kpc.code} (${lastLine(kpc.stderr)})`;
  }
  if (mode === 'iptables') return oracle.stdout === kpc.stdout ? '' : firstDifference(oracle.stdout, kpc.stdout);
  if (mode === 'nftables') return nftCompare(kpc, oracle);
  for (const f of BUNDLE_FILES) {
    const o = oracle.files?.[f];
    const k = kpc.files?.[f];
    if (o !== k) return `${f}: ${o === undefined ? 'not written by the oracle' : k === undefined ? 'not written by kpc' : firstDifference(o, k)}`;
  }
  return '';
}

export async function checkSeed(version: string, mode: Mode, seed: number): Promise<Verdict & { flags: string[]; items: Item[]; config?: string; oracle: RunResult }> {
  const g = generate(seed, mode, version);
  const { kpc, oracle } = await runBoth(version, mode, g.flags, g.items, g.config);
  const base = { version, mode, seed, flags: g.flags, items: g.items, ...(g.config ? { config: g.config } : {}) };
  if (mode === 'nftables' && kpcRefusesNFTables(kpc.code, kpc.stderr)) {
    // Nothing to compare. What the oracle did alone is kept in the detail (its exit code).
    return { ...base, agree: false, bothRejected: false, kpcUnsupported: true, detail: `kpc unsupported (${kpc.stderr.split('\n').find((l) => /nftables/i.test(l))?.trim()}); oracle exit ${oracle.code}`, oracle };
  }
  const detail = compareRuns(mode, kpc, oracle);
  const bothRejected = detail === '' && oracle.code !== 0;
  return { ...base, agree: detail === '', bothRejected, detail, oracle };
}

// ---- shrinking ------------------------------------------------------------------------------

/** Flags as groups: a flag with its value, or a bare flag. */
function flagGroups(flags: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!;
    const next = flags[i + 1];
    if (f.includes('=') || next === undefined || next.startsWith('--')) out.push([f]);
    else {
      out.push([f, next]);
      i++;
    }
  }
  return out;
}

const OPTIONAL_SPEC_FIELDS = ['externalIPs', 'sessionAffinity', 'sessionAffinityConfig', 'trafficDistribution', 'loadBalancerSourceRanges', 'internalTrafficPolicy', 'externalTrafficPolicy', 'healthCheckNodePort', 'allocateLoadBalancerNodePorts'];

/** Smaller variants of a cluster, biggest cuts first. */
function* candidates(flags: string[], items: Item[]): Generator<{ flags: string[]; items: Item[] }> {
  const clone = (x: Item[]) => JSON.parse(JSON.stringify(x)) as Item[];
  // Whole Services with their endpoints, then single objects.
  const svcKey = (it: Item) => {
    const m = it.metadata as { name?: string; namespace?: string; labels?: Record<string, string> };
    if (it.kind === 'Service' || it.kind === 'Endpoints') return `${m.namespace}/${m.name}`;
    if (it.kind === 'EndpointSlice') return `${m.namespace}/${m.labels?.['kubernetes.io/service-name']}`;
    return undefined;
  };
  const keys = [...new Set(items.map(svcKey).filter((k): k is string => k !== undefined))];
  for (const k of keys) yield { flags, items: items.filter((it) => svcKey(it) !== k) };
  for (let i = 0; i < items.length; i++) yield { flags, items: items.filter((_, j) => j !== i) };
  const groups = flagGroups(flags);
  // (never the mode: without it both sides compile another mode, compared as this one)
  for (let i = 0; i < groups.length; i++) if (groups[i]![0] !== '--proxy-mode') yield { flags: groups.filter((_, j) => j !== i).flat(), items };
  // Endpoints: halves, then one at a time.
  for (let i = 0; i < items.length; i++) {
    const eps = items[i]!.endpoints as unknown[] | undefined;
    if (!eps || eps.length === 0) continue;
    if (eps.length > 3) {
      for (const half of [eps.slice(0, eps.length >> 1), eps.slice(eps.length >> 1)]) {
        const c = clone(items);
        c[i]!.endpoints = half;
        yield { flags, items: c };
      }
    }
    for (let e = 0; e < eps.length && eps.length <= 12; e++) {
      const c = clone(items);
      c[i]!.endpoints = eps.filter((_, j) => j !== e);
      yield { flags, items: c };
    }
  }
  // Optional Service fields, status, Node labels.
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    if (it.kind === 'Service') {
      const spec = it.spec as Record<string, unknown>;
      for (const f of OPTIONAL_SPEC_FIELDS) {
        if (!(f in spec)) continue;
        const c = clone(items);
        delete (c[i]!.spec as Record<string, unknown>)[f];
        yield { flags, items: c };
      }
      if (it.status) {
        const c = clone(items);
        delete c[i]!.status;
        yield { flags, items: c };
      }
      const ports = spec.ports as Item[];
      if (ports.length > 1) {
        for (let p = 0; p < ports.length; p++) {
          const c = clone(items);
          (c[i]!.spec as { ports: Item[] }).ports = ports.filter((_, j) => j !== p);
          yield { flags, items: c };
        }
      }
    }
  }
}

export interface Shrunk {
  config?: string;
  flags: string[];
  items: Item[];
  oracle: RunResult;
  detail: string;
  steps: number;
}

/** Greedy shrink: take any smaller variant on which kpc and the oracle still disagree the same way. */
export async function shrink(version: string, mode: Mode, flags: string[], items: Item[], config?: string, budget = 250): Promise<Shrunk> {
  let cur = { flags, items };
  let runs = await runBoth(version, mode, flags, items, config);
  let detail = compareRuns(mode, runs.kpc, runs.oracle);
  const sameKind = (r: { kpc: RunResult; oracle: RunResult }) => r.oracle.code === runs.oracle.code && r.kpc.code === runs.kpc.code;
  let steps = 0;
  let progress = true;
  while (progress && steps < budget) {
    progress = false;
    for (const cand of candidates(cur.flags, cur.items)) {
      if (steps++ >= budget) break;
      const r = await runBoth(version, mode, cand.flags, cand.items, config);
      const d = compareRuns(mode, r.kpc, r.oracle);
      if (d !== '' && sameKind(r)) {
        cur = cand;
        runs = r;
        detail = d;
        progress = true;
        break;
      }
    }
  }
  return { ...cur, ...(config ? { config } : {}), oracle: runs.oracle, detail, steps };
}

/** Writes a shrunk disagreement as a golden case (expected = the oracle's output). */
export function writeCase(root: string, version: string, mode: Mode, seed: number, s: Shrunk, oracleVersion: string): string {
  const dir = join(root, `${version}-${mode}-${seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'input'), { recursive: true });
  writeFileSync(join(dir, 'input', 'cluster.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: s.items }, null, 2) + '\n');
  const spec: Record<string, unknown> = {
    description: `oracle disagreement, kube-proxy ${oracleVersion} ${mode} mode, generated seed ${seed} (shrunk)`,
    source: `kube-proxy ${oracleVersion}'s own code: k8s.io/kubernetes@${oracleVersion} pkg/proxy/${mode} run by test/oracle (kpc-oracle-v${version}); seed ${seed} of test/oracle/runner/generate.ts`,
    // The oracle ran with the flags alone (it is one release); kpc is told the release.
    args: ['compile', '--kube-proxy-version', version, ...s.flags, ...(mode === 'nftables' ? ['--standalone'] : [])],
    // nftables: expected.dump is knftables' Fake Dump() of kube-proxy's sync, the form of
    // fixtures/kube-proxy/nftables (compare: dump, sortNFTablesTransaction); expected.listing
    // is the kernel's table in runner/nft.ts's canonical form, what this runner compared.
    ...(mode === 'nftables' ? { compare: 'dump' } : {}),
    exit: s.oracle.code === 4 ? 0 : s.oracle.code,
    notes: `Written by npm run oracle. kpc and the oracle disagreed: ${s.detail}\nExpected output = the oracle's (kube-proxy's), never kpc's. Shrunk in ${s.steps} runs.\n${mode === 'nftables' ? 'nftables: expected.dump = knftables\' Fake Dump() after kube-proxy\'s first full sync (compare in sortNFTablesTransaction form); expected.listing = `nft list table` of the kernel the real proxier programmed, in test/oracle/runner/nft.ts canonicalNftListing form (what the runner compares with kpc\'s --standalone output loaded into a fresh namespace); transaction.nft = the transaction kube-proxy sent (per-Service blocks in Go map order).\n' : ''}`,
  };
  writeFileSync(join(dir, 'case.yaml'), stringify(spec, { lineWidth: 0 }));
  if (s.config) writeFileSync(join(dir, 'config.yaml'), s.config);
  if (s.oracle.code === 0 || s.oracle.code === 4) {
    if (mode === 'ipvs') {
      mkdirSync(join(dir, 'expected'), { recursive: true });
      for (const f of BUNDLE_FILES) if (s.oracle.files?.[f] !== undefined) writeFileSync(join(dir, 'expected', f), s.oracle.files[f]!);
    } else if (mode === 'nftables') {
      // The kernel's table in the runner's canonical form (what is compared), kube-proxy's
      // transaction as sent, and knftables' Dump() of it (the unit tests' form).
      const l = s.oracle.files?.['kernel.listing'];
      if (l) writeFileSync(join(dir, 'expected.listing'), canonicalNftListing(l));
      for (const f of ['transaction.nft', 'expected.dump'] as const) if (s.oracle.files?.[f]) writeFileSync(join(dir, f), s.oracle.files[f]!);
    } else writeFileSync(join(dir, 'expected.out'), s.oracle.stdout);
  }
  return dir;
}

export const DEFAULT_CASE_ROOT = join(REPO_ROOT, 'fixtures', 'oracle');

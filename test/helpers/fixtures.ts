/**
 * The golden cases under fixtures/ (format: fixtures/README.md).
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';

export const FIXTURES_ROOT = join(import.meta.dirname, '..', '..', 'fixtures');

export interface GoldenCase {
  /** Path relative to fixtures/, e.g. kube-proxy/iptables/TestOverallIPTablesRules. */
  name: string;
  dir: string;
  description: string;
  args: string[];
  exit: number;
  chain?: { table: string; chain: string };
  expectedOut?: string;
  expectedErr?: string[];
  hasInput: boolean;
  hasConfig: boolean;
  /**
   * Bundle cases (`expected/` directory, e.g. ipvs mode with `-o DIR`): file name → expected
   * content, for the files present in `expected/` (absent files are not compared).
   */
  expectedFiles?: Record<string, string>;
  /**
   * nftables cases: the ruleset kube-proxy's unit test compares (knftables' fake Dump() form,
   * fixtures/kube-proxy/nftables/PROVENANCE.md); their runner compares in that form.
   */
  expectedDump?: string;
  /** nftables cases: `dump` (a full-ruleset assertion) or `checks` (piecewise, `checks`). */
  compare?: 'dump' | 'checks';
  /** nftables `checks:` ({chain, rules} or {contains, absent}), as case.yaml has them. */
  checks?: { chain?: string; rules?: string[]; contains?: string[]; absent?: string[] };
  /** nftables: the fresh full sync's Dump() where expected.dump depends on history. */
  freshDump?: string;
  /** nftables: kube-proxy's first full sync of the case's objects, as sent to nft. */
  transaction?: string;
}

export interface LoadOptions {
  /**
   * Include bundle cases (those with an `expected/` directory). Off by default: their runner is
   * test/ipvs/golden.test.ts, which compares every file of the bundle.
   */
  bundles?: boolean;
  /** Include nftables cases (those with an `expected.dump`); off by default, as for bundles. */
  nftables?: boolean;
}

function readExpectedDir(dir: string): Record<string, string> | undefined {
  const expectedDir = join(dir, 'expected');
  if (!existsSync(expectedDir) || !statSync(expectedDir).isDirectory()) return undefined;
  const files: Record<string, string> = {};
  for (const name of readdirSync(expectedDir).sort()) {
    const full = join(expectedDir, name);
    if (statSync(full).isFile()) files[name] = readFileSync(full, 'utf8');
  }
  return files;
}

function findCaseDirs(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = join(dir, entry);
    if (!statSync(full).isDirectory()) continue;
    if (existsSync(join(full, 'case.yaml'))) out.push(full);
    else out.push(...findCaseDirs(full));
  }
  return out;
}

export function loadGoldenCases(root = FIXTURES_ROOT, options: LoadOptions = {}): GoldenCase[] {
  const all = findCaseDirs(root).map((dir): GoldenCase => {
    const spec = parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as Record<string, unknown>;
    const chainText = spec.chain as string | undefined;
    const [table, chain] = chainText ? chainText.split('/') : [];
    const out = join(dir, 'expected.out');
    const err = join(dir, 'expected.err');
    const expectedFiles = readExpectedDir(dir);
    const dump = join(dir, 'expected.dump');
    return {
      name: relative(root, dir),
      dir,
      description: String(spec.description ?? ''),
      args: (spec.args as unknown[]).map(String),
      exit: typeof spec.exit === 'number' ? spec.exit : 0,
      ...(table && chain ? { chain: { table, chain } } : {}),
      ...(existsSync(out) ? { expectedOut: readFileSync(out, 'utf8') } : {}),
      ...(existsSync(err) ? { expectedErr: readFileSync(err, 'utf8').split('\n').filter((l) => l.trim() !== '') } : {}),
      hasInput: existsSync(join(dir, 'input')),
      hasConfig: existsSync(join(dir, 'config.yaml')),
      ...(expectedFiles ? { expectedFiles } : {}),
      ...(existsSync(dump) ? { expectedDump: readFileSync(dump, 'utf8') } : {}),
      ...(spec.compare === 'dump' || spec.compare === 'checks' ? { compare: spec.compare } : {}),
      ...(spec.checks && typeof spec.checks === 'object' ? { checks: spec.checks as GoldenCase['checks'] } : {}),
      ...(existsSync(join(dir, 'fresh.dump')) ? { freshDump: readFileSync(join(dir, 'fresh.dump'), 'utf8') } : {}),
      ...(existsSync(join(dir, 'transaction.nft')) ? { transaction: readFileSync(join(dir, 'transaction.nft'), 'utf8') } : {}),
    };
  });
  return all.filter((c) => (options.bundles || c.expectedFiles === undefined) && (options.nftables || c.expectedDump === undefined));
}

/**
 * Every nftables golden: kube-proxy's unit-test expectations (fixtures/kube-proxy/nftables,
 * named `v1.3X/<Test>`) and the feature cases recorded from kube-proxy's proxier by the oracle
 * (fixtures/features-nftables, named `features-nftables/<case>`).
 */
export function loadNftablesGoldenCases(): GoldenCase[] {
  const upstream = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true });
  const features = loadGoldenCases(join(FIXTURES_ROOT, 'features-nftables'), { nftables: true }).map((c) => ({ ...c, name: `features-nftables/${c.name}` }));
  return [...upstream, ...features].filter((c) => c.expectedDump !== undefined);
}

/** The full argv for a case: its args plus its input and config. */
export function caseArgv(c: GoldenCase, inputDir = join(c.dir, 'input')): string[] {
  const argv = [...c.args];
  if (c.hasInput) argv.push('-f', inputDir, '-R');
  if (c.hasConfig) argv.push('--config', join(c.dir, 'config.yaml'));
  return argv;
}

// ---------------------------------------------------------------------------------------------
// `kpc diff` / `kpc compile --previous` golden cases (fixtures/diff/, format: its README.md)
// ---------------------------------------------------------------------------------------------

export const DIFF_FIXTURES_ROOT = join(FIXTURES_ROOT, 'diff');

export interface DiffCase {
  /** Folder name under fixtures/diff/. */
  name: string;
  dir: string;
  description: string;
  /** kpc flags shared by diff and compile (no command, no -f, no --previous). */
  args: string[];
  /** Expected exit code of `kpc diff` (1 when the case shows a change). */
  exit: number;
  /** The previous state given as --previous (kpc's output or a node's iptables-save). */
  previousPath: string;
  /** Manifests of the new state (`-f input -R`). */
  inputDir: string;
  /** Expected `kpc diff` stdout (human view, no colour). */
  expectedText: string;
  /** Expected `kpc diff -o json` stdout. */
  expectedJSON: string;
  /** Expected `kpc compile --previous` stdout, when the case has one. */
  expectedDelta?: string;
  /** Set when kpc is known to print something else (the runner marks the case it.fails). */
  knownBug?: string;
}

/** Every folder under fixtures/diff/ that holds a diff.yaml. */
export function loadDiffCases(root = DIFF_FIXTURES_ROOT): DiffCase[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .sort()
    .map((entry) => join(root, entry))
    .filter((dir) => statSync(dir).isDirectory() && existsSync(join(dir, 'diff.yaml')))
    .map((dir): DiffCase => {
      const spec = parse(readFileSync(join(dir, 'diff.yaml'), 'utf8')) as Record<string, unknown>;
      const delta = join(dir, 'expected.delta');
      return {
        name: relative(root, dir),
        dir,
        description: String(spec.description ?? ''),
        args: ((spec.args as unknown[] | undefined) ?? []).map(String),
        exit: typeof spec.exit === 'number' ? spec.exit : 1,
        previousPath: join(dir, 'previous.txt'),
        inputDir: join(dir, 'input'),
        expectedText: readFileSync(join(dir, 'expected.txt'), 'utf8'),
        expectedJSON: readFileSync(join(dir, 'expected.json'), 'utf8'),
        ...(existsSync(delta) ? { expectedDelta: readFileSync(delta, 'utf8') } : {}),
        ...(typeof spec.knownBug === 'string' ? { knownBug: spec.knownBug } : {}),
      };
    });
}

/** Every iptables rules text under `dir` (kpc's expected outputs, kube-proxy's, saved node rules), by name. */
export function iptablesTexts(dir = FIXTURES_ROOT, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) iptablesTexts(p, out);
    else if (/\.(restore|save|out)$|iptables\.rules$/.test(name)) out.push(p);
  }
  return out;
}

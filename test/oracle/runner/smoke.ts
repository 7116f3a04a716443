/**
 * The oracle on kpc's golden cases (fixtures/features*, fixtures/kube-proxy/*): each case's
 * args, its input/ as one List JSON, its config.yaml; the oracle's output compared with the
 * case's expected output. A difference is either an oracle bug or a wrong expectation (a kpc
 * bug): the runner only reports.
 *   node dist/test/oracle/runner/smoke.js [--version 1.34] [SUITE_PREFIX...]
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { firstDifference, listJSON, pool, readObjects, REPO_ROOT, runOracle, writeTemp } from './common.js';

interface Case {
  name: string;
  dir: string;
  args: string[];
  exit: number;
  chain?: [string, string];
  expectedOut?: string;
  expectedFiles?: Record<string, string>;
}

function findCases(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir).sort()) {
    const full = join(dir, e);
    if (!statSync(full).isDirectory()) continue;
    if (existsSync(join(full, 'case.yaml'))) out.push(full);
    else out.push(...findCases(full));
  }
  return out;
}

export function loadCases(prefixes: readonly string[]): Case[] {
  const root = join(REPO_ROOT, 'fixtures');
  return findCases(root)
    .filter((d) => prefixes.length === 0 || prefixes.some((p) => relative(root, d).startsWith(p)))
    // nftables cases compare in knftables' dump form (their own runner); DNS cases are not kube-proxy's.
    .filter((d) => !existsSync(join(d, 'expected.dump')) && !existsSync(join(d, 'expected.zone')))
    .map((dir) => {
      const spec = parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as Record<string, unknown>;
      const c: Case = { name: relative(root, dir), dir, args: (spec.args as unknown[]).map(String), exit: typeof spec.exit === 'number' ? spec.exit : 0 };
      if (typeof spec.chain === 'string') c.chain = spec.chain.split('/') as [string, string];
      if (existsSync(join(dir, 'expected.out'))) c.expectedOut = readFileSync(join(dir, 'expected.out'), 'utf8');
      const ed = join(dir, 'expected');
      if (existsSync(ed)) {
        c.expectedFiles = {};
        for (const f of readdirSync(ed).sort()) c.expectedFiles[f] = readFileSync(join(ed, f), 'utf8');
      }
      return c;
    });
}

function chainRules(text: string, table: string, chain: string): string {
  let current = '';
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) current = line.slice(1);
    else if (current === table && line.startsWith(`-A ${chain} `)) out.push(line);
  }
  return out.map((l) => l + '\n').join('');
}

export interface SmokeResult {
  name: string;
  status: 'same' | 'differs' | 'skipped' | 'oracle-error';
  detail: string;
}

/**
 * Cases whose kube-proxy output depends on Go map order, so the oracle's answer varies from run
 * to run (kpc picks one of kube-proxy's possible outputs).
 */
export const NONDETERMINISTIC: Record<string, string> = {
  'features-ipvs/duplicate-virtual-server':
    'two Services on one external IP:port share a virtual server; which one\'s real servers it ends with depends on the order syncProxyRules visits svcPortMap (Go map order)',
};

export async function smokeCase(c: Case, version: string): Promise<SmokeResult> {
  if (c.name in NONDETERMINISTIC) return { name: c.name, status: 'skipped', detail: `kube-proxy is nondeterministic here: ${NONDETERMINISTIC[c.name]}` };
  if (c.exit !== 0) return { name: c.name, status: 'skipped', detail: `expects exit ${c.exit}` };
  if (c.args[0] !== 'compile') return { name: c.name, status: 'skipped', detail: `command ${c.args[0]}` };
  if (c.args.includes('--standalone') || c.args.includes('--previous')) return { name: c.name, status: 'skipped', detail: 'standalone/previous' };
  const input = existsSync(join(c.dir, 'input')) ? readObjects([join(c.dir, 'input')]) : [];
  const tmp = writeTemp('list.json', listJSON(input));
  try {
    const argv = [...c.args, '-f', tmp.path];
    if (existsSync(join(c.dir, 'config.yaml'))) argv.push('--config', join(c.dir, 'config.yaml'));
    const bundle = c.expectedFiles !== undefined;
    const r = await runOracle(version, argv, bundle);
    if (r.code !== 0) return { name: c.name, status: 'oracle-error', detail: `exit ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}` };
    const diffs: string[] = [];
    if (bundle) {
      for (const [f, want] of Object.entries(c.expectedFiles!)) {
        if (f === 'apply.sh') continue; // kpc's own apply script, not kube-proxy's
        const got = r.files?.[f];
        if (got === undefined) diffs.push(`${f}: not written by the oracle`);
        else if (got !== want) diffs.push(`${f}: ${firstDifference(got, want).replace('/ kpc', '/ expected')}`);
      }
    } else {
      const got = c.chain ? chainRules(r.stdout, c.chain[0], c.chain[1]) : r.stdout;
      if (got !== c.expectedOut) diffs.push(firstDifference(got, c.expectedOut ?? '').replace('/ kpc', '/ expected'));
    }
    return diffs.length ? { name: c.name, status: 'differs', detail: diffs.join('; ') } : { name: c.name, status: 'same', detail: '' };
  } finally {
    tmp.cleanup();
  }
}

async function mainSmoke(argv: string[]): Promise<number> {
  let version = '1.34';
  const prefixes: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--version') version = argv[++i]!;
    else prefixes.push(argv[i]!);
  }
  const cases = loadCases(prefixes.length ? prefixes : ['features', 'features-ipvs', 'kube-proxy']);
  const results = await pool(cases, 2, (c) => smokeCase(c, version));
  const count = (s: string) => results.filter((r) => r.status === s).length;
  for (const r of results) if (r.status !== 'same') console.log(`${r.status.padEnd(12)} ${r.name}${r.detail ? `: ${r.detail}` : ''}`);
  console.log(`smoke v${version}: ${count('same')} same, ${count('differs')} differ, ${count('oracle-error')} oracle errors, ${count('skipped')} skipped, of ${results.length}`);
  return count('differs') + count('oracle-error') === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  mainSmoke(process.argv.slice(2)).then((c) => process.exit(c));
}

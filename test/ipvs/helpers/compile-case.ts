/**
 * Compile one bundle case (fixtures/README.md, "Bundle cases") to its files, by the most
 * complete path available:
 *
 *   1. cli       `kpc <args> -f input -R -o TMP` in-process (once compile handles --proxy-mode ipvs);
 *   2. pipeline  src/cli/pipeline.ts compileInput (kpc's real reader) + emitIpvs;
 *   3. local     test/ipvs/helpers/manifests.ts + resolveSettings/contextFor/buildIR + emitIpvs.
 *
 * A path is skipped only when it is not there yet (its modules do not load, or compile says
 * ipvs is not implemented); any other failure is reported. `via` says which path ran.
 */

import { PROXY_MODES } from '../../../src/modes/index.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { parse as parseYaml } from 'yaml';
import { addInputOptions, addKnobOptions, addNodeOptions } from '../../../src/cli/options.js';
import { resolveSettings } from '../../../src/config/settings.js';
import type { KnobFlags } from '../../../src/config/flags.js';
import { configOf } from '../../../src/cli/pipeline.js';
import { bundleFiles } from '../../../src/emit/ipvs/index.js';
import { buildIR } from '../../../src/ir/build.js';
import { contextFor } from '../../../src/ir/context.js';
import type { ProxyIR } from '../../../src/ir/model.js';
import type { IPFamily } from '../../../src/net/ip.js';
import { caseArgv, type GoldenCase } from '../../helpers/fixtures.js';
import { readManifests } from './manifests.js';

export type Via = 'cli' | 'pipeline' | 'local';

export interface BundleRun {
  via: Via;
  files: Record<string, string>;
  /** Why earlier paths were skipped. */
  skipped: string[];
}

export interface CaseFlags extends KnobFlags {
  standalone?: boolean;
  ipFamily?: string;
  output?: string;
  [key: string]: unknown;
}

/** The compile flags of a case's args (without `compile`), as commander gives them to kpc. */
export function parseCaseFlags(args: readonly string[]): CaseFlags {
  const cmd = new Command();
  addInputOptions(cmd);
  addNodeOptions(cmd);
  addKnobOptions(cmd, PROXY_MODES);
  cmd.option('--standalone').option('--ip-family <family>').option('-o, --output <path>');
  cmd.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  const rest = args[0] === 'compile' ? args.slice(1) : [...args];
  try {
    cmd.parse(rest, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) throw new Error(`bad case args ${JSON.stringify(rest)}: ${e.message}`);
    throw e;
  }
  return cmd.opts() as CaseFlags;
}

function familyOf(flags: CaseFlags): IPFamily {
  return flags.ipFamily === 'ipv6' ? 'IPv6' : 'IPv4';
}

function readDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = readFileSync(join(dir, name), 'utf8');
  return out;
}

function filesOf(ir: ProxyIR, flags: CaseFlags): Record<string, string> {
  return Object.fromEntries(bundleFiles(ir, { standalone: flags.standalone ?? false }).map((f) => [f.name, f.content]));
}

/** The IR of a case by the local path (no kpc reader involved). */
export function localIR(c: GoldenCase): ProxyIR {
  const flags = parseCaseFlags(c.args);
  const config = configOf(flags, c.hasConfig ? parseYaml(readFileSync(join(c.dir, 'config.yaml'), 'utf8')) : undefined);
  const m = c.hasInput ? readManifests(join(c.dir, 'input')) : { services: [], slices: [], nodes: [] };
  const settings = resolveSettings(config, flags, m.nodes);
  return buildIR({ services: m.services, slices: m.slices }, contextFor(settings.proxy, familyOf(flags)));
}

async function viaCli(c: GoldenCase, inputDir?: string): Promise<Record<string, string> | string> {
  let runKpc: typeof import('../../helpers/run-kpc.js').runKpc;
  try {
    ({ runKpc } = await import('../../helpers/run-kpc.js'));
  } catch (e) {
    return `cli: kpc's CLI does not load yet (${(e as Error).message.split('\n')[0]})`;
  }
  // -o DIR makes DIR a link to a hidden sibling directory (src/cli/write/bundle.ts): both live
  // inside this run's own temporary directory, removed whole.
  const root = mkdtempSync(join(tmpdir(), 'kpc-ipvs-case-'));
  const out = join(root, 'bundle');
  try {
    const run = await runKpc([...caseArgv(c, inputDir), '-o', out]);
    if (run.code !== 0 && /ipvs is not implemented|not implemented yet/.test(run.stderr)) return 'cli: compile does not handle --proxy-mode ipvs yet';
    if (run.code !== 0) throw new Error(`kpc exited ${run.code}:\n${run.stderr}`);
    return readDir(out);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function viaPipeline(c: GoldenCase, inputDir?: string): Promise<Record<string, string> | string> {
  let compileInput: typeof import('../../../src/cli/pipeline.js').compileInput;
  try {
    ({ compileInput } = await import('../../../src/cli/pipeline.js'));
  } catch (e) {
    return `pipeline: kpc's reader does not load yet (${(e as Error).message.split('\n')[0]})`;
  }
  const flags = parseCaseFlags(caseArgv(c, inputDir));
  const compiled = compileInput(flags as Parameters<typeof compileInput>[0], () => new Uint8Array());
  return filesOf(compiled.ir, flags);
}

/** The IR of a case: kpc's reader when it loads, else the local stand-in. */
export async function compileCaseIR(c: GoldenCase): Promise<ProxyIR> {
  try {
    const { compileInput } = await import('../../../src/cli/pipeline.js');
    const flags = parseCaseFlags(caseArgv(c));
    return compileInput(flags as Parameters<typeof compileInput>[0], () => new Uint8Array()).ir;
  } catch (e) {
    if (!(e instanceof Error) || !/Cannot find module|Failed to load|does not provide an export/.test(e.message)) throw e;
    return localIR(c);
  }
}

/**
 * The bundle of a case. `inputDir` replaces the case's input/ (same objects, other layout);
 * the local path ignores it.
 */
export async function compileBundleCase(c: GoldenCase, inputDir?: string): Promise<BundleRun> {
  const skipped: string[] = [];
  const cli = await viaCli(c, inputDir);
  if (typeof cli !== 'string') return { via: 'cli', files: cli, skipped };
  skipped.push(cli);
  const pipeline = await viaPipeline(c, inputDir);
  if (typeof pipeline !== 'string') return { via: 'pipeline', files: pipeline, skipped };
  skipped.push(pipeline);
  return { via: 'local', files: filesOf(localIR(c), parseCaseFlags(c.args)), skipped };
}

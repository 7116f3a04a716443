/**
 * harness.ts — shared by the test/diff/iptables suites: compiling states with kpc (in process), loading
 * them into network namespaces, and comparing two namespaces' iptables-save.
 *
 * The kernel check of a delta (`checkSequence`):
 *
 *   incremental namespaces   plain `iptables-restore` of state 0 (+ foreign rules), then for each
 *                            next state `kpc compile --previous P` applied with
 *                            `iptables-restore --noflush`; one namespace per way of giving P:
 *                              kpc   P = kpc's full output of the previous state
 *                              node  P = the namespace's own iptables-save (what a node has)
 *                              full  P = kpc's text, with --full (every chain whole)
 *   fresh namespace          plain `iptables-restore` of the next state's full output
 *                            (+ the same foreign rules), for every state
 *
 * After each step every incremental namespace's iptables-save must equal the fresh one's, chain
 * by chain in both tables (built-in, kube-proxy's and foreign chains), compared twice:
 *   - canonically (src/diff/state.ts readState: the comparison kpc itself uses), and
 *   - as raw text (each chain's policy and its `-A` lines exactly as iptables-save prints them),
 *     which does not depend on kpc's canonical form at all: both sides come from iptables-save.
 * A step where the canonical forms agree but the raw text does not is a false equality in
 * src/diff/canonical.ts; the reverse is a false difference.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import * as diffState from '../../../src/diff/iptables/state.js';
import type { IptablesState } from '../../../src/diff/iptables/state.js';
import { describeFailure, nfacctNames, nsExec, withNetnsGroup, type IpFamily } from '../../netns/lab.js';
import { runKpc } from '../../helpers/run-kpc.js';

// ---------------------------------------------------------------------------------------------
// Temporary files
// ---------------------------------------------------------------------------------------------

let tmpRoot: string | undefined;
let tmpCounter = 0;

/** A fresh directory under one per-process temp root (removed by `cleanupTmp`). */
export function tmpDir(label: string): string {
  tmpRoot ??= mkdtempSync(join(tmpdir(), 'kpc-delta-'));
  const dir = join(tmpRoot, `${tmpCounter++}-${label.replace(/[^a-z0-9-]/gi, '_').slice(0, 40)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function cleanupTmp(): void {
  if (tmpRoot && !process.env.KPC_DELTA_KEEP) rmSync(tmpRoot, { recursive: true, force: true });
  else if (tmpRoot) console.warn(`delta: temporary files kept in ${tmpRoot}`);
  tmpRoot = undefined;
}

/** Writes the objects as one multi-document YAML file; returns its path. */
export function writeManifests(objects: readonly unknown[], label = 'manifests'): string {
  const dir = tmpDir(label);
  const path = join(dir, 'manifests.yaml');
  writeFileSync(path, objects.map((o) => `---\n${stringify(o)}`).join(''));
  return path;
}

export function writeText(text: string, label: string, name = 'rules.txt'): string {
  const path = join(tmpDir(label), name);
  writeFileSync(path, text);
  return path;
}

// ---------------------------------------------------------------------------------------------
// kpc
// ---------------------------------------------------------------------------------------------

/** Runs kpc in process; throws with its stderr unless it exits `expectCode` (default 0). */
export async function kpc(args: readonly string[], expectCode = 0): Promise<string> {
  const r = await runKpc(args);
  if (r.code !== expectCode) throw new Error(`kpc ${args.join(' ')} exited ${r.code} (expected ${expectCode})\n${r.stderr}`);
  return r.stdout;
}

/** A state to compile: manifests (file or directory) and the node/flag arguments. */
export interface StateSpec {
  label: string;
  /** Manifest file or directory (given as `-f PATH -R`). */
  input: string;
  /** Everything after `compile` except -f (node flags, knobs). */
  args: readonly string[];
}

export function compileFull(s: StateSpec, standalone = true): Promise<string> {
  return kpc(['compile', ...s.args, ...(standalone ? ['--standalone'] : []), '-f', s.input, '-R']);
}

export function compileDelta(s: StateSpec, previousPath: string, full = false): Promise<string> {
  return kpc(['compile', ...s.args, '-f', s.input, '-R', '--previous', previousPath, ...(full ? ['--full'] : [])]);
}

export function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').filter((l) => l !== '').length;
}

// ---------------------------------------------------------------------------------------------
// Comparing two iptables-save texts
// ---------------------------------------------------------------------------------------------

const TABLES = ['filter', 'nat'] as const;

function canonicalDifferences(got: IptablesState, want: IptablesState): string[] {
  const out: string[] = [];
  for (const table of TABLES) {
    const g = got.get(table) ?? new Map();
    const w = want.get(table) ?? new Map();
    const names = [...new Set([...g.keys(), ...w.keys()])].sort();
    for (const name of names) {
      const a = g.get(name);
      const b = w.get(name);
      if (!a) {
        out.push(`${table}/${name}: missing (want ${b!.rules.length} rule(s))`);
        continue;
      }
      if (!b) {
        out.push(`${table}/${name}: should not exist (has ${a.rules.length} rule(s))`);
        continue;
      }
      const ka = a.rules.map((r) => r.key);
      const kb = b.rules.map((r) => r.key);
      if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) {
        const extra = ka.filter((k) => !kb.includes(k));
        const missing = kb.filter((k) => !ka.includes(k));
        out.push(
          `${table}/${name}: rules differ (${ka.length} vs ${kb.length})` +
            (extra.length ? `\n    extra: ${extra.slice(0, 5).join('\n           ')}` : '') +
            (missing.length ? `\n    missing: ${missing.slice(0, 5).join('\n             ')}` : '') +
            (!extra.length && !missing.length ? '\n    (same rules, different order)' : ''),
        );
      }
    }
  }
  return out;
}

/** table → chain → [policy line, -A lines...], exactly as iptables-save printed them. */
export function rawChains(saveText: string): Map<string, Map<string, string[]>> {
  const tables = new Map<string, Map<string, string[]>>();
  let chains: Map<string, string[]> | undefined;
  for (const raw of saveText.split('\n')) {
    const line = raw.replace(/^\[\d+:\d+\]\s+/, '');
    if (line.startsWith('*')) {
      chains = new Map();
      tables.set(line.slice(1), chains);
    } else if (!chains || line === '' || line.startsWith('#') || line === 'COMMIT') {
      continue;
    } else if (line.startsWith(':')) {
      const [name, policy] = line.slice(1).split(/\s+/);
      chains.set(name!, [`policy ${policy}`]);
    } else if (line.startsWith('-A ')) {
      const name = line.split(/\s+/)[1]!;
      (chains.get(name) ?? chains.set(name, []).get(name)!).push(line);
    } else {
      chains.set(`?${line}`, [line]);
    }
  }
  return tables;
}

function rawDifferences(got: string, want: string): string[] {
  const g = rawChains(got);
  const w = rawChains(want);
  const out: string[] = [];
  // Every table iptables-save printed (mangle and raw too: kpc must not touch them either).
  for (const table of [...new Set([...g.keys(), ...w.keys()])].sort()) {
    const gc = g.get(table) ?? new Map<string, string[]>();
    const wc = w.get(table) ?? new Map<string, string[]>();
    for (const name of [...new Set([...gc.keys(), ...wc.keys()])].sort()) {
      const a = (gc.get(name) ?? []).join('\n');
      const b = (wc.get(name) ?? []).join('\n');
      if (a !== b) out.push(`${table}/${name} (raw iptables-save text differs)`);
    }
  }
  return out;
}

/**
 * src/diff/state.ts readState for a family. (Its signature moved from `(text, family)` to
 * `(text, new RuleFacts(family))` while these tests were written; both are accepted.)
 */
export function readStateOf(text: string, family: 'IPv4' | 'IPv6'): IptablesState {
  const m = diffState as unknown as { readState: (t: string, x: unknown) => IptablesState; RuleFacts?: new (f: string) => unknown };
  return m.RuleFacts ? m.readState(text, new m.RuleFacts(family)) : m.readState(text, family);
}

export interface Comparison {
  /** Canonical differences (readState of both sides). */
  canonical: string[];
  /** Chains whose raw iptables-save text differs. */
  raw: string[];
}

export function compareSaves(got: string, want: string, family: IpFamily): Comparison {
  const fam = family === 'ipv6' ? 'IPv6' : 'IPv4';
  return { canonical: canonicalDifferences(readStateOf(got, fam), readStateOf(want, fam)), raw: rawDifferences(got, want) };
}

// ---------------------------------------------------------------------------------------------
// Namespaces
// ---------------------------------------------------------------------------------------------

/**
 * Creates the nfacct objects `text` names. (lab.ts prepareNfacct refuses `nfacct add` of an
 * object that rules already use: the kernel answers EBUSY, not EEXIST, on a second load.)
 */
async function nfacctObjects(ns: string, text: string): Promise<void> {
  for (const name of nfacctNames(text)) {
    const r = await nsExec(ns, ['nfacct', 'add', name]);
    if (r.code !== 0 && !/exists|busy/i.test(r.stderr)) throw new Error(describeFailure(`nfacct add ${name}`, r));
  }
}

export async function load(ns: string, text: string, family: IpFamily, noflush: boolean, what: string, timeoutMs = 20_000): Promise<void> {
  await nfacctObjects(ns, text);
  const r = await nsExec(ns, [family === 'ipv6' ? 'ip6tables-restore' : 'iptables-restore', ...(noflush ? ['--noflush'] : [])], { input: text, timeoutMs });
  if (r.code !== 0) throw new LoadError(describeFailure(`${family === 'ipv6' ? 'ip6tables' : 'iptables'}-restore${noflush ? ' --noflush' : ''} of ${what}`, r), text);
}

export class LoadError extends Error {
  constructor(
    message: string,
    readonly text: string,
  ) {
    super(message);
    this.name = 'LoadError';
  }
}

export async function save(ns: string, family: IpFamily, timeoutMs = 10_000): Promise<string> {
  const r = await nsExec(ns, [family === 'ipv6' ? 'ip6tables-save' : 'iptables-save'], { timeoutMs });
  if (r.code !== 0) throw new Error(describeFailure('iptables-save', r));
  return r.stdout;
}

// ---------------------------------------------------------------------------------------------
// The sequence check
// ---------------------------------------------------------------------------------------------

export type PreviousMode = 'kpc' | 'node' | 'full';

export interface SequenceOptions {
  family?: IpFamily;
  /** Restore text (for --noflush) of another component's chains, loaded after each base load. */
  foreign?: string;
  /** Which incremental namespaces to keep (default all three). */
  modes?: readonly PreviousMode[];
  /**
   * kube-proxy's own --noflush texts for steps 1.. (TestSyncProxyRulesRepeated's
   * expected-partial.out): applied in one more namespace, which must end in the same state.
   */
  kubeProxyPartials?: readonly string[];
}

export interface StepResult {
  /** `from → to` */
  step: string;
  /** The delta text per mode. */
  deltas: Partial<Record<PreviousMode, string>>;
  /** Problems, per namespace (empty = every namespace equals the fresh load). */
  problems: string[];
}

export interface SequenceResult {
  steps: StepResult[];
  problems: string[];
  /** A readable account for assertion messages. */
  report: string;
}

/**
 * Walks states[0] → states[1] → ... in incremental namespaces and compares each step with a
 * fresh load (see the file header). Returns problems instead of throwing for a wrong state, so
 * that a test can also show the check can fail.
 */
export async function checkSequence(states: readonly StateSpec[], opts: SequenceOptions = {}): Promise<SequenceResult> {
  const family = opts.family ?? 'ipv4';
  const modes = opts.modes ?? (['kpc', 'node', 'full'] as const);
  const kp = opts.kubeProxyPartials;
  const count = modes.length + 1 + (kp ? 1 : 0);
  return withNetnsGroup('delta', count, async (namespaces) => {
    const freshNs = namespaces[0]!;
    const incNs = new Map(modes.map((m, i) => [m, namespaces[i + 1]!]));
    const kpNs = kp ? namespaces[modes.length + 1]! : undefined;
    const steps: StepResult[] = [];
    const problems: string[] = [];

    let fullText = await compileFull(states[0]!);
    const loadBase = async (ns: string, text: string, what: string) => {
      // A plain restore flushes only the tables it names: empty mangle and raw as well, so the
      // foreign rules there are not loaded twice into the reused fresh namespace.
      await load(ns, '*mangle\nCOMMIT\n*raw\nCOMMIT\n', family, false, 'empty mangle and raw tables');
      await load(ns, text, family, false, what);
      if (opts.foreign !== undefined) await load(ns, opts.foreign, family, true, 'the foreign rules');
    };
    for (const ns of incNs.values()) await loadBase(ns, fullText, `${states[0]!.label} (full)`);
    if (kpNs) await loadBase(kpNs, fullText, `${states[0]!.label} (full)`);

    for (let i = 1; i < states.length; i++) {
      const s = states[i]!;
      const step: StepResult = { step: `${states[i - 1]!.label} → ${s.label}`, deltas: {}, problems: [] };
      const prevPath = writeText(fullText, `prev-${i}`, 'previous.txt');
      const nextFull = await compileFull(s);
      await loadBase(freshNs, nextFull, `${s.label} (fresh)`);
      const want = await save(freshNs, family);
      const check = async (name: string, ns: string) => {
        const got = await save(ns, family);
        const c = compareSaves(got, want, family);
        for (const d of c.canonical) step.problems.push(`[${name}] ${d}`);
        if (c.canonical.length === 0 && c.raw.length > 0) {
          for (const d of c.raw) step.problems.push(`[${name}] canonically equal, but ${d}: a false equality in canonical.ts`);
        }
      };
      for (const [mode, ns] of incNs) {
        let previous = prevPath;
        if (mode === 'node') previous = writeText(await save(ns, family), `node-${i}`, 'iptables-save.txt');
        const delta = await compileDelta(s, previous, mode === 'full');
        step.deltas[mode] = delta;
        try {
          if (delta !== '') await load(ns, delta, family, true, `the ${mode} delta`);
        } catch (e) {
          step.problems.push(`[${mode}] the delta does not load: ${(e as Error).message}\n--- delta ---\n${delta}`);
          continue;
        }
        await check(mode, ns);
      }
      if (kpNs && kp) {
        const partial = kp[i - 1]!;
        await load(kpNs, partial, family, true, `kube-proxy's partial text for ${s.label}`);
        await check('kube-proxy partial', kpNs);
      }
      steps.push(step);
      problems.push(...step.problems.map((p) => `${step.step}: ${p}`));
      fullText = nextFull;
    }
    const report = steps
      .map(
        (st) =>
          `${st.step}: ` +
          Object.entries(st.deltas)
            .map(([m, d]) => `${m} ${lineCount(d!)} lines`)
            .join(', ') +
          (st.problems.length ? `\n  ${st.problems.join('\n  ')}` : '') +
          (st.problems.length ? `\n  --- kpc delta ---\n${st.deltas.kpc ?? st.deltas.node ?? ''}` : ''),
      )
      .join('\n');
    return { steps, problems, report };
  });
}

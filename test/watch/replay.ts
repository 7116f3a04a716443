/**
 * The replay of test/watch/events.json, done twice and independently:
 *   - kpc watch (bin/kpc.js, one process) reads the whole stream and prints its framed steps;
 *   - this file keeps its own object set from the same stream (JSON.parse per event, its own
 *     rules for ADDED/MODIFIED/DELETED/bare objects) and, after each event, asks kpc compile
 *     (bin/kpc.js, a process per step) for `--previous <the previous full output> -f <objects>`
 *     and for the new full output.
 * The suites then compare the two, and load both into namespaces.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const KPC = join(ROOT, 'bin', 'kpc.js');
export const EVENTS = join(import.meta.dirname, 'events.json');

export const NODE_FLAGS = ['--hostname-override', 'node-a', '--node-ip', '192.168.50.10', '--cluster-cidr', '10.244.0.0/16'];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function kpc(args: readonly string[]): Run {
  const r = spawnSync(process.execPath, [KPC, ...args], { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The stream's events as this test reads them: kubectl starts each with `{` at a line start. */
export function splitStream(text: string): string[] {
  return text.split(/\n(?=\{)/).map((t) => t.trim()).filter((t) => t !== '');
}

/** One step of kpc watch's stdout. */
export type WatchStep = { kind: 'delta'; label: string; text: string } | { kind: 'no change'; label: string } | { kind: 'rejected' };

/** kpc watch's stdout cut at its framing lines (see src/cli/commands/watch.ts). */
export function parseSteps(stdout: string): Map<number, WatchStep> {
  const steps = new Map<number, WatchStep>();
  const lines = stdout.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    let m = /^# kpc watch: event (\d+) rejected$/.exec(line);
    if (m) {
      steps.set(Number(m[1]), { kind: 'rejected' });
      continue;
    }
    m = /^# kpc watch: event (\d+) (.*): no change$/.exec(line);
    if (m) {
      steps.set(Number(m[1]), { kind: 'no change', label: m[2]! });
      continue;
    }
    m = /^# kpc watch: event (\d+) (.*)$/.exec(line);
    if (!m) throw new Error(`line ${i + 1} of kpc watch's output is outside any step: ${line}`);
    const n = Number(m[1]);
    const end = lines.indexOf(`# kpc watch: end of event ${n}`, i + 1);
    if (end < 0) throw new Error(`step ${n} has no end line`);
    steps.set(n, { kind: 'delta', label: m[2]!, text: lines.slice(i + 1, end).map((l) => `${l}\n`).join('') });
    i = end;
  }
  return steps;
}

/** What compile says for one step of the test's own replay. */
export interface ExpectedStep {
  n: number;
  /** The event's own words: type, kind, namespace/name (as the watch header should say). */
  label?: string;
  /** The test's verdict: the event must be rejected (malformed, invalid, ERROR, or refused). */
  rejected: boolean;
  /** Why, when rejected: compile's own refusal of the same objects, when there is one. */
  compileRefusal?: Run;
  /** compile --previous <previous full> -f <objects>. */
  delta?: string;
  /** compile -f <objects>: the full output after the step (and the previous one's). */
  full?: string;
  previousFull?: string;
  bookmark?: boolean;
}

export type Obj = { kind: string; metadata: { name: string; namespace?: string } };
const keyOf = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * The test's own replay: for each event the expected step, from kpc compile alone. `modeFlags`
 * are the flags both sides get (e.g. --proxy-mode nftables); `fullFlags` only the full output
 * (which the watch's first step is: with --standalone both).
 */
export interface ReplayOptions {
  /** The stream (default test/watch/events.json). */
  events?: string;
  /** The watch's initial objects (-f), as a list of objects; default none. */
  initial?: Obj[];
  /** How compile is run (default bin/kpc.js in a process). */
  run?: (args: readonly string[]) => Run | Promise<Run>;
  /** Extra flags for every command (both sides). */
  nodeFlags?: readonly string[];
}

export async function expectedSteps(modeFlags: readonly string[], opts: ReplayOptions = {}): Promise<{ initial: string; steps: ExpectedStep[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'kpc-watch-'));
  const run = opts.run ?? kpc;
  const nodeFlags = opts.nodeFlags ?? NODE_FLAGS;
  try {
    const objects = new Map<string, Obj>();
    for (const o of opts.initial ?? []) objects.set(keyOf(o), o);
    const write = (m: Map<string, Obj>, label: string) => {
      const path = join(dir, `${label}.json`);
      writeFileSync(path, [...m.values()].map((o) => JSON.stringify(o)).join('\n') + '\n');
      return path;
    };
    const full = async (path: string, extra: string[] = []) => {
      const r = await run(['compile', ...modeFlags, ...nodeFlags, ...extra, '-f', path]);
      if (r.code !== 0) throw new Error(`kpc compile -f ${path}: exit ${r.code}\n${r.stderr}`);
      return r.stdout;
    };
    // The watch starts with the initial objects, or none: compile of an empty input (--allow-empty says so).
    const initial = objects.size > 0 ? await full(write(objects, 'initial')) : (writeFileSync(join(dir, 'empty.json'), ''), await full(join(dir, 'empty.json'), ['--allow-empty']));
    let previousFull = initial;
    const steps: ExpectedStep[] = [];
    const texts = splitStream(readFileSync(opts.events ?? EVENTS, 'utf8'));
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i]!;
      const n = i + 1;
      let event: { type?: string; object?: Obj; kind?: string };
      try {
        event = JSON.parse(text);
      } catch {
        steps.push({ n, rejected: true });
        continue;
      }
      if (event.type === 'BOOKMARK') {
        steps.push({ n, rejected: false, bookmark: true });
        continue;
      }
      if (event.type === 'ERROR') {
        steps.push({ n, rejected: true });
        continue;
      }
      const object = (event.kind !== undefined ? event : event.object) as Obj;
      const key = keyOf(object);
      const type = event.kind !== undefined ? (objects.has(key) ? 'MODIFIED' : 'ADDED') : event.type!;
      const ns = object.metadata.namespace ? `${object.metadata.namespace}/` : '';
      const label = `${type} ${object.kind} ${ns}${object.metadata.name}`;
      const next = new Map(objects);
      if (type === 'DELETED') next.delete(key);
      else next.set(key, object);
      const path = write(next, `step-${n}`);
      const previousPath = join(dir, `full-${n - 1}.txt`);
      writeFileSync(previousPath, previousFull);
      const delta = await run(['compile', ...modeFlags, ...nodeFlags, '-f', path, '--previous', previousPath]);
      if (delta.code !== 0) {
        steps.push({ n, label, rejected: true, compileRefusal: delta });
        continue;
      }
      const now = await full(path);
      steps.push({ n, label, rejected: false, delta: delta.stdout, full: now, previousFull });
      objects.clear();
      for (const [k, v] of next) objects.set(k, v);
      previousFull = now;
    }
    return { initial, steps };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

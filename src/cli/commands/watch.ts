/**
 * `kpc watch` (also `kpc compile --watch`): the compiled state kept in memory, and per change
 * the delta for `iptables-restore --noflush` / `nft -f` / the IPVS commands — byte for byte
 * what `kpc compile --previous <previous full output> -f <objects now>` prints (same flags).
 *
 * Changes come from --events (kubectl's watch output, `-` for stdin, read as it arrives; one
 * stream per resource type, as kubectl watches: cli/watch-streams.ts) or,
 * with --watch-files or without --events, from the -f files, polled and re-read when they
 * change (their new object set diffed into one step).
 *
 * Framing on stdout: each step is
 *   # kpc watch: event N TYPE Kind namespace/name     (the first step: "# kpc watch: initial ...")
 *   <the delta, as compile --previous prints it>
 *   # kpc watch: end of event N
 * A change that changes nothing is one line, `# kpc watch: event N TYPE Kind ns/name: no change`;
 * a rejected event is one line, `# kpc watch: event N rejected`, its problems on stderr. `#`
 * lines are comments to iptables-restore, nft -f and sh. With -o DIR each delta goes into its
 * own file DIR/NNNNNNNN.{rules,nft,sh} (N = the step, 0 the first), written atomically.
 */

import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Option } from 'commander';
import { EXIT, isKpcError, KpcError, usageError } from '../../errors.js';
import { explainWriteErrors, writeOutputFile, type Io } from '../io.js';
import { backendFor, PROXY_MODES } from '../../modes/index.js';
import type { CommandSpec } from '../command-spec.js';
import { printDiagnostics, reportCompiled, reportNotes, reportWarnings } from '../report.js';
import { checkStdinUse, compileObjects, decodeOptionsOf, loadConfig, loadInput, mirroredSlices, nodeDependence, parseMaxInputSize, releaseOf, type CommonFlags, type Loaded } from '../pipeline.js';
import { readEvent, type EventPiece } from '../../parser/watch-events.js';
import { readStreams, sleep } from '../watch-streams.js';
import type { LoadedObject } from '../../parser/load.js';
import { loadObjects } from '../../parser/load.js';
import { expandPaths } from '../../parser/input-files.js';
import { objectKey, WatchEngine, type Change } from '../../watch/engine.js';
import { bareComment } from '../../lang/iptables/safe-text.js';
import { buildIR } from '../../ir/build.js';
import type { KubeObject } from '../../parser/k8s/types.js';

export interface WatchFlags extends CommonFlags {
  standalone?: boolean;
  output?: string;
  previous?: string;
  full?: boolean;
  ipvsRemovedRealServers?: string;
  /** --events, repeatable: kubectl watches one resource type per stream. */
  events?: string[];
  watchFiles?: boolean;
  /** --poll-interval, milliseconds between looks at the -f files. */
  pollInterval?: string;
}

/** A full garbage collection, once, between the first step and the events (V8's gc(), exposed for it). */
function collectGarbage(): void {
  try {
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
  } catch {
    // Only latency depends on it.
  }
}

const EXTENSION = { iptables: 'rules', nftables: 'nft', ipvs: 'sh' } as const;

/** `Service shop/web`, `Node node-a`: from a validated object, and guarded again for the comment. */
function describe(o: KubeObject): string {
  const ns = o.metadata.namespace ? `${o.metadata.namespace}/` : '';
  return `${o.kind} ${bareComment(`${ns}${o.metadata.name}`)}`;
}

export function runWatch(flags: WatchFlags, io: Io): number {
  checkStdinUse(flags);
  const events = flags.events ?? [];
  const paths = flags.filename ?? [];
  const watchFiles = flags.watchFiles === true || flags.events === undefined;
  if (watchFiles && flags.events !== undefined) throw usageError('--watch-files and --events: give one source of changes (kpc watch reads either the event stream or the -f files)');
  if (watchFiles && paths.length === 0) throw usageError('no input: give --events PATH|- (a kubectl --watch stream), or -f FILE|DIR to watch');
  if (watchFiles && paths.includes('-')) throw usageError('-f -: standard input cannot be watched for changes; use --events - for a stream');
  const maxBytes = parseMaxInputSize(flags.maxInputSize);
  // The files as they are before they are read: a change made while (or right after) they are
  // read is then seen at the first look.
  const filesSeen = watchFiles ? signature(paths, flags.recursive ?? false) : '';
  const { config, warnings: configWarnings } = loadConfig(flags.config, flags, io.readStdin, maxBytes);
  // `let`, and let go once the first step is out: the objects as loaded carry their origins
  // (the text of the -f files), and nothing of them but the objects (which the engine keeps)
  // may stay reachable during the events.
  let loaded: Loaded | undefined = paths.length > 0 ? loadInput({ ...flags, allowEmpty: true }, io.readStdin) : { objects: [], warnings: [], notes: [] };
  const firstWarnings = [...configWarnings, ...loaded.warnings];
  const firstNotes = loaded.notes;
  const mode = config.mode;
  if (flags.ipvsRemovedRealServers !== undefined && mode !== 'ipvs') throw usageError('--ipvs-removed-real-servers goes with --proxy-mode ipvs');
  const backend = backendFor(mode);

  // The general warnings (a Node not found, ...) are told when they first appear.
  const told = new Set<string>();
  let first = true;
  const engine = new WatchEngine({
    backend,
    standalone: flags.standalone ?? false,
    full: flags.full ?? false,
    ...(flags.ipvsRemovedRealServers ? { removedRealServers: flags.ipvsRemovedRealServers as 'quiesce' | 'delete' } : {}),
    allowEmpty: flags.allowEmpty ?? false,
    build: (objects) => {
      const compiled = compileObjects(objects, config, flags, first ? firstWarnings : [], first ? firstNotes : []);
      const fresh = compiled.general.filter((w) => !told.has(w));
      // Bounded: warning texts with counts in them could differ at every event.
      if (told.size > 1000) told.clear();
      for (const w of fresh) told.add(w);
      if (first) reportCompiled(io, { ...compiled, general: fresh });
      else reportWarnings(io, fresh);
      first = false;
      return {
        ir: compiled.ir,
        portsOf: (services, slices, endpoints) => buildIR({ services, slices: [...slices, ...mirroredSlices(endpoints, slices, services, releaseOf(flags))] }, compiled.context).servicePorts,
      };
    },
    incremental: (flags.endpointsFrom ?? 'auto') !== 'pods',
    nodeDependence: (nodes) => nodeDependence(nodes, config, flags),
  });

  const out = new StepWriter(io, flags.output, EXTENSION[mode]);
  let start: { text: string; warnings: string[] } | undefined = engine.start(loaded.objects, flags.previous !== undefined ? { path: flags.previous, readStdin: io.readStdin } : undefined);
  loaded = undefined;
  reportWarnings(io, start.warnings);
  reportNotes(io, [`watch: ${engine.path === 'generic' ? 'each change rebuilds the IR and compares whole outputs' : `Service and EndpointSlice changes recompute only the touched Services (${mode} incremental path)`}`]);
  // Before the first step is out (a consumer may answer it with events at once): the fast
  // path's code compiled, and the first build's garbage (a whole ruleset's state) collected
  // now rather than during an event.
  engine.warmUp();
  collectGarbage();
  out.step(0, flags.previous !== undefined ? `initial delta from --previous (${engine.size} objects)` : `initial state (${engine.size} objects)`, start.text);
  // The first output (tens of MB at 20,000 Services) is not kept during the events either.
  start = undefined;

  let rejected = 0;
  const apply = (n: number, label: string, changes: Change[]) => {
    try {
      const result = engine.apply(changes);
      printDiagnostics(io, result.diagnostics);
      reportWarnings(io, result.warnings);
      if (result.changed) out.step(n, label, result.text);
      else out.line(`# kpc watch: event ${n} ${label}: no change\n`);
    } catch (e) {
      if (!isKpcError(e) || e.kind === 'internal') throw e;
      rejected++;
      reportRejected(io, n, e);
      out.line(`# kpc watch: event ${n} rejected\n`);
    }
  };

  if (!watchFiles) {
    const decode = { ...decodeOptionsOf(flags), defaultNamespace: flags.namespace };
    let n = 0;
    // Events are numbered across the streams, in the order they complete.
    const handle = (piece: EventPiece, name: string) => {
      n++;
      const read = readEvent(piece, { ...decode, name });
      if (read.status === 'skipped') {
        if (read.note) reportNotes(io, [read.note]);
        return;
      }
      if (read.status === 'rejected') {
        rejected++;
        printDiagnostics(io, [...read.warnings, ...read.errors]);
        io.stderr(`error: event ${n} rejected; the state is unchanged\n`);
        out.line(`# kpc watch: event ${n} rejected\n`);
        return;
      }
      printDiagnostics(io, read.warnings);
      const type = read.type === 'OBJECT' ? (engine.has(read.object) ? 'MODIFIED' : 'ADDED') : read.type;
      const object: LoadedObject = { object: read.object, origin: read.origin };
      apply(n, `${type} ${describe(read.object)}`, [{ type, object }]);
    };
    readStreams(events, maxBytes, handle);
  } else {
    watchPaths(flags, paths, filesSeen, engine, maxBytes, io, (n, label, changes) => apply(n, label, changes), () => rejected++, parseInterval(flags.pollInterval));
  }
  const { incremental, rebuilt, unchanged } = engine.steps;
  reportNotes(io, [`watch: end of the changes: ${incremental} computed on the incremental path, ${rebuilt} by a rebuild of the IR, ${unchanged} Node changes the IR does not depend on, ${rejected} rejected`]);
  return rejected > 0 ? EXIT.badInput : EXIT.ok;
}

function reportRejected(io: Io, n: number, e: KpcError): void {
  if (e.report) printDiagnostics(io, [...e.report.warnings, ...e.report.diagnostics]);
  io.stderr(`error: event ${n} rejected: ${e.report ? e.message : e.describe()}; the state is unchanged\n`);
}

function parseInterval(text: string | undefined): number {
  if (text === undefined) return 500;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 10 || n > 3_600_000) throw usageError(`--poll-interval: "${text}" is not a number of milliseconds from 10 to 3600000`);
  return n;
}

/** What the -f files look like on disk: changes when any file is written, added or removed. */
function signature(paths: readonly string[], recursive: boolean): string {
  let files: string[];
  try {
    files = expandPaths(paths, recursive);
  } catch {
    return 'unreadable';
  }
  return files
    .map((f) => {
      try {
        const s = statSync(f);
        return `${f}\0${s.ino}\0${s.size}\0${s.mtimeMs}`;
      } catch {
        return `${f}\0gone`;
      }
    })
    .join('\n');
}

/** --watch-files: the -f files polled; a change re-reads them all and diffs their objects into one step. */
function watchPaths(
  flags: WatchFlags,
  paths: readonly string[],
  filesSeen: string,
  engine: WatchEngine,
  maxBytes: number,
  io: Io,
  apply: (n: number, label: string, changes: Change[]) => void,
  reject: () => void,
  interval: number,
): void {
  const recursive = flags.recursive ?? false;
  let seen = filesSeen;
  let held = new Map(engine.objectsHeld().map((o) => [objectKey(o.object), JSON.stringify(o.object)]));
  for (let n = 1; ; ) {
    sleep(interval);
    const now = signature(paths, recursive);
    if (now === seen) continue;
    seen = now;
    // Files may be mid-write: a read that fails is told, and the next change tried again.
    const result = loadObjects({
      paths,
      recursive,
      defaultNamespace: flags.namespace,
      readStdin: () => new Uint8Array(),
      maxInputBytes: maxBytes,
      maxErrors: 100,
      ...decodeOptionsOf(flags),
    });
    if (result.errors.length > 0) {
      reject();
      printDiagnostics(io, [...result.warnings, ...result.errors]);
      io.stderr(`error: event ${n} rejected (the -f files); the state is unchanged\n`);
      if (!flags.output) io.stdout([`# kpc watch: event ${n} rejected\n`]);
      n++;
      continue;
    }
    const changes: Change[] = [];
    const keys = new Set<string>();
    let added = 0;
    let modified = 0;
    for (const o of result.objects) {
      const key = objectKey(o.object);
      keys.add(key);
      const before = held.get(key);
      if (before === undefined) {
        added++;
        changes.push({ type: 'ADDED', object: o });
      } else if (before !== JSON.stringify(o.object)) {
        modified++;
        changes.push({ type: 'MODIFIED', object: o });
      }
    }
    for (const o of engine.objectsHeld()) {
      if (!keys.has(objectKey(o.object))) changes.push({ type: 'DELETED', object: o });
    }
    const deleted = changes.length - added - modified;
    if (changes.length === 0) continue;
    apply(n, `FILES ${added} added, ${modified} modified, ${deleted} deleted`, changes);
    held = new Map(engine.objectsHeld().map((o) => [objectKey(o.object), JSON.stringify(o.object)]));
    n++;
  }
}

/** Each step on stdout between its header and end lines, or into its own file under -o DIR. */
class StepWriter {
  constructor(
    private readonly io: Io,
    private readonly dir: string | undefined,
    private readonly extension: string,
  ) {
    if (dir === undefined) return;
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw usageError(`-o ${dir}: cannot make the directory for the steps: ${(e as Error).message}`);
    }
    if (!statSync(dir).isDirectory()) throw usageError(`-o ${dir} is not a directory (kpc watch writes one file per step into it)`);
  }

  step(n: number, label: string, text: string): void {
    if (this.dir !== undefined) {
      const path = join(this.dir, `${String(n).padStart(8, '0')}.${this.extension}`);
      explainWriteErrors(path, () => writeOutputFile(path, [text]));
      return;
    }
    const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
    this.io.stdout([`# kpc watch: event ${n} ${label}\n`, body, `# kpc watch: end of event ${n}\n`]);
  }

  line(text: string): void {
    if (this.dir === undefined) this.io.stdout([text]);
  }
}

export function watchOptions(cmd: import('commander').Command, withOutput: boolean): void {
  if (withOutput) cmd.option('-o, --output <dir>', 'write each step into its own file DIR/NNNNNNNN.rules (.nft, .sh), atomically, instead of stdout');
  cmd
    .option('--events <path>', 'a stream of watch events (kubectl get TYPE -A --watch --output-watch-events -o json), - for stdin; read as it arrives (repeatable: kubectl watches one type per stream)', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    .option('--watch-files', 'watch the -f files: when they change, re-read them and apply the difference (the default without --events)')
    .option('--poll-interval <ms>', 'with --watch-files: how often the files are looked at (default 500)');
}

export const watchCommand: CommandSpec<WatchFlags> = {
  name: 'watch',
  description: 'keep the compiled state in memory and print the delta for each change (a kubectl --watch stream, or changed -f files)',
  modes: PROXY_MODES,
  standalone: 'also write the jumps from the built-in chains (for a fresh node or namespace)',
  options(cmd) {
    watchOptions(cmd, true);
    cmd
      .option('--previous <path>', "the node's state now: the first step is the delta from it (as compile --previous), not the full output")
      .option('--full', 'every delta with everything, plus the deletions (compile --previous --full)')
      .addOption(
        new Option('--ipvs-removed-real-servers <policy>', 'ipvs mode: a TCP real server no longer wanted is quiesced (weight 0) or deleted at once')
          .choices(['quiesce', 'delete'])
          .default(undefined, 'quiesce'),
      );
  },
  run: runWatch,
};

/**
 * What a proxy mode provides to the commands: one interface, one implementation per mode
 * (iptables.ts, ipvs.ts), found through the registry (index.ts). The commands (src/cli/commands)
 * know nothing of any mode's formats; a mode knows nothing of the command line.
 *
 *   emit          the full output for the IR (compile)
 *   readPrevious  a previous state (kpc's earlier output, or a node's own dumps), read and
 *                 checked before anything is emitted (a mode may put off reading it whole
 *                 until delta or diff is made, when its text is not the new output's); it
 *                 answers delta (compile --previous) and diff (kpc diff)
 *   check         the output against a committed golden (kpc check)
 *   traceRules    the rules `kpc trace` follows (in its tracer's form), for the modes it can follow
 *   explainRules  the rules `kpc explain` shows (in its explainer's form), for the modes it can explain
 */

import type { BundleFile } from '../emit/ipvs/index.js';
import type { Paint } from '../diff/port-report.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import type { TraceRules } from '../trace/rules.js';
import type { ExplainRules } from '../explain/rules.js';

export type ProxyMode = 'iptables' | 'ipvs' | 'nftables';

/** Reads standard input whole, under a size limit. */
export type StdinReader = (maxBytes: number) => Uint8Array;

/** What a mode writes: one text, or a bundle of files with an inline form (one script). */
export type ModeOutput =
  | { form: 'text'; chunks: () => Iterable<string> }
  | { form: 'bundle'; kind: 'full' | 'delta'; files: () => BundleFile[]; inline: () => string };

export interface Emitted {
  output: ModeOutput;
  /** What the output will do on a node that the user must know (a set past its capacity). */
  warnings: string[];
}

export interface EmitOptions {
  /** Also what kube-proxy installs outside its restore (the built-in chain jumps). */
  standalone: boolean;
}

export interface DeltaOptions extends EmitOptions {
  /** Everything wanted, plus the deletions. */
  full: boolean;
  /** IPVS mode: a removed TCP real server is quiesced (weight 0) or deleted. */
  removedRealServers?: 'quiesce' | 'delete';
}

export interface DiffReport {
  changed: boolean;
  text(paint: Paint): string;
  json(): string;
}

export interface PreviousState {
  /**
   * The Service entries the previous state holds (a delta removing them all is refused).
   * Asked only when the new input has no Service ports: a mode may count them (and read the
   * whole previous state to do so) only then, in a getter.
   */
  readonly serviceEntries: number;
  delta(options: DeltaOptions): Emitted;
  diff(options: EmitOptions): DiffReport;
}

export interface CheckResult {
  /** The files (or the one output) that differ. */
  drifted: string[];
  /** A unified diff per drifted file. */
  diffs: string[];
  notes: string[];
}

export interface ModeBackend {
  readonly mode: ProxyMode;
  /** What kube-proxy calls it in messages, e.g. "iptables rules". */
  readonly describes: string;
  emit(ir: ProxyIR, options: EmitOptions): Emitted;
  /** `path` is a file, a directory or `-` (stdin); errors name `option`. */
  readPrevious(path: string, option: string, ir: ProxyIR, stdin: StdinReader): PreviousState;
  check(ir: ProxyIR, golden: string, options: EmitOptions, stdin: StdinReader): CheckResult;
  /**
   * `focus`, when given, picks the service ports whose own rules the reader needs (the
   * others may be left out, as long as what trace or explain reads of the text is the same).
   */
  traceRules?(ir: ProxyIR, options: EmitOptions, focus?: (sp: ServicePort) => boolean): TraceRules;
  explainRules?(ir: ProxyIR, focus?: (sp: ServicePort) => boolean): ExplainRules;
}

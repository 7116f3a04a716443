/**
 * `kpc compile`: the rules kube-proxy would program, on stdout or atomically into -o.
 * Nothing is written unless everything compiled.
 */

import { buildRuleset } from '../../emit/iptables/index.js';
import { renderRuleset } from '../../emit/iptables/render.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { explainWriteErrors, writeBundleDir, writeOutputFile, type Io } from '../io.js';
import { applyScriptOptions, bundleFiles, emitIpvs, overfullSets, renderApplyScript, syncIpvs, type IpvsState } from '../../emit/ipvs/index.js';
import { SET_MAX_ELEMENTS } from '../../emit/ipvs/sets.js';
import type { ProxyIR } from '../../ir/model.js';
import { printDiagnostics, reportNotes } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { RuleFacts, stateOfRuleset } from '../../diff/state.js';
import { renderDelta } from '../../diff/delta.js';
import { readPreviousState, withPrevious } from './previous.js';
import { compileIpvsDelta, OLDER_KPC_BUNDLE } from './ipvs-incremental.js';
import { timed, timedChunks, timingsEnabled, timingsJSON } from '../stage-timer.js';
import { progressFor } from '../progress.js';

export interface CompileFlags extends CommonFlags {
  standalone?: boolean;
  output?: string;
  previous?: string;
  full?: boolean;
  /** ipvs mode with --previous: quiesce (default) or delete a removed TCP real server. */
  ipvsRemovedRealServers?: string;
}

export function runCompile(flags: CompileFlags, io: Io): number {
  const progress = progressFor(io);
  const compiled = compileInput(flags, io.readStdin, progress);
  progress.done();
  printDiagnostics(io, compiled.warnings);
  reportNotes(io, compiled.notes);
  if (flags.full && flags.previous === undefined) throw new UsageError('--full goes with --previous');
  if (flags.ipvsRemovedRealServers !== undefined && compiled.settings.mode !== 'ipvs') throw new UsageError('--ipvs-removed-real-servers goes with --proxy-mode ipvs');
  if (compiled.settings.mode === 'ipvs') return compileIpvs(compiled.ir, flags, io);
  progress(`emitting rules for ${compiled.ir.servicePorts.length} service ports`);
  const chunks = timed('emit', (): Iterable<string> => {
    const ruleset = buildRuleset(compiled.ir, { standalone: flags.standalone ?? false });
    if (flags.previous === undefined) return renderRuleset(ruleset);
    // Only what must change, for `iptables-restore --noflush`.
    const facts = new RuleFacts(compiled.family);
    const before = readPreviousState(flags.previous, facts);
    return [withPrevious(flags.previous, () => renderDelta(before, stateOfRuleset(ruleset, facts), { full: flags.full ?? false }))];
  });
  // The text is rendered as it is written (timed as emit). A file is written atomically, so it
  // can take the chunks one by one; stdout gets them only once all are made.
  const rendered = timedChunks('emit', chunks);
  progress.done();
  timed('write', () => (flags.output !== undefined ? writeOutput(flags.output, rendered) : io.stdout(Array.from(rendered))));
  if (timingsEnabled()) io.stderr(`timings: ${timingsJSON()}\n`);
  return EXIT.ok;
}

/**
 * IPVS mode: with -o, a directory holding ipvs.rules, ipset.rules, iptables.rules,
 * kube-ipvs0.addrs and apply.sh (which applies them in order); without, apply.sh with the
 * four parts inline, so the one script is the whole output. With --previous, the same for
 * the delta (ipvs-incremental.ts).
 */
function compileIpvs(ir: ProxyIR, flags: CompileFlags, io: Io): number {
  if (flags.previous === undefined && flags.ipvsRemovedRealServers !== undefined) throw new UsageError('--ipvs-removed-real-servers goes with --previous');
  const state = timed('emit', () => syncIpvs(ir));
  // A full bundle and a delta both program the sets: both are told when one overflows.
  warnOverfullSets(io, state, ir);
  if (flags.previous !== undefined) return compileIpvsDelta(ir, state, { ...flags, previous: flags.previous }, io);
  const standalone = flags.standalone ?? false;
  if (flags.output !== undefined) {
    const output = flags.output;
    const files = timed('emit', () => bundleFiles(ir, { standalone }, state));
    timed('write', () => explainWriteErrors(output, () => writeBundleDir(output, files, { kind: 'full', legacy: OLDER_KPC_BUNDLE })));
  } else {
    const script = timed('emit', () => renderApplyScript(emitIpvs(ir, { standalone }, state), applyScriptOptions(ir, { inline: true, standalone })));
    timed('write', () => io.stdout([script]));
  }
  if (timingsEnabled()) io.stderr(`timings: ${timingsJSON()}\n`);
  return EXIT.ok;
}

/** A set past kube-proxy's maxelem is programmed only in part, by kube-proxy as by ipset restore. */
function warnOverfullSets(io: Io, state: IpvsState, ir: ProxyIR): void {
  for (const { name, size } of overfullSets(state.sets, ir.family)) {
    io.stderr(
      `warning: ipset ${name} would hold ${size} entries; kube-proxy creates it with maxelem ${SET_MAX_ELEMENTS}, ` +
        `so the kernel refuses the rest ("Hash is full"): kube-proxy logs an error for each, and ipset restore of this output stops there\n`,
    );
  }
}

/**
 * -o: a regular file written atomically as the text is rendered; a device, a FIFO or
 * /dev/stdout as a stream once all is rendered (write/file.ts; explainWriteErrors for failures).
 */
export function writeOutput(path: string, chunks: Iterable<string | Uint8Array>): void {
  explainWriteErrors(path, () => writeOutputFile(path, chunks));
}

/**
 * `kpc compile`: the rules kube-proxy would program, on stdout or atomically into -o.
 * Nothing is written unless everything compiled.
 */

import { buildRuleset } from '../../emit/iptables/index.js';
import { renderRuleset } from '../../lang/iptables/print.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { explainWriteErrors, writeBundleDir, writeOutputFile, type Io } from '../io.js';
import { applyScriptOptions, bundleFiles, emitIpvs, overfullSets, renderApplyScript, setName, syncIpvs, type IpvsState } from '../../emit/ipvs/index.js';
import { SET_MAX_ELEMENTS } from '../../emit/ipvs/sets.js';
import type { ProxyIR } from '../../ir/model.js';
import { reportCompiled } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { RuleFacts, stateOfRuleset } from '../../diff/iptables/state.js';
import { renderDelta } from '../../diff/iptables/delta.js';
import { readPreviousState, withPrevious } from './previous.js';
import { compileIpvsDelta, OLDER_KPC_BUNDLE } from './ipvs-incremental.js';
import { timed, timedChunks, timingsEnabled, timingsJSON } from '../stage-timer.js';
import { progressFor } from '../progress.js';
import { refuseEmptyingDelta } from '../input-checks.js';
import { countServiceRules } from '../../diff/iptables/state.js';

export interface CompileFlags extends CommonFlags {
  standalone?: boolean;
  output?: string;
  previous?: string;
  full?: boolean;
  /** ipvs mode with --previous: quiesce (default) or delete a removed TCP real server. */
  ipvsRemovedRealServers?: string;
}

/** Words that mean an output format to kubectl (-o json) but would become a file name here. */
const FORMAT_WORDS = new Set(['json', 'yaml', 'yml', 'wide', 'name', 'text', 'txt']);

/**
 * compile's -o is the file (or, in ipvs mode, the directory) to write, as cli.md has it;
 * kubectl's -o is a format. `-o json` is a mistake, not a file to create.
 */
function checkOutputPath(output: string | undefined): void {
  if (output !== undefined && FORMAT_WORDS.has(output.toLowerCase())) {
    throw new UsageError(`-o ${output}: kpc compile's -o names the file to write (rules, not a format); for JSON views see kpc diff -o json, kpc trace -o json and kpc explain -o json. To write a file of that name, use -o ./${output}`);
  }
}

export function runCompile(flags: CompileFlags, io: Io): number {
  checkOutputPath(flags.output);
  const progress = progressFor(io);
  const compiled = compileInput(flags, io.readStdin, progress);
  progress.done();
  reportCompiled(io, compiled);
  if (flags.full && flags.previous === undefined) throw new UsageError('--full goes with --previous');
  if (flags.ipvsRemovedRealServers !== undefined && compiled.settings.mode !== 'ipvs') throw new UsageError('--ipvs-removed-real-servers goes with --proxy-mode ipvs');
  if (compiled.settings.mode === 'ipvs') return compileIpvs(compiled.ir, flags, io);
  progress(`emitting rules for ${compiled.ir.servicePorts.length} service ports`);
  const chunks = timed('emit', (): Iterable<string> => {
    const ruleset = buildRuleset(compiled.ir, { standalone: flags.standalone ?? false });
    if (flags.previous === undefined) return renderRuleset(ruleset);
    // Only what must change, for `iptables-restore --noflush`.
    const facts = new RuleFacts(compiled.family);
    const before = readPreviousState(flags.previous, facts, io.readStdin);
    refuseEmptyingDelta(compiled.ir, countServiceRules(before), flags.previous, flags.allowEmpty);
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
  warnRefusedEntries(io, state);
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

/** Entries the kernel refuses are left out, as kube-proxy ends up without them; say which. */
function warnRefusedEntries(io: Io, state: IpvsState): void {
  for (const { set, entry, spn } of state.refused) {
    io.stderr(
      `warning: ${spn}: ipset ${setName(set, state.family)} entry "${entry}" has the unspecified address, which the kernel refuses ` +
        `("Kernel error received: Invalid argument"); kube-proxy logs the error and goes on without it, and so does this output\n`,
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

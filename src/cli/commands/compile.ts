/**
 * `kpc compile`: the rules kube-proxy would program, on stdout or atomically into -o.
 * Nothing is written unless everything compiled.
 */

import { buildRuleset } from '../../emit/iptables/index.js';
import { renderRuleset } from '../../emit/iptables/render.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { writeFileAtomic, type Io } from '../io.js';
import { printDiagnostics, reportNotes } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { RuleFacts, stateOfRuleset } from '../../diff/state.js';
import { renderDelta } from '../../diff/delta.js';
import { readPreviousState } from './previous.js';

export interface CompileFlags extends CommonFlags {
  standalone?: boolean;
  output?: string;
  previous?: string;
  full?: boolean;
}

export function runCompile(flags: CompileFlags, io: Io): number {
  const compiled = compileInput(flags, io.readStdin);
  printDiagnostics(io, [...compiled.configWarnings, ...compiled.loaded.warnings]);
  reportNotes(io, compiled.loaded.notes);
  if (compiled.settings.mode !== 'iptables') throw new UsageError('--proxy-mode ipvs is not implemented yet');
  if (flags.full && flags.previous === undefined) throw new UsageError('--full goes with --previous');
  const ruleset = buildRuleset(compiled.ir, { standalone: flags.standalone ?? false });
  let chunks: string[];
  if (flags.previous !== undefined) {
    // Only what must change, for `iptables-restore --noflush`.
    const facts = new RuleFacts(compiled.family);
    const before = readPreviousState(flags.previous, facts);
    chunks = [renderDelta(before, stateOfRuleset(ruleset, facts), { full: flags.full ?? false })];
  } else {
    chunks = renderRuleset(ruleset);
  }
  if (flags.output !== undefined) writeOutput(flags.output, chunks);
  else io.stdout(chunks);
  return EXIT.ok;
}

/** -o: atomically, or a clear error (the target directory must exist and be writable). */
export function writeOutput(path: string, chunks: readonly string[]): void {
  try {
    writeFileAtomic(path, chunks);
  } catch (e) {
    throw new UsageError(`cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

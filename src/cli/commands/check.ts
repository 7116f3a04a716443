/**
 * `kpc check --golden PATH`: for CI. Compiles and compares with a committed output byte for
 * byte; on drift prints a unified diff. Exit 0 identical, 1 drift, ≥2 error.
 */

import { EXIT, usageError } from '../../errors.js';
import type { Io } from '../io.js';
import { backendFor, PROXY_MODES } from '../../modes/index.js';
import type { CommandSpec } from '../command-spec.js';
import { IPVS_INCREMENTAL_HELP } from '../help.js';
import { reportCompiled, reportNotes } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';

export interface CheckFlags extends CommonFlags {
  golden?: string;
  standalone?: boolean;
}

export function runCheck(flags: CheckFlags, io: Io): number {
  if (flags.golden === undefined) throw usageError('kpc check needs --golden PATH');
  const compiled = compileInput(flags, io.readStdin);
  reportCompiled(io, compiled);
  const result = backendFor(compiled.settings.mode).check(compiled.ir, flags.golden, { standalone: flags.standalone ?? false }, io.readStdin);
  reportNotes(io, result.notes);
  if (result.drifted.length === 0) return EXIT.ok;
  io.stdout(result.diffs);
  const which = result.drifted.length === 1 && result.drifted[0] === flags.golden ? '' : ` (${result.drifted.join(', ')})`;
  io.stderr(`drift: ${flags.golden} differs from what kpc compiles${which}\n`);
  return EXIT.differs;
}

export const checkCommand: CommandSpec<CheckFlags> = {
  name: 'check',
  description: 'CI golden check: compile and compare with a committed file (exit 0 same, 1 drift)',
  modes: PROXY_MODES,
  standalone: 'compare the --standalone form',
  options(cmd) {
    cmd.requiredOption('--golden <path>', 'the committed output to compare with; ipvs mode: a bundle directory (every file compared) or apply.sh');
  },
  help: [IPVS_INCREMENTAL_HELP],
  run: runCheck,
};

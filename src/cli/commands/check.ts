/**
 * `kpc check --golden PATH`: for CI. Compiles and compares with a committed file byte for byte;
 * on drift prints a unified diff. Exit 0 identical, 1 drift, ≥2 error.
 */

import { emitIptablesText } from '../../emit/iptables/index.js';
import { unifiedDiff } from '../../diff/unified.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { printDiagnostics, reportNotes } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { readTextFile } from './previous.js';

export interface CheckFlags extends CommonFlags {
  golden?: string;
  standalone?: boolean;
}

export function runCheck(flags: CheckFlags, io: Io): number {
  if (flags.golden === undefined) throw new UsageError('kpc check needs --golden PATH');
  const golden = readTextFile(flags.golden, '--golden');
  const compiled = compileInput(flags, io.readStdin);
  printDiagnostics(io, [...compiled.configWarnings, ...compiled.loaded.warnings]);
  reportNotes(io, compiled.loaded.notes);
  if (compiled.settings.mode !== 'iptables') throw new UsageError('kpc check of ipvs output is not implemented yet');
  const text = emitIptablesText(compiled.ir, { standalone: flags.standalone ?? false });
  if (text === golden) return EXIT.ok;
  io.stdout([unifiedDiff(golden, text, flags.golden, 'kpc compile')]);
  io.stderr(`drift: ${flags.golden} differs from what kpc compiles\n`);
  return EXIT.differs;
}

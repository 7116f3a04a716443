/**
 * `kpc check --golden PATH`: for CI. Compiles and compares with a committed file byte for byte;
 * on drift prints a unified diff. Exit 0 identical, 1 drift, ≥2 error.
 */

import { emitIptablesText } from '../../emit/iptables/index.js';
import { unifiedDiff } from '../../diff/unified.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { reportCompiled } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { readTextFile } from './previous.js';
import { checkIpvs } from './ipvs-incremental.js';
import { statSync } from 'node:fs';

export interface CheckFlags extends CommonFlags {
  golden?: string;
  standalone?: boolean;
}

export function runCheck(flags: CheckFlags, io: Io): number {
  if (flags.golden === undefined) throw new UsageError('kpc check needs --golden PATH');
  // An ipvs-mode golden may be a bundle directory (read by checkIpvs).
  const golden = isDirectory(flags.golden) ? undefined : readTextFile(flags.golden, '--golden', io.readStdin);
  const compiled = compileInput(flags, io.readStdin);
  reportCompiled(io, compiled);
  if (compiled.settings.mode === 'ipvs') return checkIpvs(compiled.ir, { ...flags, golden: flags.golden }, io);
  if (golden === undefined) throw new UsageError(`--golden ${flags.golden} is a directory; iptables mode compares one file`);
  const text = emitIptablesText(compiled.ir, { standalone: flags.standalone ?? false });
  if (text === golden) return EXIT.ok;
  io.stdout([unifiedDiff(golden, text, flags.golden, 'kpc compile')]);
  io.stderr(`drift: ${flags.golden} differs from what kpc compiles\n`);
  return EXIT.differs;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

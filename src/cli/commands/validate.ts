/** `kpc validate`: read and validate the manifests; every problem on stderr; 0 valid, 2 invalid. */

import { EXIT } from '../../errors.js';
import type { Io } from '../io.js';
import { printDiagnostics, reportNotes } from '../report.js';
import type { CommandSpec } from '../command-spec.js';
import { EXAMPLES } from '../help.js';
import { PROXY_MODES } from '../../modes/index.js';
import { checkStdinUse, loadConfig, loadInput, parseMaxInputSize, type CommonFlags } from '../pipeline.js';

export function runValidate(flags: CommonFlags, io: Io): number {
  checkStdinUse(flags);
  const { warnings: configWarnings } = loadConfig(flags.config, flags, io.readStdin, parseMaxInputSize(flags.maxInputSize));
  const loaded = loadInput(flags, io.readStdin);
  printDiagnostics(io, [...configWarnings, ...loaded.warnings]);
  reportNotes(io, loaded.notes);
  const counts = new Map<string, number>();
  for (const { object } of loaded.objects) counts.set(object.kind, (counts.get(object.kind) ?? 0) + 1);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ') || 'no objects';
  io.stderr(`valid: ${summary}\n`);
  return EXIT.ok;
}

export const validateCommand: CommandSpec<CommonFlags> = {
  name: 'validate',
  description: 'read and validate the manifests; print every problem',
  modes: PROXY_MODES,
  options() {},
  help: [EXAMPLES],
  run: runValidate,
};

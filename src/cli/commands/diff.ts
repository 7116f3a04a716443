/**
 * `kpc diff --previous PATH`: what the manifests would change against a previous output or a
 * node's own state, grouped by Service port. Exit 0 same, 1 differs, ≥2 error (kubectl diff).
 */

import { Chalk } from 'chalk';
import type { Paint } from '../../diff/port-report.js';
import { EXIT, usageError } from '../../errors.js';
import type { Io } from '../io.js';
import { backendFor, PROXY_MODES } from '../../modes/index.js';
import { Option } from 'commander';
import type { CommandSpec } from '../command-spec.js';
import { IPVS_INCREMENTAL_HELP } from '../help.js';
import { reportCompiled } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';

export interface DiffFlags extends CommonFlags {
  previous?: string;
  output?: string;
  standalone?: boolean;
}

function painter(enabled: boolean): Paint {
  const chalk = new Chalk({ level: enabled ? 1 : 0 });
  return { added: chalk.green, removed: chalk.red, changed: chalk.yellow, heading: chalk.bold };
}

export function runDiff(flags: DiffFlags, io: Io): number {
  if (flags.previous === undefined) throw usageError('kpc diff needs --previous PATH (an earlier output or a node\'s own state)');
  const compiled = compileInput(flags, io.readStdin);
  reportCompiled(io, compiled);
  const previous = backendFor(compiled.settings.mode).readPrevious(flags.previous, '--previous', compiled.ir, io.readStdin);
  const report = previous.diff({ standalone: flags.standalone ?? false });
  io.stdout([flags.output === 'json' ? report.json() : report.text(painter(io.stdoutIsTTY))]);
  return report.changed ? EXIT.differs : EXIT.ok;
}

export const diffCommand: CommandSpec<DiffFlags> = {
  name: 'diff',
  description: 'show, per Service port, what changed against a previous output (exit 0 same, 1 differs)',
  modes: PROXY_MODES,
  standalone: 'compare the --standalone form (a previous state that has the built-in chain jumps)',
  options(cmd) {
    cmd
      .requiredOption('--previous <path>', 'a previous output or a node\'s iptables-save; ipvs mode: a bundle directory or apply.sh (see below)')
      .addOption(new Option('-o, --output <format>', 'json for tools (default: a human view, coloured on a terminal)').choices(['text', 'json']));
  },
  help: [IPVS_INCREMENTAL_HELP],
  run: runDiff,
};

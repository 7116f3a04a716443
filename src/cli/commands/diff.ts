/**
 * `kpc diff --previous PATH`: what the manifests would change against a previous output or a
 * node's iptables-save, grouped by Service port. Exit 0 same, 1 differs, ≥2 error (kubectl diff).
 */

import { Chalk } from 'chalk';
import { buildRuleset } from '../../emit/iptables/index.js';
import { diffStates, renderReport, reportJSON, type Paint } from '../../diff/iptables/report.js';
import { RuleFacts, stateOfRuleset } from '../../diff/iptables/state.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { reportCompiled } from '../report.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { readPreviousState, withPrevious } from './previous.js';
import { diffIpvs } from './ipvs-incremental.js';

export interface DiffFlags extends CommonFlags {
  previous?: string;
  output?: string;
}

function painter(enabled: boolean): Paint {
  const chalk = new Chalk({ level: enabled ? 1 : 0 });
  return { added: chalk.green, removed: chalk.red, changed: chalk.yellow, heading: chalk.bold };
}

export function runDiff(flags: DiffFlags, io: Io): number {
  if (flags.previous === undefined) throw new UsageError('kpc diff needs --previous PATH (an earlier output or a node\'s iptables-save)');
  const compiled = compileInput(flags, io.readStdin);
  reportCompiled(io, compiled);
  if (compiled.settings.mode === 'ipvs') return diffIpvs(compiled.ir, { ...flags, previous: flags.previous }, io, painter(io.stdoutIsTTY));
  const facts = new RuleFacts(compiled.family);
  const before = readPreviousState(flags.previous, facts, io.readStdin);
  const after = stateOfRuleset(buildRuleset(compiled.ir, { standalone: false }), facts);
  const report = withPrevious(flags.previous, () => diffStates(before, after));
  io.stdout([flags.output === 'json' ? reportJSON(report) : renderReport(report, painter(io.stdoutIsTTY))]);
  return report.changed ? EXIT.differs : EXIT.ok;
}

/**
 * `kpc explain NAMESPACE/NAME`: every rule of one Service on this node, grouped by entry point
 * (cluster IP, external IPs, load-balancer IPs, node port, health-check node port), the
 * endpoints each entry reaches and why the others are not used. Exit 0, or 2 for bad input,
 * usage, or a Service kube-proxy does not program.
 */

import { Chalk } from 'chalk';
import { Command, Option } from 'commander';
import { emitIptablesText } from '../../emit/iptables/index.js';
import { explainService, ExplainError, renderExplanation, type ExplainStyle } from '../../explain/index.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { addInputOptions, addKnobOptions, addNodeOptions } from '../options.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { reportCompiled } from '../report.js';

export interface ExplainFlags extends CommonFlags {
  /** The NAMESPACE/NAME argument (or NAME, in --namespace). */
  service?: string;
  output?: string;
}

const EXAMPLES = `
Examples:
  # Every rule of kube-system/kube-dns on node-a, by entry point, and which endpoints it uses
  kpc explain kube-system/kube-dns -f manifests/ -R --hostname-override node-a --cluster-cidr 10.244.0.0/16

  # As JSON
  kubectl get svc,endpointslices,nodes -A -o yaml | kpc explain default/web -f - --hostname-override node-a -o json
`;

/** `ns/name`, or `name` in --namespace (as kubectl). */
export function parseServiceRef(text: string, defaultNamespace: string): { namespace: string; name: string } {
  const parts = text.split('/');
  if (parts.length === 1 && parts[0] !== '') return { namespace: defaultNamespace, name: parts[0]! };
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '') return { namespace: parts[0]!, name: parts[1]! };
  throw new UsageError(`"${text}" is not NAMESPACE/NAME`);
}

function styleFor(io: Io): ExplainStyle {
  if (!io.stdoutIsTTY) return {};
  const chalk = new Chalk({ level: 1 });
  return {
    heading: (t) => chalk.bold(t),
    entry: (t) => chalk.bold.cyan(t),
    endpoint: (t) => chalk.cyan(t),
    bad: (t) => chalk.red(t),
    dim: (t) => chalk.dim(t),
  };
}

export function runExplain(flags: ExplainFlags, io: Io): number {
  if (flags.service === undefined) throw new UsageError('which Service? give NAMESPACE/NAME');
  const { namespace, name } = parseServiceRef(flags.service, flags.namespace);
  const compiled = compileInput(flags, io.readStdin);
  reportCompiled(io, compiled);
  if (compiled.settings.mode !== 'iptables') throw new UsageError('kpc explain explains iptables rules; --proxy-mode ipvs is not supported');
  const rules = emitIptablesText(compiled.ir, { standalone: false });
  let x;
  try {
    x = explainService(compiled.ir, rules, namespace, name);
  } catch (e) {
    if (e instanceof ExplainError) throw new UsageError(e.message);
    throw e;
  }
  io.stdout([flags.output === 'json' ? JSON.stringify(x, null, 2) + '\n' : renderExplanation(x, styleFor(io))]);
  return EXIT.ok;
}

/** Add `kpc explain` to the program; its action runs runExplain and hands the exit code to `setExit`. */
export function addExplainCommand(program: Command, io: Io, setExit: (code: number) => void): Command {
  const cmd = program
    .command('explain')
    .description("every rule of one Service by entry point, the endpoints each reaches, and why others are not used")
    .argument('<service>', 'NAMESPACE/NAME (or NAME in --namespace)');
  addInputOptions(cmd);
  addNodeOptions(cmd);
  addKnobOptions(cmd);
  cmd
    .addOption(new Option('--ip-family <family>', "which family's rules (kube-proxy runs one proxier per family)").choices(['ipv4', 'ipv6']).default('ipv4'))
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .addHelpText('after', EXAMPLES)
    .exitOverride()
    .action((service: string, flags: ExplainFlags) => setExit(runExplain({ ...flags, service }, io)));
  return cmd;
}

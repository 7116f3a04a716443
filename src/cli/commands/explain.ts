/**
 * `kpc explain NAMESPACE/NAME`: every rule of one Service on this node, grouped by entry point
 * (cluster IP, external IPs, load-balancer IPs, node port, health-check node port), the
 * endpoints each entry reaches and why the others are not used. Exit 0, or 2 for bad input,
 * usage, or a Service kube-proxy does not program.
 */

import { Chalk } from 'chalk';
import { Option } from 'commander';
import type { CommandSpec } from '../command-spec.js';
import { backendFor, modesWith } from '../../modes/index.js';
import { renderExplanation, type ExplainStyle } from '../../explain/index.js';
import { explainThrough } from '../../explain/rules.js';
import { EXIT, usageError } from '../../errors.js';
import type { Io } from '../io.js';
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
  throw usageError(`"${text}" is not NAMESPACE/NAME`);
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
  if (flags.service === undefined) throw usageError('which Service? give NAMESPACE/NAME');
  const { namespace, name } = parseServiceRef(flags.service, flags.namespace);
  const compiled = compileInput(flags, io.readStdin);
  reportCompiled(io, compiled);
  const backend = backendFor(compiled.settings.mode);
  if (!backend.explainRules) throw usageError(`kpc explain explains ${modesWith('explainRules').join(', ')} rules; --proxy-mode ${backend.mode} is not supported yet`);
  // Only this Service's own chains and the shared ones: its explanation reads nothing else.
  const x = explainThrough(
    backend.explainRules(compiled.ir, (sp) => sp.namespace === namespace && sp.name === name),
    compiled.ir,
    namespace,
    name,
  );
  io.stdout([flags.output === 'json' ? JSON.stringify(x, null, 2) + '\n' : renderExplanation(x, styleFor(io))]);
  return EXIT.ok;
}

export const explainCommand: CommandSpec<ExplainFlags> = {
  name: 'explain',
  description: 'every rule of one Service by entry point, the endpoints each reaches, and why others are not used',
  arguments: [{ name: '<service>', description: 'NAMESPACE/NAME (or NAME in --namespace)', key: 'service' }],
  modes: modesWith('explainRules'),
  options(cmd) {
    cmd.addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'));
  },
  help: [EXAMPLES],
  run: runExplain,
};

/**
 * `kpc endpointslices -f ...`: the EndpointSlices kpc derives from Pods (--endpoints-from), as
 * the EndpointSlice controller writes them, printed like `kubectl get endpointslices -o yaml`
 * (a `kind: List`; `-o json` for JSON). Generated names are kpc's own (the API server's are
 * random); everything else is the controller's content.
 */

import { Option } from 'commander';
import { stringify } from 'yaml';
import { toList } from '../../controllers/endpointslice/index.js';
import { EXIT } from '../../errors.js';
import type { CommandSpec } from '../command-spec.js';
import type { Io } from '../io.js';
import type { CommonFlags } from '../pipeline.js';
import { readObjects } from '../read-objects.js';

export interface EndpointSlicesFlags extends CommonFlags {
  output: 'yaml' | 'json';
}

const EXAMPLES = `
Examples:
  # The slices the EndpointSlice controller writes for a cluster's selector Services
  kubectl get svc,pods,nodes -A -o yaml | kpc endpointslices -f - --endpoints-from pods

  # Only those kpc would derive when compiling (Services without slices in the input)
  kpc endpointslices -f cluster.yaml

  # As a v1.34 controller writes them (the order of ports differs from v1.35 on;
  # the release is the cluster's, --kube-proxy-version, default the newest)
  kpc endpointslices -f cluster.yaml --endpoints-from pods --kube-proxy-version 1.34 -o json

Names are kpc's stand-ins for the API server's random ones (generateName + 5 characters,
derived from each slice's content). Endpoints are sorted by address and Pod (the controller's
order is a Go map's); the endpoints.kubernetes.io/last-change-trigger-time annotation is not
written.
`;

export function runEndpointSlices(flags: EndpointSlicesFlags, io: Io): number {
  const { input } = readObjects(flags, io);
  const list = toList(input.derivation.derived);
  io.stdout([flags.output === 'json' ? `${JSON.stringify(list, null, 4)}\n` : stringify(list, { indentSeq: false, lineWidth: 0 })]);
  return EXIT.ok;
}

export const endpointSlicesCommand: CommandSpec<EndpointSlicesFlags> = {
  name: 'endpointslices',
  description: 'print the EndpointSlices kpc derives from Pods (as the EndpointSlice controller writes them), as YAML or JSON',
  options(cmd) {
    cmd.addOption(new Option('-o, --output <format>', 'yaml or json (as kubectl get -o)').choices(['yaml', 'json']).default('yaml'));
  },
  help: [EXAMPLES],
  run: runEndpointSlices,
};

/**
 * The flags every command shares (cli.md): input, node, kube-proxy knobs, host capabilities.
 * Names follow kube-proxy's own flags so they can be copied from a node's command line.
 */

import { Command, InvalidArgumentError, Option } from 'commander';
import { KUBE_PROXY_RELEASES, NEWEST_RELEASE } from '../releases/index.js';

/** Go's strconv.ParseBool, which kube-proxy's `--flag=true|false` uses. */
export function parseBool(text: string | boolean): boolean {
  // Commander passes the preset (true) through the parser when the flag has no value.
  if (typeof text === 'boolean') return text;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new InvalidArgumentError(`"${text}" is not a boolean (true or false)`);
}

function parseIntArg(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new InvalidArgumentError(`"${text}" is not an integer`);
  return Number(text);
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** `--flag`, `--flag=true|false` (kube-proxy style) and, with `negatable`, `--no-flag`. */
function boolOption(cmd: Command, name: string, help: string, negatable = false): void {
  cmd.addOption(new Option(`--${name} [bool]`, help).argParser(parseBool).preset(true));
  if (negatable) cmd.addOption(new Option(`--no-${name}`, `the opposite of --${name}`));
}

export function addInputOptions(cmd: Command): Command {
  cmd
    .option('-f, --filename <path>', 'a manifest file, a directory, or - for stdin (repeatable)', collect)
    .option('-R, --recursive', 'recurse into directories given with -f')
    .option('-n, --namespace <ns>', 'namespace for objects that name none (as kubectl\'s context namespace)', 'default')
    .option('--config <file>', 'a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1); flags override it')
    .option('--kube-proxy-version <release>', `the kube-proxy release to reproduce: ${KUBE_PROXY_RELEASES.join(', ')} (default ${NEWEST_RELEASE})`)
    .addOption(new Option('--ip-validation <mode>', 'IP and CIDR checks: legacy (accept leading zeros, warn) or strict (default: the release\'s API server: legacy before v1.36, strict from v1.36)').choices(['legacy', 'strict']))
    .option('--service-node-port-range <range>', 'the cluster\'s node-port range, for nodePort checks', '30000-32767')
    .option('--max-input-size <size>', 'the most one input (a file or stdin) may hold, e.g. 2Gi (default 1Gi)')
    .addOption(
      new Option('--endpoints-from <source>', "selector Services' endpoints: auto (derive EndpointSlices from Pods, as the EndpointSlice controller does, for Services without slices in namespaces whose Pods are given), pods (derive them for every selector Service) or slices (never)")
        .choices(['auto', 'pods', 'slices'])
        .default('auto'),
    )
    .option('-q, --quiet', 'print no notes (warnings and errors still print)')
    .option('--allow-empty', 'accept an input without objects (only kube-proxy\'s fixed rules), and a delta that removes every Service (both refused otherwise)');
  return cmd;
}

export function addNodeOptions(cmd: Command): Command {
  cmd
    .option('--hostname-override <name>', 'the node to compile for (default: the config\'s hostnameOverride, else the only Node in the input)')
    .option('--node-ip <ip>', 'a node address (repeatable; default: the Node\'s InternalIP then ExternalIP addresses)', collect);
  return cmd;
}

/** The knobs; `modes` are the --proxy-mode choices; `supportNote` says which of them the command works in, when not all. */
export function addKnobOptions(cmd: Command, modes: readonly string[], supportNote?: string): Command {
  const note = supportNote === undefined ? '' : `; ${supportNote}`;
  cmd
    .addOption(new Option('--proxy-mode <mode>', `kube-proxy mode (default iptables; ipvs is deprecated since kube-proxy 1.35; nftables is GA${note})`).choices([...modes]))
    .option('--cluster-cidr <cidrs>', 'the cluster\'s pod CIDR(s), comma-separated (for --detect-local-mode ClusterCIDR)')
    .addOption(new Option('--detect-local-mode <mode>', 'how pod traffic is recognised (default ClusterCIDR)').choices(['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix']))
    .option('--pod-bridge-interface <name>', 'the bridge for --detect-local-mode BridgeInterface')
    .option('--pod-interface-name-prefix <prefix>', 'the interface prefix for --detect-local-mode InterfaceNamePrefix');
  boolOption(cmd, 'masquerade-all', 'SNAT all traffic to cluster IPs');
  cmd.addOption(new Option('--iptables-masquerade-bit <n>', 'the fwmark bit for SNAT (default 14)').argParser(parseIntArg));
  boolOption(cmd, 'iptables-localhost-nodeports', 'allow node ports on 127.0.0.1 (default true)');
  cmd
    .option('--nodeport-addresses <list>', 'CIDRs node ports are served on, comma-separated, or "primary" (default: all; nftables mode: primary)')
    .option('--service-cluster-ip-range <cidrs>', "the cluster's Service CIDRs, comma-separated, as ServiceCIDR objects give them (nftables mode drops traffic to unallocated addresses in them)")
    .option('--ipvs-scheduler <name>', 'IPVS scheduler (default rr): any of the kernel\'s, e.g. wrr, lc, wlc, sh, mh')
    .option('--ipvs-exclude-cidrs <cidrs>', 'CIDRs whose IPVS virtual servers kube-proxy never deletes, comma-separated (ipvs mode)')
    .option('--ipvs-tcp-timeout <duration>', 'IPVS TCP session timeout, e.g. 900s (default 0: keep the kernel\'s)')
    .option('--ipvs-tcpfin-timeout <duration>', 'IPVS TCP FIN_WAIT timeout, e.g. 120s (default 0: keep the kernel\'s)')
    .option('--ipvs-udp-timeout <duration>', 'IPVS UDP timeout, e.g. 300s (default 0: keep the kernel\'s)')
    .option('--feature-gates <gates>', 'kube-proxy feature gates, e.g. PreferSameTrafficDistribution=false');
  boolOption(cmd, 'ipvs-strict-arp', 'set arp_ignore=1 and arp_announce=2 as kube-proxy does (ipvs mode, --standalone apply.sh)');
  boolOption(cmd, 'conntrack-tcp-be-liberal', 'nf_conntrack_tcp_be_liberal is set on the node (no INVALID drop rule)');
  boolOption(cmd, 'masquerade-random-fully', 'iptables supports MASQUERADE --random-fully (default true)', true);
  boolOption(cmd, 'nfacct', 'the nfacct counters exist on the node (default false)', true);
  return cmd;
}

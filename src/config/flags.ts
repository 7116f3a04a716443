/**
 * kube-proxy's command-line flags, as values of its one configuration. Each flag writes the
 * field of the KubeProxyConfiguration kube-proxy's own flag writes (cmd/kube-proxy/app/options.go
 * AddFlags), on top of the --config file or of the defaults; the configuration is then
 * validated once, with kube-proxy's rules, whatever each value came from. A value a flag wrote
 * carries the flag as its path, so a problem with it names the flag.
 *
 * kpc's contract (cli.md): flags override --config. A real kube-proxy started with --config
 * ignores most of its flags; to reproduce such a node, give kpc only the config.
 */

import type { FieldError, FieldPath } from '../diagnostics.js';
import { goTrimSpace } from '../go/strings.js';
import { invalid } from '../parser/k8s/field-errors.js';
import { parseGoDuration } from '../parser/k8s/proxy-config/duration.js';
import type { At, InternalProxyConfig } from '../parser/k8s/proxy-config/internal.js';

/** The flags a command was given (undefined = not given), as commander names them. */
export interface KnobFlags {
  /** kpc's --kube-proxy-version (not a kube-proxy flag): which release's rules judge the rest. */
  kubeProxyVersion?: string;
  hostnameOverride?: string;
  nodeIp?: string[];
  proxyMode?: string;
  clusterCidr?: string;
  detectLocalMode?: string;
  podBridgeInterface?: string;
  podInterfaceNamePrefix?: string;
  masqueradeAll?: boolean;
  iptablesMasqueradeBit?: number;
  iptablesLocalhostNodeports?: boolean;
  nodeportAddresses?: string;
  ipvsScheduler?: string;
  ipvsStrictArp?: boolean;
  /** Go durations (kube-proxy's --ipvs-tcp-timeout, --ipvs-tcpfin-timeout, --ipvs-udp-timeout). */
  ipvsTcpTimeout?: string;
  ipvsTcpfinTimeout?: string;
  ipvsUdpTimeout?: string;
  /** Comma-separated CIDRs (--ipvs-exclude-cidrs). */
  ipvsExcludeCidrs?: string;
  conntrackTcpBeLiberal?: boolean;
  masqueradeRandomFully?: boolean;
  nfacct?: boolean;
  featureGates?: string;
}

/** The path of a value a flag wrote: the flag itself. */
function flagPath(flag: string): FieldPath {
  return [flag];
}

export function isFlagPath(path: FieldPath): boolean {
  return typeof path[0] === 'string' && path[0].startsWith('--');
}

/** The flag that writes each configuration field, for messages about a field no file holds. */
export const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  mode: '--proxy-mode',
  'detectLocal.clusterCIDRs': '--cluster-cidr',
  detectLocalMode: '--detect-local-mode',
  'detectLocal.bridgeInterface': '--pod-bridge-interface',
  'detectLocal.interfaceNamePrefix': '--pod-interface-name-prefix',
  'iptables.masqueradeBit': '--iptables-masquerade-bit',
  nodePortAddresses: '--nodeport-addresses',
  'ipvs.scheduler': '--ipvs-scheduler',
  'ipvs.tcpTimeout': '--ipvs-tcp-timeout',
  'ipvs.tcpFinTimeout': '--ipvs-tcpfin-timeout',
  'ipvs.udpTimeout': '--ipvs-udp-timeout',
  'ipvs.excludeCIDRs': '--ipvs-exclude-cidrs',
};

const at = <T>(flag: string, value: T): At<T> => ({ value, path: flagPath(flag) });

/** A comma-separated list as kube-proxy's flags take it (entries trimmed as MapCIDRsByIPFamily does). */
function list(text: string): string[] {
  return text.split(',').map(goTrimSpace).filter((s) => s !== '');
}

function duration(flag: string, text: string, errors: FieldError[]): At<number> {
  const d = parseGoDuration(goTrimSpace(text));
  if ('error' in d) {
    errors.push(invalid(flagPath(flag), text, d.error));
    return at(flag, 0);
  }
  return at(flag, d.ns);
}

/** `A=true,B=false` (component-base featuregate Set: keys and values trimmed). */
function featureGates(text: string, errors: FieldError[]): Record<string, At<boolean>> {
  const out: Record<string, At<boolean>> = {};
  for (const part of list(text)) {
    const m = /^([^=]+)=(.*)$/.exec(part);
    const value = m ? goTrimSpace(m[2]!) : '';
    // strconv.ParseBool's spellings, as cliflag.MapStringBool reads them.
    const truth = ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value) ? true : ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value) ? false : undefined;
    if (!m || truth === undefined) {
      errors.push(invalid(flagPath('--feature-gates'), part, 'missing bool value for the feature gate: NAME=true|false'));
      continue;
    }
    out[goTrimSpace(m[1]!)] = at('--feature-gates', truth);
  }
  return out;
}

/** Write the flags given into the configuration (before it is validated). */
export function applyFlags(c: InternalProxyConfig, f: KnobFlags, errors: FieldError[]): void {
  if (f.hostnameOverride !== undefined) c.hostnameOverride = f.hostnameOverride;
  if (f.proxyMode !== undefined) c.mode = at('--proxy-mode', f.proxyMode);
  if (f.clusterCidr !== undefined) c.detectLocal.clusterCIDRs = at('--cluster-cidr', list(f.clusterCidr));
  if (f.detectLocalMode !== undefined) c.detectLocalMode = at('--detect-local-mode', f.detectLocalMode);
  if (f.podBridgeInterface !== undefined) c.detectLocal.bridgeInterface = at('--pod-bridge-interface', f.podBridgeInterface);
  if (f.podInterfaceNamePrefix !== undefined) c.detectLocal.interfaceNamePrefix = at('--pod-interface-name-prefix', f.podInterfaceNamePrefix);
  if (f.masqueradeAll !== undefined) c.linux.masqueradeAll = f.masqueradeAll;
  if (f.iptablesMasqueradeBit !== undefined) c.iptables.masqueradeBit = at('--iptables-masquerade-bit', f.iptablesMasqueradeBit);
  if (f.iptablesLocalhostNodeports !== undefined) c.iptables.localhostNodePorts = f.iptablesLocalhostNodeports;
  if (f.nodeportAddresses !== undefined) c.nodePortAddresses = at('--nodeport-addresses', list(f.nodeportAddresses));
  if (f.ipvsScheduler !== undefined) c.ipvs.scheduler = at('--ipvs-scheduler', f.ipvsScheduler);
  if (f.ipvsStrictArp !== undefined) c.ipvs.strictARP = f.ipvsStrictArp;
  if (f.ipvsTcpTimeout !== undefined) c.ipvs.tcpTimeout = duration('--ipvs-tcp-timeout', f.ipvsTcpTimeout, errors);
  if (f.ipvsTcpfinTimeout !== undefined) c.ipvs.tcpFinTimeout = duration('--ipvs-tcpfin-timeout', f.ipvsTcpfinTimeout, errors);
  if (f.ipvsUdpTimeout !== undefined) c.ipvs.udpTimeout = duration('--ipvs-udp-timeout', f.ipvsUdpTimeout, errors);
  if (f.ipvsExcludeCidrs !== undefined) c.ipvs.excludeCIDRs = at('--ipvs-exclude-cidrs', list(f.ipvsExcludeCidrs));
  if (f.conntrackTcpBeLiberal !== undefined) c.linux.conntrack.tcpBeLiberal = f.conntrackTcpBeLiberal;
  if (f.featureGates !== undefined) c.featureGates = { ...c.featureGates, ...featureGates(f.featureGates, errors) };
}

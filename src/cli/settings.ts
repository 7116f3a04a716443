/**
 * Resolve what kube-proxy would run with: flags, then the KubeProxyConfiguration, then
 * kube-proxy's defaults; node facts from flags or the Node object in the input.
 */

import type { DetectLocalMode, ProxySettings } from '../ir/context.js';
import type { Node } from '../parser/k8s/types.js';
import { canonicalCIDR, canonicalIP } from '../net/ip.js';
import { usageError } from '../errors.js';
import { IPVS_SCHEDULERS, isKnownScheduler } from '../emit/ipvs/scheduler.js';
import { goTrimSpace } from '../go/strings.js';
import { interfaceNameProblem } from '../parser/k8s/proxy-config/validate.js';

/** The flags a command was given (undefined = not given). */
export interface KnobFlags {
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

/** The part of a KubeProxyConfiguration kpc reads (field names as in v1alpha1). */
export interface ProxyConfigFile {
  hostnameOverride?: string;
  clusterCIDR?: string;
  mode?: string;
  detectLocalMode?: string;
  detectLocal?: { bridgeInterface?: string; interfaceNamePrefix?: string };
  nodePortAddresses?: string[];
  iptables?: { masqueradeAll?: boolean; masqueradeBit?: number; localhostNodePorts?: boolean };
  linux?: { masqueradeAll?: boolean };
  ipvs?: {
    scheduler?: string;
    excludeCIDRs?: string[];
    strictARP?: boolean;
    /** metav1.Duration texts, e.g. "900s". */
    tcpTimeout?: string;
    tcpFinTimeout?: string;
    udpTimeout?: string;
  };
  conntrack?: { tcpBeLiberal?: boolean };
  featureGates?: Record<string, boolean>;
}

export type ProxyMode = 'iptables' | 'ipvs';

export interface ResolvedSettings {
  mode: ProxyMode;
  proxy: ProxySettings;
}

const DETECT_LOCAL_MODES: readonly DetectLocalMode[] = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];

/** kube-proxy's `--feature-gates A=true,B=false`. */
export function parseFeatureGates(text: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const part of text.split(',').map(goTrimSpace).filter((s) => s !== '')) {
    const m = /^([A-Za-z0-9]+)=(true|false)$/.exec(part);
    if (!m) throw usageError(`--feature-gates: "${part}" is not NAME=true|false`);
    out[m[1]!] = m[2] === 'true';
  }
  return out;
}

function chooseNode(nodes: readonly Node[], name: string | undefined): { name: string; node: Node | undefined } {
  if (name !== undefined && name !== '') return { name, node: nodes.find((n) => n.metadata.name === name) };
  if (nodes.length === 1) return { name: nodes[0]!.metadata.name, node: nodes[0] };
  if (nodes.length === 0) {
    throw usageError('which node? pass --hostname-override NAME (or set hostnameOverride in --config, or include the Node object)');
  }
  throw usageError(`which node? the input has ${nodes.length} Nodes (${nodes.map((n) => n.metadata.name).slice(0, 5).join(', ')}${nodes.length > 5 ? ', ...' : ''}); pass --hostname-override NAME`);
}

/** InternalIP addresses first, then ExternalIP; per family the first one is the primary. */
function nodeAddresses(node: Node | undefined): string[] {
  if (!node) return [];
  const pick = (type: string) => node.status.addresses.filter((a) => a.type === type).map((a) => a.address);
  return [...pick('InternalIP'), ...pick('ExternalIP')];
}

function checkedCIDRList(flag: string, text: string): string[] {
  const list = text.split(',').map(goTrimSpace).filter((s) => s !== '');
  for (const c of list) if (canonicalCIDR(c) === undefined) throw usageError(`${flag}: "${c}" is not a CIDR`);
  return list;
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/**
 * Go's time.ParseDuration, in whole seconds truncated toward zero (kube-proxy hands the
 * durations to IPVS as uint32 seconds). Negative values are refused, as kube-proxy's
 * validation does.
 */
export function parseDurationSeconds(flag: string, text: string): number {
  const t = text.trim();
  if (t === '0') return 0;
  const re = /([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  while (at < t.length && (m = re.exec(t)) !== null) {
    if (m[1] === '' || m[1] === '.') break;
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    at = re.lastIndex;
  }
  if (t === '' || at !== t.length) throw usageError(`${flag}: "${text}" is not a duration (e.g. 900s, 15m, 1h30m)`);
  const seconds = Math.trunc(total + 1e-9);
  if (seconds > 2 ** 31 - 1) throw usageError(`${flag}: "${text}" is too long`);
  return seconds;
}

/** The IPVS knobs, checked the way kube-proxy's validation checks them (ipvs mode only). */
function resolveIpvsSettings(flags: KnobFlags, config: ProxyConfigFile, mode: ProxyMode) {
  const scheduler = flags.ipvsScheduler ?? (config.ipvs?.scheduler || undefined) ?? 'rr';
  if (mode === 'ipvs' && !isKnownScheduler(scheduler === '' ? 'rr' : scheduler)) {
    throw usageError(`--ipvs-scheduler: "${scheduler}" is not one of ${IPVS_SCHEDULERS.join(', ')}`);
  }
  const duration = (flag: string, value: string | undefined) => (value === undefined || value === '' ? 0 : parseDurationSeconds(flag, value));
  const excludeText = flags.ipvsExcludeCidrs ?? (config.ipvs?.excludeCIDRs ?? []).join(',');
  return {
    ipvsScheduler: scheduler === '' ? 'rr' : scheduler,
    ipvsStrictARP: flags.ipvsStrictArp ?? config.ipvs?.strictARP ?? false,
    ipvsTCPTimeout: duration('--ipvs-tcp-timeout', flags.ipvsTcpTimeout ?? config.ipvs?.tcpTimeout),
    ipvsTCPFinTimeout: duration('--ipvs-tcpfin-timeout', flags.ipvsTcpfinTimeout ?? config.ipvs?.tcpFinTimeout),
    ipvsUDPTimeout: duration('--ipvs-udp-timeout', flags.ipvsUdpTimeout ?? config.ipvs?.udpTimeout),
    ipvsExcludeCIDRs: checkedCIDRList('--ipvs-exclude-cidrs', excludeText),
  };
}

export function resolveSettings(flags: KnobFlags, config: ProxyConfigFile, nodes: readonly Node[]): ResolvedSettings {
  const mode = flags.proxyMode ?? config.mode ?? 'iptables';
  if (mode !== 'iptables' && mode !== 'ipvs') throw usageError(`--proxy-mode: "${mode}" is not supported; kpc compiles iptables and ipvs`);

  // kube-proxy trims and lower-cases the hostname it is given (nodeutil.GetHostname).
  const override = flags.hostnameOverride ?? config.hostnameOverride;
  const { name, node } = chooseNode(nodes, override === undefined ? undefined : goTrimSpace(override).toLowerCase());
  const nodeIPs = flags.nodeIp ?? nodeAddresses(node);
  for (const ip of nodeIPs) if (canonicalIP(ip) === undefined) throw usageError(`--node-ip: "${ip}" is not an IP address`);

  const detectLocalMode = (flags.detectLocalMode ?? (config.detectLocalMode || undefined) ?? 'ClusterCIDR') as DetectLocalMode;
  if (!DETECT_LOCAL_MODES.includes(detectLocalMode)) {
    throw usageError(`--detect-local-mode: "${detectLocalMode}" is not one of ${DETECT_LOCAL_MODES.join(', ')}`);
  }
  const masqueradeBit = flags.iptablesMasqueradeBit ?? config.iptables?.masqueradeBit ?? 14;
  if (!Number.isInteger(masqueradeBit) || masqueradeBit < 0 || masqueradeBit > 31) throw usageError(`--iptables-masquerade-bit: ${masqueradeBit} is not between 0 and 31`);

  const nodePortText = flags.nodeportAddresses;
  const nodePortAddresses = nodePortText !== undefined ? nodePortText.split(',').map(goTrimSpace).filter((s) => s !== '') : config.nodePortAddresses ?? [];
  if (!(nodePortAddresses.length === 1 && nodePortAddresses[0] === 'primary')) checkedCIDRList('--nodeport-addresses', nodePortAddresses.join(','));

  const gates = { ...(config.featureGates ?? {}), ...(flags.featureGates ? parseFeatureGates(flags.featureGates) : {}) };
  const proxy: ProxySettings = {
    nodeName: name,
    nodeIPs,
    nodeZone: node?.metadata.labels['topology.kubernetes.io/zone'] ?? '',
    podCIDRs: node ? (node.spec.podCIDRs.length > 0 ? node.spec.podCIDRs : node.spec.podCIDR ? [node.spec.podCIDR] : []) : [],
    clusterCIDRs: checkedCIDRList('--cluster-cidr', flags.clusterCidr ?? config.clusterCIDR ?? ''),
    detectLocalMode,
    bridgeInterface: flags.podBridgeInterface ?? config.detectLocal?.bridgeInterface ?? '',
    interfaceNamePrefix: flags.podInterfaceNamePrefix ?? config.detectLocal?.interfaceNamePrefix ?? '',
    // masqueradeAll moved from iptables to linux in newer configurations; either counts.
    masqueradeAll: flags.masqueradeAll ?? config.linux?.masqueradeAll ?? config.iptables?.masqueradeAll ?? false,
    masqueradeBit,
    localhostNodePorts: flags.iptablesLocalhostNodeports ?? config.iptables?.localhostNodePorts ?? true,
    nodePortAddresses,
    randomFully: flags.masqueradeRandomFully ?? true,
    nfacct: flags.nfacct ?? false,
    tcpBeLiberal: flags.conntrackTcpBeLiberal ?? config.conntrack?.tcpBeLiberal ?? false,
    preferSameTrafficDistribution: gates['PreferSameTrafficDistribution'] ?? true,
    ...resolveIpvsSettings(flags, config, mode),
  };
  for (const [flag, value] of [['--pod-bridge-interface', flags.podBridgeInterface], ['--pod-interface-name-prefix', flags.podInterfaceNamePrefix]] as const) {
    const problem = value === undefined ? undefined : interfaceNameProblem(value);
    if (problem !== undefined) throw usageError(`${flag}: "${value}" ${problem}`);
  }
  if (proxy.detectLocalMode === 'BridgeInterface' && proxy.bridgeInterface === '') throw usageError('--detect-local-mode BridgeInterface needs --pod-bridge-interface');
  if (proxy.detectLocalMode === 'InterfaceNamePrefix' && proxy.interfaceNamePrefix === '') throw usageError('--detect-local-mode InterfaceNamePrefix needs --pod-interface-name-prefix');
  return { mode, proxy };
}

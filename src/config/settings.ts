/**
 * What one node's kube-proxy runs with: its configuration (the KubeProxyConfiguration with
 * the flags written in, validated once: flags.ts, parser/k8s/proxy-config.ts), the node's
 * facts (its name, addresses, zone and pod CIDRs: the flags or the Node object in the input)
 * and the host's capabilities (random-fully, nfacct), which kube-proxy detects at run time
 * and kpc takes as flags.
 */

import type { DetectLocalMode, ProxySettings } from '../ir/context.js';
import { ZONE_LABEL } from '../parser/k8s/model/node.js';
import type { Node } from '../parser/k8s/types.js';
import { canonicalIP } from '../net/ip.js';
import { usageError } from '../errors.js';
import { goTrimSpace } from '../go/strings.js';
import type { KubeProxyConfig } from '../parser/k8s/proxy-config.js';
import { applyGates, behaviourOf, gatesOf } from '../releases/index.js';

export type ProxyMode = KubeProxyConfig['mode'];

export interface ResolvedSettings {
  mode: ProxyMode;
  proxy: ProxySettings;
  /** Settings the release ignores. */
  warnings: string[];
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

/** The flags that are not configuration: the node's addresses and the host's capabilities. */
export interface NodeHostFlags {
  nodeIp?: string[];
  /** kpc's --service-cluster-ip-range (comma-separated): the cluster's ServiceCIDRs, as ServiceCIDR objects would give them. */
  serviceClusterIpRange?: string;
  masqueradeRandomFully?: boolean;
  nfacct?: boolean;
}

export function resolveSettings(config: KubeProxyConfig, flags: NodeHostFlags, nodes: readonly Node[], serviceCIDRs: readonly string[] = []): ResolvedSettings {
  const mode = config.mode;
  // kube-proxy trims and lower-cases the hostname it is given (nodeutil.GetHostname).
  const override = config.hostnameOverride === '' ? undefined : goTrimSpace(config.hostnameOverride).toLowerCase();
  const { name, node } = chooseNode(nodes, override);
  const nodeIPs = flags.nodeIp ?? nodeAddresses(node);
  for (const ip of nodeIPs) if (canonicalIP(ip) === undefined) throw usageError(`--node-ip: "${ip}" is not an IP address`);
  const release = config.release;
  const behaviour = behaviourOf(release);
  const gates = applyGates(release, config.featureGates);
  const warnings: string[] = [];
  if (behaviour.randomFullyAlways && flags.masqueradeRandomFully === false) {
    warnings.push(`--no-masquerade-random-fully has no effect: kube-proxy ${release} writes MASQUERADE --random-fully whatever the host's iptables supports`);
  }
  const proxy: ProxySettings = {
    release,
    nodeName: name,
    nodeIPs,
    nodeZone: node?.metadata.labels[ZONE_LABEL] ?? '',
    podCIDRs: node ? (node.spec.podCIDRs.length > 0 ? node.spec.podCIDRs : node.spec.podCIDR ? [node.spec.podCIDR] : []) : [],
    clusterCIDRs: config.clusterCIDR === '' ? [] : config.clusterCIDR.split(','),
    detectLocalMode: config.detectLocalMode as DetectLocalMode,
    bridgeInterface: config.detectLocal.bridgeInterface,
    interfaceNamePrefix: config.detectLocal.interfaceNamePrefix,
    masqueradeAll: config.linux.masqueradeAll,
    // nftables mode reads its own section's bit (server_linux.go: config.NFTables.MasqueradeBit).
    masqueradeBit: mode === 'nftables' ? config.nftables.masqueradeBit : config.iptables.masqueradeBit,
    localhostNodePorts: config.iptables.localhostNodePorts,
    // platformApplyDefaults (server_linux.go): nftables mode serves node ports on the primary IPs by default.
    nodePortAddresses: mode === 'nftables' && config.nodePortAddresses.length === 0 ? ['primary'] : config.nodePortAddresses,
    randomFully: flags.masqueradeRandomFully ?? true,
    nfacct: flags.nfacct ?? false,
    tcpBeLiberal: config.conntrack.tcpBeLiberal,
    preferSameTrafficDistribution: gates.enabled('PreferSameTrafficDistribution'),
    serviceExternalIPs: gatesOf(release).has('AllowServiceExternalIPs') ? gates.enabled('AllowServiceExternalIPs') : true,
    ipvsScheduler: config.ipvs.scheduler,
    ipvsStrictARP: config.ipvs.strictARP,
    ipvsTCPTimeout: parseDurationSeconds('ipvs.tcpTimeout', config.ipvs.tcpTimeout),
    ipvsTCPFinTimeout: parseDurationSeconds('ipvs.tcpFinTimeout', config.ipvs.tcpFinTimeout),
    ipvsUDPTimeout: parseDurationSeconds('ipvs.udpTimeout', config.ipvs.udpTimeout),
    ipvsExcludeCIDRs: config.ipvs.excludeCIDRs,
    serviceCIDRs: [...serviceCIDRs, ...(flags.serviceClusterIpRange ?? '').split(',').map(goTrimSpace).filter((c) => c !== '')],
    nftablesLocalhostNodePorts: gatesOf(release).has('KubeProxyNFTablesLocalhostNodePorts') && gates.enabled('KubeProxyNFTablesLocalhostNodePorts'),
  };
  return { mode, proxy, warnings };
}

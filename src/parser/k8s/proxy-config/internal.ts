/**
 * kube-proxy's internal configuration (pkg/proxy/apis/config KubeProxyConfiguration), reached
 * the way kube-proxy reaches it: version defaults (pkg/proxy/apis/config/v1alpha1
 * defaults.go), then conversion (v1alpha1 conversion.go moves syncPeriod, masqueradeAll and
 * conntrack into their internal places and splits clusterCIDR). Each value remembers the path it
 * was written at, so an error points into the user's file.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { invalid } from '../field-errors.js';
import { parsedIP } from '../validate/ips.js';
import { parseGoDuration } from './duration.js';
import { splitHostPort } from './host-port.js';
import type { WireV1Alpha1 } from './schema.js';

export interface At<T> {
  value: T;
  path: FieldPath;
}

export interface InternalProxyConfig {
  apiVersion: string;
  /** Each gate with where it was set (a file's featureGates.NAME, or --feature-gates). */
  featureGates: Record<string, At<boolean>>;
  burst: At<number>;
  hostnameOverride: string;
  serviceProxyName: string;
  bindAddress?: At<string>;
  healthzBindAddress?: At<string>;
  metricsBindAddress?: At<string>;
  portRange?: At<string>;
  mode: At<string>;
  iptables: { masqueradeBit: At<number>; localhostNodePorts: boolean };
  ipvs: { scheduler: At<string>; excludeCIDRs: At<string[]>; strictARP: boolean; tcpTimeout: At<number>; tcpFinTimeout: At<number>; udpTimeout: At<number> };
  nftables: { masqueradeBit: At<number> };
  linux: {
    masqueradeAll: boolean;
    oomScoreAdj: At<number>;
    conntrack: {
      maxPerCore: At<number>;
      min: At<number>;
      tcpEstablishedTimeout: At<number>;
      tcpCloseWaitTimeout: At<number>;
      tcpBeLiberal: boolean;
      udpTimeout: At<number>;
      udpStreamTimeout: At<number>;
    };
  };
  syncPeriod: At<number>;
  minSyncPeriod: At<number>;
  configSyncPeriod: At<number>;
  nodePortAddresses: At<string[]>;
  detectLocalMode: At<string>;
  detectLocal: { bridgeInterface: At<string>; interfaceNamePrefix: At<string>; clusterCIDRs: At<string[]> };
}

const S = 1e9;

/** Parses the metav1.Duration fields; a bad one is a decode error (kube-proxy exits). */
class Durations {
  readonly errors: FieldError[] = [];
  read(text: string | null | undefined, path: FieldPath): At<number> {
    if (text == null) return { value: 0, path };
    const d = parseGoDuration(text);
    if ('error' in d) {
      this.errors.push(invalid(path, text, d.error));
      return { value: 0, path };
    }
    return { value: d.ns, path };
  }
}

function orDefault(at: At<number>, zeroDefault: number): At<number> {
  return at.value === 0 ? { ...at, value: zeroDefault } : at;
}

/** proxyutil.AppendPortIfNeeded. */
function appendPortIfNeeded(addr: string, port: number): string {
  if (splitHostPort(addr) !== undefined) return addr;
  const ip = parsedIP(addr);
  if (!ip) return addr;
  return ip.family === 'IPv4' ? `${addr}:${port}` : `[${addr}]:${port}`;
}

function conntrackOf(c: WireV1Alpha1['conntrack'], base: FieldPath, d: Durations) {
  return {
    maxPerCore: { value: c?.maxPerCore ?? 32 * 1024, path: [...base, 'maxPerCore'] },
    min: { value: c?.min ?? 128 * 1024, path: [...base, 'min'] },
    tcpEstablishedTimeout: c?.tcpEstablishedTimeout == null ? { value: 24 * 3600 * S, path: [...base, 'tcpEstablishedTimeout'] } : d.read(c.tcpEstablishedTimeout, [...base, 'tcpEstablishedTimeout']),
    tcpCloseWaitTimeout: c?.tcpCloseWaitTimeout == null ? { value: 3600 * S, path: [...base, 'tcpCloseWaitTimeout'] } : d.read(c.tcpCloseWaitTimeout, [...base, 'tcpCloseWaitTimeout']),
    tcpBeLiberal: c?.tcpBeLiberal ?? false,
    udpTimeout: d.read(c?.udpTimeout, [...base, 'udpTimeout']),
    udpStreamTimeout: d.read(c?.udpStreamTimeout, [...base, 'udpStreamTimeout']),
  };
}

export function fromV1Alpha1(w: WireV1Alpha1): { config: InternalProxyConfig; errors: FieldError[] } {
  const d = new Durations();
  const mode = w.mode ?? '';
  const bind = w.bindAddress == null || w.bindAddress === '' ? '0.0.0.0' : w.bindAddress;
  const v4 = parsedIP(bind)?.family === 'IPv4';
  const healthz = w.healthzBindAddress == null || w.healthzBindAddress === '' ? `${v4 ? '0.0.0.0' : '[::]'}:10256` : appendPortIfNeeded(w.healthzBindAddress, 10256);
  const metrics = w.metricsBindAddress == null || w.metricsBindAddress === '' ? `${v4 ? '127.0.0.1' : '[::1]'}:10249` : appendPortIfNeeded(w.metricsBindAddress, 10249);

  // Each mode's section carries its own sync periods; conversion keeps the active mode's.
  const iptSync = orDefault(d.read(w.iptables?.syncPeriod, ['iptables', 'syncPeriod']), 30 * S);
  const iptMin = orDefault(d.read(w.iptables?.minSyncPeriod, ['iptables', 'minSyncPeriod']), 1 * S);
  const ipvsSync = orDefault(d.read(w.ipvs?.syncPeriod, ['ipvs', 'syncPeriod']), 30 * S);
  const ipvsMin = d.read(w.ipvs?.minSyncPeriod, ['ipvs', 'minSyncPeriod']);
  const nftSync = orDefault(d.read(w.nftables?.syncPeriod, ['nftables', 'syncPeriod']), 30 * S);
  const nftMin = orDefault(d.read(w.nftables?.minSyncPeriod, ['nftables', 'minSyncPeriod']), 1 * S);
  const [syncPeriod, minSyncPeriod] = mode === 'ipvs' ? [ipvsSync, ipvsMin] : mode === 'nftables' ? [nftSync, nftMin] : [iptSync, iptMin];

  const clusterCIDR = w.clusterCIDR ?? '';
  const config: InternalProxyConfig = {
    apiVersion: w.apiVersion,
    featureGates: Object.fromEntries(Object.entries(w.featureGates ?? {}).map(([k, v]) => [k, { value: v, path: ['featureGates', k] }])),
    burst: { value: w.clientConnection?.burst || 10, path: ['clientConnection', 'burst'] },
    hostnameOverride: w.hostnameOverride ?? '',
    serviceProxyName: w.serviceProxyName ?? '',
    bindAddress: { value: bind, path: ['bindAddress'] },
    healthzBindAddress: { value: healthz, path: ['healthzBindAddress'] },
    metricsBindAddress: { value: metrics, path: ['metricsBindAddress'] },
    portRange: { value: w.portRange ?? '', path: ['portRange'] },
    mode: { value: mode, path: ['mode'] },
    iptables: { masqueradeBit: { value: w.iptables?.masqueradeBit ?? 14, path: ['iptables', 'masqueradeBit'] }, localhostNodePorts: w.iptables?.localhostNodePorts ?? true },
    ipvs: {
      scheduler: { value: w.ipvs?.scheduler ?? '', path: ['ipvs', 'scheduler'] },
      excludeCIDRs: { value: [...(w.ipvs?.excludeCIDRs ?? [])], path: ['ipvs', 'excludeCIDRs'] },
      strictARP: w.ipvs?.strictARP ?? false,
      tcpTimeout: d.read(w.ipvs?.tcpTimeout, ['ipvs', 'tcpTimeout']),
      tcpFinTimeout: d.read(w.ipvs?.tcpFinTimeout, ['ipvs', 'tcpFinTimeout']),
      udpTimeout: d.read(w.ipvs?.udpTimeout, ['ipvs', 'udpTimeout']),
    },
    nftables: { masqueradeBit: { value: w.nftables?.masqueradeBit ?? 14, path: ['nftables', 'masqueradeBit'] } },
    linux: {
      masqueradeAll: (mode === 'nftables' ? w.nftables?.masqueradeAll : w.iptables?.masqueradeAll) ?? false,
      oomScoreAdj: { value: w.oomScoreAdj ?? -999, path: ['oomScoreAdj'] },
      conntrack: conntrackOf(w.conntrack, ['conntrack'], d),
    },
    syncPeriod,
    minSyncPeriod,
    configSyncPeriod: orDefault(d.read(w.configSyncPeriod, ['configSyncPeriod']), 15 * 60 * S),
    nodePortAddresses: { value: [...(w.nodePortAddresses ?? [])], path: ['nodePortAddresses'] },
    detectLocalMode: { value: w.detectLocalMode ?? '', path: ['detectLocalMode'] },
    detectLocal: {
      bridgeInterface: { value: w.detectLocal?.bridgeInterface ?? '', path: ['detectLocal', 'bridgeInterface'] },
      interfaceNamePrefix: { value: w.detectLocal?.interfaceNamePrefix ?? '', path: ['detectLocal', 'interfaceNamePrefix'] },
      clusterCIDRs: { value: clusterCIDR === '' ? [] : clusterCIDR.split(','), path: ['clusterCIDR'] },
    },
  };
  return { config, errors: d.errors };
}

/**
 * decodeProxyConfig: a KubeProxyConfiguration document (what `kube-proxy --config` reads) in,
 * kube-proxy's effective settings out, after the same defaulting, conversion and validation.
 *
 * Unknown fields: kube-proxy decodes strictly and, when that fails only because of unknown
 * fields in a v1alpha1 file, decodes again leniently and just logs "Using lenient decoding as
 * strict decoding failed" (cmd/kube-proxy/app/server.go loadConfig). kpc does the same by
 * default: they are warnings (`unknown field "iptables.foo"`); `unknownFields: 'error'` makes them
 * errors. v1alpha1 is the only version kube-proxy v1.34–v1.37 registers; v1alpha2 (KEP-784) was
 * never served by them, so it is refused as they refuse it.
 */

import type { FieldError } from '../../diagnostics.js';
import { fieldError, fieldWarning } from '../../diagnostics.js';
import { invalid, required } from './field-errors.js';
import { goQuote, renderBadValue } from './go-format.js';
import { formatGoDuration } from './proxy-config/duration.js';
import { fromV1Alpha1, type InternalProxyConfig } from './proxy-config/internal.js';
import { v1alpha1Schema } from './proxy-config/schema.js';
import { validateProxyConfig } from './proxy-config/validate.js';
import { NEWEST_RELEASE, type KubeProxyRelease } from '../../releases/index.js';
import { badValueOf, jsonTypeOf, structuralErrors } from './schema/issues.js';

export const PROXY_CONFIG_GROUP = 'kubeproxy.config.k8s.io';
export const PROXY_CONFIG_VERSIONS = [`${PROXY_CONFIG_GROUP}/v1alpha1`];

/**
 * The settings kube-proxy runs with, shaped like a defaulted v1alpha1 file so that code reading
 * either kind of file sees one shape. Durations are Go duration strings (`30s`, `1h0m0s`).
 * Where kube-proxy resolves a blank at run time, the resolved value is given: mode "" is
 * iptables, detectLocalMode "" is ClusterCIDR, ipvs.scheduler "" is rr.
 */
export interface KubeProxyConfig {
  apiVersion: string;
  /** The kube-proxy release whose rules this configuration was judged by. */
  release: KubeProxyRelease;
  hostnameOverride: string;
  serviceProxyName: string;
  mode: 'iptables' | 'ipvs' | 'nftables';
  /** Comma-separated, one CIDR per family. */
  clusterCIDR: string;
  detectLocalMode: 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';
  detectLocal: { bridgeInterface: string; interfaceNamePrefix: string };
  /** CIDRs and the release's keywords (`primary`; v1.37: `localhost`, `all`); empty means all local addresses. */
  nodePortAddresses: string[];
  iptables: { masqueradeBit: number; masqueradeAll: boolean; localhostNodePorts: boolean };
  /** Where newer configurations keep masqueradeAll; the same value as iptables.masqueradeAll. */
  linux: { masqueradeAll: boolean };
  ipvs: { scheduler: string; strictARP: boolean; excludeCIDRs: string[]; tcpTimeout: string; tcpFinTimeout: string; udpTimeout: string };
  nftables: { masqueradeBit: number };
  conntrack: {
    maxPerCore: number;
    min: number;
    tcpEstablishedTimeout: string;
    tcpCloseWaitTimeout: string;
    tcpBeLiberal: boolean;
    udpTimeout: string;
    udpStreamTimeout: string;
  };
  syncPeriod: string;
  minSyncPeriod: string;
  configSyncPeriod: string;
  featureGates: Record<string, boolean>;
}

export type ProxyConfigResult =
  | { status: 'ok'; config: KubeProxyConfig; warnings: FieldError[] }
  | { status: 'invalid'; errors: FieldError[]; warnings: FieldError[] };

export interface ProxyConfigOptions {
  /** 'warn' (kube-proxy's behaviour for v1alpha1, the default) or 'error'. */
  unknownFields?: 'warn' | 'error';
  /**
   * Values written on top of the file before validation (kube-proxy's flags, src/config/flags.ts):
   * validation then judges the configuration the proxier would run with.
   */
  overrides?: (c: InternalProxyConfig, errors: FieldError[]) => void;
  /** The kube-proxy release whose rules apply (default: the newest). */
  release?: KubeProxyRelease;
}

/** The document of a configuration that sets nothing: kube-proxy's defaults. */
export const EMPTY_PROXY_CONFIG = { apiVersion: `${PROXY_CONFIG_GROUP}/v1alpha1`, kind: 'KubeProxyConfiguration' };

function toKubeProxyConfig(c: InternalProxyConfig, release: KubeProxyRelease): KubeProxyConfig {
  const ct = c.linux.conntrack;
  return {
    apiVersion: c.apiVersion,
    release,
    hostnameOverride: c.hostnameOverride,
    serviceProxyName: c.serviceProxyName,
    mode: (c.mode.value || 'iptables') as KubeProxyConfig['mode'],
    clusterCIDR: c.detectLocal.clusterCIDRs.value.join(','),
    detectLocalMode: (c.detectLocalMode.value || 'ClusterCIDR') as KubeProxyConfig['detectLocalMode'],
    detectLocal: { bridgeInterface: c.detectLocal.bridgeInterface.value, interfaceNamePrefix: c.detectLocal.interfaceNamePrefix.value },
    nodePortAddresses: [...c.nodePortAddresses.value],
    iptables: { masqueradeBit: c.iptables.masqueradeBit.value, masqueradeAll: c.linux.masqueradeAll, localhostNodePorts: c.iptables.localhostNodePorts },
    linux: { masqueradeAll: c.linux.masqueradeAll },
    ipvs: {
      scheduler: c.ipvs.scheduler.value || 'rr',
      strictARP: c.ipvs.strictARP,
      excludeCIDRs: [...c.ipvs.excludeCIDRs.value],
      tcpTimeout: formatGoDuration(c.ipvs.tcpTimeout.value),
      tcpFinTimeout: formatGoDuration(c.ipvs.tcpFinTimeout.value),
      udpTimeout: formatGoDuration(c.ipvs.udpTimeout.value),
    },
    nftables: { masqueradeBit: c.nftables.masqueradeBit.value },
    conntrack: {
      maxPerCore: ct.maxPerCore.value,
      min: ct.min.value,
      tcpEstablishedTimeout: formatGoDuration(ct.tcpEstablishedTimeout.value),
      tcpCloseWaitTimeout: formatGoDuration(ct.tcpCloseWaitTimeout.value),
      tcpBeLiberal: ct.tcpBeLiberal,
      udpTimeout: formatGoDuration(ct.udpTimeout.value),
      udpStreamTimeout: formatGoDuration(ct.udpStreamTimeout.value),
    },
    syncPeriod: formatGoDuration(c.syncPeriod.value),
    minSyncPeriod: formatGoDuration(c.minSyncPeriod.value),
    configSyncPeriod: formatGoDuration(c.configSyncPeriod.value),
    featureGates: Object.fromEntries(Object.entries(c.featureGates).map(([k, v]) => [k, v.value])),
  };
}

function invalidResult(errors: FieldError[], warnings: FieldError[] = []): ProxyConfigResult {
  return { status: 'invalid', errors, warnings };
}

const isUnknownField = (e: FieldError) => e.message.startsWith('unknown field "');

/** Strict decode of v1alpha1, falling back to lenient decoding when only unknown fields failed. */
function decodeV1Alpha1(raw: Record<string, unknown>, unknownFields: 'warn' | 'error') {
  const strict = v1alpha1Schema(true).safeParse(raw);
  if (strict.success) return { wire: strict.data, errors: [] as FieldError[], warnings: [] as FieldError[] };
  const problems = structuralErrors(strict.error, raw, v1alpha1Schema(true));
  const unknown = problems.filter(isUnknownField);
  const other = problems.filter((e) => !isUnknownField(e));
  if (unknownFields === 'error' || other.length > 0) {
    return { wire: undefined, errors: unknownFields === 'error' ? problems : other, warnings: unknownFields === 'error' ? [] : unknown.map(lenient) };
  }
  const loose = v1alpha1Schema(false).parse(raw);
  return { wire: loose, errors: [] as FieldError[], warnings: unknown.map(lenient) };
}

function lenient(e: FieldError): FieldError {
  return fieldWarning(e.path, `${e.message} (ignored: kube-proxy falls back to lenient decoding for v1alpha1)`);
}

export function decodeProxyConfig(raw: unknown, opts: ProxyConfigOptions = {}): ProxyConfigResult {
  const unknownFields = opts.unknownFields ?? 'warn';
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return invalidResult([fieldError([], `Invalid value: ${renderBadValue(badValueOf(raw))}: a KubeProxyConfiguration must be of type object: "${jsonTypeOf(raw)}"`)]);
  }
  const obj = raw as Record<string, unknown>;
  if (obj.kind === undefined || obj.kind === null || obj.kind === '') return invalidResult([required(['kind'])]);
  if (obj.kind !== 'KubeProxyConfiguration') {
    return invalidResult([invalid(['kind'], badValueOf(obj.kind), 'must be KubeProxyConfiguration (kube-proxy --config reads only this kind)')]);
  }
  if (obj.apiVersion === undefined || obj.apiVersion === null || obj.apiVersion === '') return invalidResult([required(['apiVersion'])]);
  if (typeof obj.apiVersion !== 'string' || !PROXY_CONFIG_VERSIONS.includes(obj.apiVersion)) {
    return invalidResult([
      invalid(['apiVersion'], badValueOf(obj.apiVersion), `no kind "KubeProxyConfiguration" is registered for version ${goQuote(String(obj.apiVersion))}; use ${PROXY_CONFIG_VERSIONS.join(' or ')}`),
    ]);
  }

  const decoded = decodeV1Alpha1(obj, unknownFields);
  const warnings = decoded.warnings;
  if (decoded.wire === undefined) return invalidResult(decoded.errors, warnings);
  const internal = fromV1Alpha1(decoded.wire);
  if (internal.errors.length > 0) return invalidResult(internal.errors, warnings);
  const overrideErrors: FieldError[] = [];
  opts.overrides?.(internal.config, overrideErrors);
  if (overrideErrors.length > 0) return invalidResult(overrideErrors, warnings);
  const release = opts.release ?? NEWEST_RELEASE;
  const validated = validateProxyConfig(internal.config, release);
  warnings.push(...validated.warnings);
  if (validated.errors.length > 0) return invalidResult(validated.errors, warnings);
  return { status: 'ok', config: toKubeProxyConfig(internal.config, release), warnings };
}

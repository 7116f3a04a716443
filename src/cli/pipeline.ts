/**
 * What every command does first: read the configuration and the manifests, resolve the
 * settings, and build the IR for the requested family. Errors come back as diagnostics,
 * never as half a result.
 */

import { formatFieldPath, type Diagnostic, type FieldError } from '../diagnostics.js';
import { readProxyConfigFile } from '../parser/config-file.js';
import { DEFAULT_MAX_INPUT_BYTES, readBoundedFile } from '../parser/input-files.js';
import { loadObjects, type LoadedObject } from '../parser/load.js';
import { mirrorEndpoints } from '../controllers/endpointslicemirroring/index.js';
import { SERVICE_NAME_LABEL } from '../parser/k8s/model/endpoint-slice.js';
import type { DecodeOptions } from '../parser/k8s/decode.js';
import type { EndpointSlice, Endpoints, Node, Pod, Service } from '../parser/k8s/types.js';
import { deriveEndpointSlices, type ControllerVersion, type DeriveResult, type EndpointsFrom } from '../controllers/endpointslice/index.js';
import { buildIR, type IRContext } from '../ir/build.js';
import { contextFor } from '../ir/context.js';
import type { ProxyIR } from '../ir/model.js';
import type { IPFamily } from '../net/ip.js';
import { diagnosticsOf, inputErrors, isKpcError, KpcError, usageError } from '../errors.js';
import { timed } from './stage-timer.js';
import { derivationNotes, derivationWarnings, detectorNote, inputWarnings, noObjectsMessage } from './input-checks.js';
import { resolveSettings, type ResolvedSettings } from '../config/settings.js';
import { applyFlags, FLAG_OF_FIELD, isFlagPath, type KnobFlags } from '../config/flags.js';
import { decodeProxyConfig, EMPTY_PROXY_CONFIG, type KubeProxyConfig } from '../parser/k8s/proxy-config.js';
import type { InternalProxyConfig } from '../parser/k8s/proxy-config/internal.js';
import { goTrimSpace } from '../go/strings.js';
import { behaviourOf, KUBE_PROXY_RELEASES, NEWEST_RELEASE, parseRelease, type KubeProxyRelease } from '../releases/index.js';
import { append } from '../arrays.js';

/** The flags of the input/node/knob groups, as commander gives them. */
export interface CommonFlags extends KnobFlags {
  filename?: string[];
  recursive?: boolean;
  namespace: string;
  config?: string;
  /** --ip-validation; undefined = the release's API server default (strict from v1.36). */
  ipValidation?: 'legacy' | 'strict';
  serviceNodePortRange: string;
  /** --max-input-size, as given (e.g. 1Gi). */
  maxInputSize?: string;
  /** --allow-empty: no objects, or a delta removing every Service, is what the user means. */
  allowEmpty?: boolean;
  ipFamily?: string;
  /** --endpoints-from: where selector Services' endpoints come from (default auto). */
  endpointsFrom?: EndpointsFrom;
}

export interface Loaded {
  objects: LoadedObject[];
  warnings: Diagnostic[];
  notes: string[];
}

/** Warnings about the input as a whole, without a position (`warning: ...` lines). */
export type GeneralWarning = string;


export function parseNodePortRange(text: string): { min: number; max: number } {
  const m = /^(\d+)-(\d+)$/.exec(goTrimSpace(text));
  if (!m) throw usageError(`--service-node-port-range: "${text}" is not a range like 30000-32767`);
  const min = Number(m[1]);
  const max = Number(m[2]);
  if (min < 1 || max > 65535 || min > max) throw usageError(`--service-node-port-range: "${text}" must be within 1-65535, low-high`);
  return { min, max };
}

/** --max-input-size: bytes, or a whole number of Ki, Mi or Gi (as Kubernetes quantities write them). */
export function parseMaxInputSize(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_INPUT_BYTES;
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(goTrimSpace(text));
  const units = { Ki: 1 << 10, Mi: 1 << 20, Gi: 1 << 30 } as const;
  const bytes = m ? Number(m[1]) * (m[2] ? units[m[2] as keyof typeof units] : 1) : NaN;
  // A Buffer holds at most 4 GiB - 1 bytes on Node 20.
  if (!(bytes >= 1 && bytes < 4 * 2 ** 30)) throw usageError(`--max-input-size: "${text}" is not a size from 1 to 3Gi, like 2Gi, 512Mi or 1048576`);
  return bytes;
}

/** --kube-proxy-version: the release whose behaviour kpc reproduces (default: the newest). */
export function releaseOf(flags: { kubeProxyVersion?: string }): KubeProxyRelease {
  if (flags.kubeProxyVersion === undefined) return NEWEST_RELEASE;
  const release = parseRelease(flags.kubeProxyVersion);
  if (!release) throw usageError(`--kube-proxy-version: "${flags.kubeProxyVersion}" is not a supported release (${KUBE_PROXY_RELEASES.join(', ')})`);
  return release;
}

/** The options that may name standard input with `-`, as commander gives them. */
const STDIN_OPTIONS: ReadonlyArray<[key: string, option: string]> = [
  ['filename', '-f'],
  ['config', '--config'],
  ['previous', '--previous'],
  ['golden', '--golden'],
  ['rules', '--rules'],
  ['events', '--events'],
];

/** Standard input can be read once: at most one option may name it. */
export function checkStdinUse(flags: object): void {
  const takers: string[] = [];
  for (const [key, option] of STDIN_OPTIONS) {
    const value = (flags as Record<string, unknown>)[key];
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) if (v === '-') takers.push(option);
  }
  if (takers.length > 1) throw usageError(`standard input ("-") can be read only once, but ${takers.join(' and ')} both name it`);
}

/** How objects are decoded and validated for these flags (the release's API server rules). */
export function decodeOptionsOf(flags: CommonFlags): DecodeOptions {
  return {
    ipValidation: flags.ipValidation ?? (behaviourOf(releaseOf(flags)).strictIPValidation ? 'strict' : 'legacy'),
    nodePortRange: parseNodePortRange(flags.serviceNodePortRange),
    relaxedServiceNames: behaviourOf(releaseOf(flags)).relaxedServiceNames,
  };
}

export function loadInput(flags: CommonFlags, readStdin: (maxBytes: number) => Uint8Array, progress?: (message: string) => void): Loaded {
  checkStdinUse(flags);
  const paths = flags.filename ?? [];
  if (paths.length === 0) throw usageError('no input: give manifests with -f FILE|DIR|- (repeatable)');
  const result = loadObjects({
    paths,
    recursive: flags.recursive ?? false,
    defaultNamespace: flags.namespace,
    readStdin,
    maxInputBytes: parseMaxInputSize(flags.maxInputSize),
    maxErrors: 100,
    timed,
    ...(progress ? { progress } : {}),
    ...decodeOptionsOf(flags),
  });
  if (result.errors.length > 0) throw inputErrors(result.errors, result.warnings, result.notes);
  if (result.objects.length === 0 && !flags.allowEmpty) {
    throw new KpcError('input', 'input.no-objects', noObjectsMessage(result.read, paths), undefined, { diagnostics: [], warnings: result.warnings, notes: result.notes });
  }
  return { objects: result.objects, warnings: result.warnings, notes: result.notes };
}

/**
 * The one configuration kube-proxy runs with: the --config file (a KubeProxyConfiguration, or
 * the kube-proxy ConfigMap) or kube-proxy's defaults, the flags written in (config/flags.ts),
 * validated once with kube-proxy's rules. A problem in the file is an input error at its place;
 * a problem with a flag's value, a usage error naming the flag.
 */
export function loadConfig(
  path: string | undefined,
  flags: KnobFlags,
  readStdin: (maxBytes: number) => Uint8Array,
  maxBytes = DEFAULT_MAX_INPUT_BYTES,
): { config: KubeProxyConfig; warnings: Diagnostic[] } {
  if (path === undefined) return { config: configOf(flags), warnings: [] };
  const overrides = (c: InternalProxyConfig, errors: FieldError[]) => applyFlags(c, flags, errors);
  const release = releaseOf(flags);
  let bytes: Uint8Array;
  try {
    bytes = path === '-' ? readStdin(maxBytes) : readBoundedFile(path, maxBytes);
  } catch (e) {
    if (isKpcError(e, 'input.unreadable')) throw inputErrors(diagnosticsOf(e));
    if (isKpcError(e, 'path.unreadable')) throw e.withOption('--config');
    throw e;
  }
  const read = readProxyConfigFile(path === '-' ? '<stdin>' : path, bytes, { overrides, release });
  if (read.errors.length > 0) throw inputErrors(read.errors, read.warnings);
  if (read.overrideErrors.length > 0) throw flagErrors(read.overrideErrors);
  return { config: read.config!, warnings: read.warnings };
}

/**
 * The configuration of a configuration document (kube-proxy's defaults when none) with the
 * flags written in; problems are usage errors (for a file, loadConfig places them in it).
 */
export function configOf(flags: KnobFlags, doc: unknown = EMPTY_PROXY_CONFIG): KubeProxyConfig {
  const decoded = decodeProxyConfig(doc, { overrides: (c, errors) => applyFlags(c, flags, errors), release: releaseOf(flags) });
  if (decoded.status !== 'ok') throw flagErrors(decoded.errors);
  return decoded.config;
}

/** Problems with what the flags made of the configuration, each named by its flag. */
function flagErrors(errors: readonly FieldError[]): KpcError {
  const lines = errors.map((e) => {
    const field = formatFieldPath(e.path);
    const flag = isFlagPath(e.path) ? '' : FLAG_OF_FIELD[field.replace(/\[\d+\]$/, '')];
    return flag ? `${flag} (${field}): ${e.message}` : `${field}: ${e.message}`;
  });
  return usageError(lines.join('; '));
}

/**
 * The IR and what to tell the user about the input. The objects it was built from are not
 * kept: at 20,000 Services they are hundreds of MB that every later garbage collection
 * would have to walk again.
 */
export interface Compiled {
  settings: ResolvedSettings;
  family: IPFamily;
  ir: ProxyIR;
  /** What the IR was built with (kpc watch builds one Service's ports with it). */
  context: IRContext;
  /** The configuration's warnings, then the manifests'. */
  warnings: Diagnostic[];
  /** Warnings about the input as a whole. */
  general: GeneralWarning[];
  notes: string[];
}

export interface Partitioned {
  services: Service[];
  /** The slices kube-proxy reads: the input's (less those derived ones replace), derived and mirrored ones. */
  slices: EndpointSlice[];
  legacy: Endpoints[];
  nodes: Node[];
  pods: Pod[];
  /** The EndpointSlices derived from Pods (--endpoints-from). */
  derivation: DeriveResult;
  /** spec.cidrs of every ServiceCIDR, in input order (nftables mode's unallocated-ClusterIP drop). */
  serviceCIDRs: string[];
}

/**
 * Sort the loaded objects by kind, derive selector Services' slices from Pods (the
 * EndpointSlice controller, --endpoints-from) and convert legacy Endpoints to slices (the
 * mirroring controller).
 */
export function partitionObjects(objects: readonly LoadedObject[], opts: { endpointsFrom?: EndpointsFrom; release: ControllerVersion }): Partitioned {
  const services: Service[] = [];
  const given: EndpointSlice[] = [];
  const nodes: Node[] = [];
  const legacy: Endpoints[] = [];
  const pods: Pod[] = [];
  const serviceCIDRs: string[] = [];
  for (const { object } of objects) {
    switch (object.kind) {
      case 'Service':
        services.push(object);
        break;
      case 'EndpointSlice':
        given.push(object);
        break;
      case 'Endpoints':
        legacy.push(object);
        break;
      case 'Node':
        nodes.push(object);
        break;
      case 'Pod':
        pods.push(object);
        break;
      case 'ServiceCIDR':
        serviceCIDRs.push(...object.spec.cidrs);
        break;
    }
  }
  const derivation = deriveEndpointSlices({ services, pods, nodes, slices: given }, { endpointsFrom: opts.endpointsFrom ?? 'auto', release: opts.release });
  const slices: EndpointSlice[] = [...derivation.kept, ...derivation.derived];
  append(slices, mirroredSlices(legacy, slices, services, opts.release));
  return { services, slices, legacy, nodes, pods, derivation, serviceCIDRs };
}

/**
 * The slices the mirroring controller makes of legacy Endpoints, next to `slices` (kube-proxy
 * reads the mirrored ones). The controller mirrors Endpoints only for Services without a
 * selector; kpc uses an Endpoints object only when the Service has no EndpointSlice at all, so
 * manifests that carry both are not counted twice. Per object, so kpc watch's fast path makes
 * one Service's with it.
 */
export function mirroredSlices(legacy: readonly Endpoints[], slices: readonly EndpointSlice[], services: readonly Service[], release: ControllerVersion): EndpointSlice[] {
  if (legacy.length === 0) return [];
  const withSlices = new Set(slices.map((s) => `${s.metadata.namespace}/${s.metadata.labels[SERVICE_NAME_LABEL] ?? ''}`));
  const serviceByKey = new Map(services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const out: EndpointSlice[] = [];
  for (const ep of legacy) {
    const key = `${ep.metadata.namespace}/${ep.metadata.name}`;
    if (withSlices.has(key)) continue;
    out.push(...mirrorEndpoints(ep, serviceByKey.get(key), { release }).slices);
  }
  return out;
}

export function compileInput(flags: CommonFlags, readStdin: (maxBytes: number) => Uint8Array, progress?: (message: string) => void): Compiled {
  checkStdinUse(flags);
  const { config, warnings: configWarnings } = loadConfig(flags.config, flags, readStdin, parseMaxInputSize(flags.maxInputSize));
  const { objects, warnings, notes } = loadInput(flags, readStdin, progress);
  progress?.(`building the model: ${objects.length} objects`);
  return timed('ir', () => compileObjects(objects, config, flags, [...configWarnings, ...warnings], notes));
}

/**
 * The IR of objects already loaded (compileInput's second half; kpc watch rebuilds it from
 * the objects it holds).
 */
export function compileObjects(
  objects: readonly LoadedObject[],
  config: KubeProxyConfig,
  flags: CommonFlags,
  warnings: Diagnostic[] = [],
  notes: string[] = [],
): Compiled {
  {
    const input = partitionObjects(objects, { endpointsFrom: flags.endpointsFrom ?? 'auto', release: releaseOf(flags) });
    const settings = resolveSettings(config, flags, input.nodes, input.serviceCIDRs);
    const family: IPFamily = flags.ipFamily === 'ipv6' ? 'IPv6' : 'IPv4';
    const context = contextFor(settings.proxy, family);
    const ir = buildIR({ services: input.services, slices: input.slices }, context);
    const namedBy = nodeNamedBy(config, flags);
    const general = [...settings.warnings, ...inputWarnings(input, settings.proxy, namedBy), ...derivationWarnings(input.derivation)];
    const detector = input.services.length > 0 ? detectorNote(ir, settings.proxy) : undefined;
    const all = [...notes, ...derivationNotes(input.derivation)];
    return { settings, family, ir, context, warnings, general, notes: detector ? [...all, detector] : all };
  }
}

/** Which setting names the node, for the warning when no Node of that name is in the input. */
function nodeNamedBy(config: KubeProxyConfig, flags: CommonFlags): string | undefined {
  return flags.hostnameOverride !== undefined ? '--hostname-override' : config.hostnameOverride !== '' ? 'hostnameOverride in --config' : undefined;
}

/**
 * Everything compileObjects takes from the Nodes, as one comparable text: the settings (the
 * node chosen, its addresses, zone and pod CIDRs) and the warning about the Nodes. kpc watch
 * compares it before and after a Node change: the same text means the same IR (with no Pods
 * held, no slice depends on the Nodes), so nothing to rebuild. Throws as compile would.
 */
export function nodeDependence(nodes: readonly Node[], config: KubeProxyConfig, flags: CommonFlags): string {
  const settings = resolveSettings(config, flags, nodes);
  return JSON.stringify([settings, inputWarnings({ services: [], slices: [], legacy: [], nodes }, settings.proxy, nodeNamedBy(config, flags))]);
}

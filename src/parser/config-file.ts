/**
 * The file `--config` names: a KubeProxyConfiguration, as kube-proxy reads it on a node, or the
 * kube-proxy ConfigMap that holds it (`kubectl -n kube-system get cm kube-proxy -o yaml`,
 * whose `data."config.conf"` is what kubeadm mounts as the node's file). Operators have the
 * ConfigMap, not the node's file. Every problem keeps a position in the file the user gave.
 */

import { formatFieldPath, type Diagnostic, type FieldError } from '../diagnostics.js';
import { readDocuments } from './documents.js';
import { checkText } from './input-files.js';
import { diagnosticsOf, isKpcError } from '../errors.js';
import { decodeProxyConfig, type KubeProxyConfig, type ProxyConfigOptions } from './k8s/proxy-config.js';
import type { RawObject } from './raw-objects.js';

/** The key kubeadm (and most installers) use in the kube-proxy ConfigMap. */
export const CONFIG_MAP_KEY = 'config.conf';

export interface ConfigFileResult {
  /** Undefined when there are errors. */
  config: KubeProxyConfig | undefined;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** Problems with values the overrides wrote (they are at no place in the file). */
  overrideErrors: FieldError[];
}

/** A path no file holds: a value an override (a flag) wrote, named by the flag. */
const isOverridePath = (e: FieldError) => typeof e.path[0] === 'string' && e.path[0].startsWith('--');

/** Where an embedded document's line:column lands in the file. */
type Place = (at: { line: number; column: number }) => { line: number; column: number; note: string };

const unchanged: Place = (at) => ({ ...at, note: '' });

export function readProxyConfigFile(path: string, bytes: Uint8Array, options: ProxyConfigOptions = {}): ConfigFileResult {
  const outer = readOne(path, bytes, unchanged);
  if ('errors' in outer) return { config: undefined, errors: outer.errors, warnings: [], overrideErrors: [] };
  let doc = outer.doc;
  let place = unchanged;
  if (isConfigMap(doc.value)) {
    const embedded = configMapDocument(path, bytes, doc);
    if ('errors' in embedded) return { config: undefined, errors: embedded.errors, warnings: [], overrideErrors: [] };
    ({ doc, place } = embedded);
  }
  const decoded = decodeProxyConfig(doc.value, options);
  const locate = (e: FieldError): Diagnostic => {
    const at = place(doc.origin.locate(e.path));
    return { file: path, line: at.line, column: at.column, path: formatFieldPath(e.path), message: `${at.note}${e.message}`, severity: e.severity };
  };
  const warnings = decoded.warnings.map(locate);
  if (decoded.status !== 'ok') {
    const errors = decoded.errors.filter((e) => !isOverridePath(e)).map(locate);
    return { config: undefined, errors, warnings, overrideErrors: decoded.errors.filter(isOverridePath) };
  }
  return { config: decoded.config, errors: [], warnings, overrideErrors: [] };
}

function fileProblem(path: string, message: string, at = { line: 1, column: 1 }): Diagnostic {
  return { file: path, line: at.line, column: at.column, path: '', message, severity: 'error' };
}

/** The single document of a text, or why there is not exactly one. */
function readOne(path: string, bytes: Uint8Array, place: Place): { doc: RawObject } | { errors: Diagnostic[] } {
  let read;
  try {
    read = readDocuments(checkText(path, bytes));
  } catch (e) {
    if (isKpcError(e, 'input.unreadable')) return { errors: [...diagnosticsOf(e)] };
    throw e;
  }
  if (read.diagnostics.length > 0) {
    return { errors: read.diagnostics.map((d) => ({ ...d, ...withNote(place, d), file: path })) };
  }
  if (read.objects.length !== 1) {
    return { errors: [fileProblem(path, `expected exactly one KubeProxyConfiguration (or the kube-proxy ConfigMap), found ${read.objects.length} documents`)] };
  }
  return { doc: read.objects[0]! };
}

function withNote(place: Place, d: Diagnostic): { line: number; column: number; message: string } {
  const at = place(d);
  return { line: at.line, column: at.column, message: `${at.note}${d.message}` };
}

function isConfigMap(value: unknown): value is { data?: unknown } {
  return value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'ConfigMap';
}

/**
 * The KubeProxyConfiguration inside a ConfigMap: `data."config.conf"`, or else the one data
 * key whose text is a KubeProxyConfiguration. A block scalar (`config.conf: |`, how kubectl
 * prints it) maps line for line into the file; any other string maps to the key's place.
 */
function configMapDocument(path: string, bytes: Uint8Array, cm: RawObject): { doc: RawObject; place: Place } | { errors: Diagnostic[] } {
  const data = (cm.value as { data?: unknown }).data;
  const entries = data !== null && typeof data === 'object' ? Object.entries(data as Record<string, unknown>).filter(([, v]) => typeof v === 'string') : [];
  const chosen = entries.find(([k]) => k === CONFIG_MAP_KEY) ?? soleConfiguration(entries as Array<[string, string]>);
  if (!chosen) {
    const keys = entries.map(([k]) => k).join(', ') || 'none';
    return { errors: [fileProblem(path, `a ConfigMap without data."${CONFIG_MAP_KEY}" holding a KubeProxyConfiguration (its data keys: ${keys})`, cm.origin.locate(['data']))] };
  }
  const [key, text] = chosen as [string, string];
  const place = embeddedPlace(bytes, cm.origin.locate(['data', key]), key);
  const inner = readOne(path, Buffer.from(text, 'utf8'), place);
  if ('errors' in inner) return inner;
  return { doc: inner.doc, place };
}

function soleConfiguration(entries: Array<[string, string]>): [string, string] | undefined {
  const candidates = entries.filter(([, v]) => /^\s*kind:\s*KubeProxyConfiguration\s*$/m.test(v) || /"kind"\s*:\s*"KubeProxyConfiguration"/.test(v));
  return candidates.length === 1 ? candidates[0] : undefined;
}

function embeddedPlace(bytes: Uint8Array, value: { line: number; column: number }, key: string): Place {
  const text = Buffer.from(bytes).toString('utf8');
  const lines = text.split('\n');
  const head = lines[value.line - 1]?.slice(value.column - 1) ?? '';
  if (/^[|>]/.test(head)) {
    // Content starts on the next line, indented as its first non-empty line is.
    const first = lines.slice(value.line).find((l) => l.trim() !== '') ?? '';
    const indent = first.length - first.trimStart().length;
    return (at) => ({ line: value.line + at.line, column: indent + at.column, note: '' });
  }
  return (at) => ({ ...value, note: `in data."${key}" at ${at.line}:${at.column}: ` });
}

/**
 * Diagnostics: how every stage reports a problem with the input.
 *
 * Validators speak in Kubernetes field paths (`spec.ports[0].port`) and API-server messages
 * (`Invalid value: 0: must be between 1 and 65535, inclusive`); they know nothing of files.
 * The reader attaches a location (file, line, column) by looking the path up in the YAML
 * document the object came from. Rendering gives the contract's one-line form:
 *
 *   file:line:column: field.path: message
 */

/** A map key in a field path (labels, annotations): rendered `[key]`, like field.Path.Key. */
export interface MapKey {
  key: string;
}

/** A Kubernetes field path as a list of fields, indices and map keys: ['spec', 'ports', 0, 'port']. */
export type FieldPath = ReadonlyArray<string | number | MapKey>;

export type Severity = 'error' | 'warning';

/** One problem with one object, as an API validator would report it. */
export interface FieldError {
  path: FieldPath;
  /** The API server's ErrorBody text, e.g. `Required value` or `Invalid value: "x": ...`. */
  message: string;
  severity: Severity;
  /**
   * Warnings of one group are shown a few at a time and then counted (one orphan slice per
   * Service of a namespace is one story, not 20,000 lines); without a group, warnings with
   * the same path and message form a group.
   */
  group?: string;
}

/** Where an object came from; only the reader creates these. */
export interface ObjectOrigin {
  /** The file name as the user gave it (`-` is shown as `<stdin>`). */
  file: string;
  /** Resolve a field path of this object to a 1-based line and column (nearest existing node). */
  locate(path: FieldPath): { line: number; column: number };
}

/** A rendered diagnostic: a field error with its place in the input. */
export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  /** Rendered field path, '' when the problem is not about one field (e.g. YAML syntax). */
  path: string;
  message: string;
  severity: Severity;
  /** The object, in a file that holds several (a List, a stream): `Service shop/web`. */
  object?: string;
}

/** `spec.ports[0].port`, `metadata.labels[app]`: the rendering of Go's field.Path. */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'object') out += `[${part.key}]`;
    else if (out === '') out = part;
    else out += `.${part}`;
  }
  return out;
}

export function fieldError(path: FieldPath, message: string): FieldError {
  return { path, message, severity: 'error' };
}

export function fieldWarning(path: FieldPath, message: string): FieldError {
  return { path, message, severity: 'warning' };
}

export function locateError(origin: ObjectOrigin, e: FieldError): Diagnostic {
  const { line, column } = origin.locate(e.path);
  return { file: origin.file, line, column, path: formatFieldPath(e.path), message: e.message, severity: e.severity };
}

/** `file:line:column: field.path: message` (warnings say so after the position). */
export function renderDiagnostic(d: Diagnostic): string {
  const where = `${d.file}:${d.line}:${d.column}`;
  const field = d.path === '' ? d.message : `${d.path}: ${d.message}`;
  const what = d.object === undefined ? field : `${d.object}: ${field}`;
  return d.severity === 'warning' ? `${where}: warning: ${what}` : `${where}: ${what}`;
}

/**
 * kpc's one error type. Every problem kpc reports is a KpcError with
 *
 *   kind      who must act: `input` (the manifests, a --config, a --previous file: fix the
 *             input), `usage` (the command line, a path, a write the system refused) or
 *             `internal` (a bug in kpc);
 *   code      a stable name (`input.invalid`, `previous.syntax`, ...) that tests and tools
 *             match on, never the message;
 *   at        where, when it is one place in one file (line, and column when known);
 *   report    the diagnostics, warnings and notes found so far, for input problems.
 *
 * The exit code follows from the kind, in one place (exitCodeFor): cli.md's 2 for input and
 * usage, 3 for internal.
 */

import type { Diagnostic } from './diagnostics.js';

export type ErrorKind = 'input' | 'usage' | 'internal';

/** The stable codes, by what went wrong. */
export type ErrorCode =
  /** Manifests or a configuration that the API server or kube-proxy would refuse (see report). */
  | 'input.invalid'
  /** The input held no object kpc compiles. */
  | 'input.no-objects'
  /** An input file that is not text, or over the size limit. */
  | 'input.unreadable'
  /** A path that cannot be opened (missing, a directory where a file is meant, permissions). */
  | 'path.unreadable'
  /** A previous state (--previous, --golden) that does not read: a rule, an ipvsadm or ipset line, a bundle. */
  | 'previous.unreadable'
  /** A delta that would do what the input did not ask for (remove every Service). */
  | 'delta.refused'
  /** Flags and arguments. */
  | 'usage.flags'
  /** A question trace or explain cannot answer from this input (no such Service, unknown chain). */
  | 'query.unanswerable'
  /** A DNS name that cannot be written (too long, a bad label). */
  | 'dns.name'
  /** Writing -o or stdout failed. */
  | 'output.write'
  /** kpc refused to write text that could break out of its syntax (a validation hole). */
  | 'internal.unsafe-output'
  | 'internal.bug';

export interface ErrorPosition {
  file: string;
  line?: number;
  column?: number;
}

export interface ErrorReport {
  diagnostics: readonly Diagnostic[];
  warnings: readonly Diagnostic[];
  notes: readonly string[];
}

export class KpcError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: ErrorCode,
    message: string,
    readonly at?: ErrorPosition,
    readonly report?: ErrorReport,
  ) {
    super(message);
    this.name = 'KpcError';
  }

  /** The same problem, placed in `file` (readers know the line; their callers know the file). */
  inFile(file: string, option?: string): KpcError {
    const where = option ? `${option} ${file}` : file;
    return new KpcError(this.kind, this.code, this.message, { ...this.at, file: where }, this.report);
  }

  /** The same problem at `line` (a rule's parser knows what is wrong; the file reader knows where). */
  atLine(line: number): KpcError {
    return new KpcError(this.kind, this.code, this.message, { file: this.at?.file ?? '', line }, this.report);
  }

  /** The same problem, told as being about `option`'s value (`--config: the path "x" does not exist`). */
  withOption(option: string): KpcError {
    return new KpcError(this.kind, this.code, `${option}: ${this.message}`, this.at, this.report);
  }

  /** `error: ...` text without the prefix: `FILE:LINE: message` when placed. */
  describe(): string {
    if (!this.at || this.at.file === '') return this.at?.line !== undefined ? `line ${this.at.line}: ${this.message}` : this.message;
    const line = this.at.line !== undefined ? `:${this.at.line}${this.at.column !== undefined ? `:${this.at.column}` : ''}` : '';
    return `${this.at.file}${line}: ${this.message}`;
  }
}

export const EXIT = {
  ok: 0,
  /** diff and check: something differs (kubectl diff's 1). */
  differs: 1,
  badInput: 2,
  internal: 3,
} as const;

/** The exit code for an error, the one place kinds become codes. */
export function exitCodeFor(e: KpcError): number {
  return e.kind === 'internal' ? EXIT.internal : EXIT.badInput;
}

/** Something the user must change on the command line (or the paths it names). */
export function usageError(message: string): KpcError {
  return new KpcError('usage', 'usage.flags', message);
}

export function isKpcError(e: unknown, code?: ErrorCode): e is KpcError {
  return e instanceof KpcError && (code === undefined || e.code === code);
}

/** An input problem that is one diagnostic (a file that is not text, too large, a syntax error). */
export function inputFileError(d: Diagnostic): KpcError {
  return new KpcError('input', 'input.unreadable', d.message, { file: d.file, line: d.line, column: d.column }, { diagnostics: [d], warnings: [], notes: [] });
}

/** Problems in the input, each with its place (the API server's or kube-proxy's words). */
export function inputErrors(diagnostics: readonly Diagnostic[], warnings: readonly Diagnostic[] = [], notes: readonly string[] = []): KpcError {
  return new KpcError('input', 'input.invalid', `${diagnostics.length} problem(s) in the input`, undefined, { diagnostics, warnings, notes });
}

/** The diagnostics an input error carries (one made from its message when it has none). */
export function diagnosticsOf(e: KpcError): readonly Diagnostic[] {
  if (e.report && e.report.diagnostics.length > 0) return e.report.diagnostics;
  return [{ file: e.at?.file ?? '', line: e.at?.line ?? 1, column: e.at?.column ?? 1, path: '', message: e.message, severity: 'error' }];
}

/** How diagnostics and notes reach the user: stderr, coloured only on a terminal. */

import { Chalk } from 'chalk';
import { renderDiagnostic, type Diagnostic } from '../diagnostics.js';
import type { Io } from './io.js';

export function printDiagnostics(io: Io, diagnostics: readonly Diagnostic[]): void {
  const chalk = new Chalk({ level: io.stderrIsTTY ? 1 : 0 });
  for (const d of diagnostics) {
    const line = renderDiagnostic(d);
    io.stderr((d.severity === 'error' ? chalk.red(line) : chalk.yellow(line)) + '\n');
  }
}

/** Notes say what kpc did with the input; --quiet silences them (never warnings or errors). */
export function reportNotes(io: Io, notes: readonly string[]): void {
  if (io.quiet) return;
  for (const n of notes) io.stderr(`note: ${n}\n`);
}

/** Warnings about the input as a whole, without a position. */
export function reportWarnings(io: Io, warnings: readonly string[]): void {
  const chalk = new Chalk({ level: io.stderrIsTTY ? 1 : 0 });
  for (const w of warnings) io.stderr(chalk.yellow(`warning: ${w}`) + '\n');
}

/** What every compiling command tells first: the input's warnings, then the notes. */
export function reportCompiled(io: Io, compiled: { warnings: readonly Diagnostic[]; general: readonly string[]; notes: readonly string[] }): void {
  printDiagnostics(io, compiled.warnings);
  reportWarnings(io, compiled.general);
  reportNotes(io, compiled.notes);
}

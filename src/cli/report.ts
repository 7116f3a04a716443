/** How diagnostics and notes reach the user: stderr, coloured only on a terminal. */

import { Chalk } from 'chalk';
import { renderDiagnostic, type Diagnostic } from '../parser/diagnostics.js';
import type { Io } from './io.js';

export function printDiagnostics(io: Io, diagnostics: readonly Diagnostic[]): void {
  const chalk = new Chalk({ level: io.stderrIsTTY ? 1 : 0 });
  for (const d of diagnostics) {
    const line = renderDiagnostic(d);
    io.stderr((d.severity === 'error' ? chalk.red(line) : chalk.yellow(line)) + '\n');
  }
}

export function reportNotes(io: Io, notes: readonly string[]): void {
  for (const n of notes) io.stderr(`note: ${n}\n`);
}

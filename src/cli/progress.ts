/**
 * Progress for long work, on stderr, only when stderr is a terminal (never in pipes, logs or
 * CI output): one line, rewritten at most five times a second, cleared when the work ends.
 */

import type { Io } from './io.js';

export interface Progress {
  (message: string): void;
  done(): void;
}

const INTERVAL_MS = 200;

export function progressFor(io: Io): Progress {
  if (!io.stderrIsTTY) {
    const silent = (() => undefined) as unknown as Progress;
    silent.done = () => undefined;
    return silent;
  }
  let last = 0;
  let shown = false;
  const report = ((message: string) => {
    const now = Date.now();
    if (now - last < INTERVAL_MS) return;
    last = now;
    shown = true;
    io.stderr(`\r\x1b[K${message}`);
  }) as Progress;
  report.done = () => {
    if (shown) io.stderr('\r\x1b[K');
    shown = false;
  };
  return report;
}

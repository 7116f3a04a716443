/**
 * SIGINT, SIGTERM and SIGHUP while an -o target is being written.
 *
 * kpc's writes are synchronous: from the first temporary entry to the final rename (or to the
 * removal of everything after a failure) no JavaScript signal handler can run. Before the first
 * write, kpc keeps the default action (it dies at once; nothing of its own exists yet). Right
 * before a write creates its first temporary entry, the writers call deferSignalsWhileWriting,
 * which installs handlers: a signal arriving during the write is then held by Node until the
 * write has ended, committed or rolled back, and on the next turn of the event loop (bin/kpc.js
 * gives it one after main returns) kpc dies of that signal as it would have (re-raised with the
 * default action, so a shell reports 128+N; exit 128+N if the re-raise does not end it). So a
 * signal never leaves a temporary file or directory behind. SIGKILL cannot be caught: what a
 * killed run leaves is swept by the next write to the same target (file.ts, bundle.ts).
 *
 * (A signal the parent set to be ignored is not ignored by kpc, nor by any Node program: Node
 * resets every inherited disposition but SIGPIPE's and SIGXFSZ's at startup, node.cc
 * ResetSignalHandlers. kpc installs handlers only where the default action, dying, was in
 * force anyway.)
 *
 * Only the real CLI (bin/kpc.js) turns this on (handleSignalsDuringWrites); kpc run in-process
 * (the tests' runKpc) leaves its host's signals alone.
 */

const SIGNALS = [
  ['SIGHUP', 1],
  ['SIGINT', 2],
  ['SIGTERM', 15],
] as const;

let enabled = false;
let armed = false;

/** bin/kpc.js: let the writers install the handlers (above). */
export function handleSignalsDuringWrites(): void {
  enabled = true;
}

/** Called by each writer right before it creates its first temporary entry. */
export function deferSignalsWhileWriting(): void {
  if (!enabled || armed) return;
  armed = true;
  const installed: [NodeJS.Signals, () => void][] = [];
  for (const [name, n] of SIGNALS) {
    const onSignal = (): void => {
      for (const [s, h] of installed) process.removeListener(s, h);
      // No listener left: Node restores the default action, and the signal ends the process.
      process.kill(process.pid, name);
      process.exit(128 + n);
    };
    installed.push([name, onSignal]);
    process.on(name, onSignal);
  }
}

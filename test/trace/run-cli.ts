/**
 * Run `kpc trace` / `kpc explain` in-process, the way src/cli/main.ts runs the other commands
 * (main.ts is not wired to them here: the commands are added to a program of our own).
 */

import { Command } from 'commander';
import { handleError } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { addExplainCommand } from '../../src/cli/commands/explain.js';
import { addTraceCommand } from '../../src/cli/commands/trace.js';
import type { KpcRun } from '../helpers/run-kpc.js';

export async function runTraceCli(args: readonly string[], opts: { stdin?: string; tty?: boolean } = {}): Promise<KpcRun> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: (chunks) => {
      for (const c of chunks) stdout += c;
    },
    stderr: (text) => {
      stderr += text;
    },
    stderrIsTTY: opts.tty ?? false,
    stdoutIsTTY: opts.tty ?? false,
    readStdin: () => Buffer.from(opts.stdin ?? ''),
  };
  let code = 0;
  const program = new Command('kpc').exitOverride().configureOutput({ writeOut: (s) => io.stdout([s]), writeErr: (s) => io.stderr(s) });
  addTraceCommand(program, io, (c) => (code = c));
  addExplainCommand(program, io, (c) => (code = c));
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (e) {
    code = handleError(e, io);
  }
  return { code, stdout, stderr };
}

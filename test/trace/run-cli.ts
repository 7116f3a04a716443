/**
 * Run `kpc trace` / `kpc explain` in-process, with a terminal or not (run-kpc.ts has no TTY).
 */

import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
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
  const code = await main(args, io);
  return { code, stdout, stderr };
}

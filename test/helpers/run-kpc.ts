/**
 * Run kpc in-process, as a user would from the shell, and capture what it prints.
 */

import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { inputTooLarge } from '../../src/parser/input-files.js';

export interface KpcRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runKpc(args: readonly string[], stdin: string | Uint8Array = ''): Promise<KpcRun> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: (chunks) => {
      for (const c of chunks) stdout += typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
    },
    stderr: (text) => {
      stderr += text;
    },
    stderrIsTTY: false,
    stdoutIsTTY: false,
    readStdin: (maxBytes) => {
      const bytes = typeof stdin === 'string' ? Buffer.from(stdin) : stdin;
      if (bytes.length > maxBytes) throw inputTooLarge('<stdin>', maxBytes, bytes.length);
      return bytes;
    },
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

/** The `-A` rules of one chain of one table, in output order. */
export function chainRules(restoreText: string, table: string, chain: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const line of restoreText.split('\n')) {
    if (line.startsWith('*')) current = line.slice(1);
    else if (current === table && line.startsWith(`-A ${chain} `)) out.push(line);
  }
  return out;
}

/**
 * Reading a previous state (`--previous PATH`): kpc's own output or a node's iptables-save.
 */

import { DEFAULT_MAX_INPUT_BYTES, InputFileError, PathError, readBoundedFile } from '../../parser/input-files.js';
import { readState, type IptablesState, type RuleFacts } from '../../diff/iptables/state.js';
import { RulesReadError } from '../../lang/iptables/read.js';
import { UsageError } from '../exit-codes.js';

/** Reads stdin whole, under a size limit (Io.readStdin). */
export type StdinReader = (maxBytes: number) => Uint8Array;

/**
 * A text input named by an option (--previous, --golden, --rules), under the input size
 * limit; `-` is standard input (checkStdinUse makes sure only one option takes it).
 */
export function readTextFile(path: string, option: string, stdin: StdinReader, maxBytes = DEFAULT_MAX_INPUT_BYTES): string {
  try {
    const bytes = path === '-' ? stdin(maxBytes) : readBoundedFile(path, maxBytes, false);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  } catch (e) {
    if (e instanceof InputFileError) throw new UsageError(`${option} ${path}: ${e.diagnostic.message}`);
    if (e instanceof PathError) throw e.forOption(option);
    throw e;
  }
}

export function readPreviousState(path: string, facts: RuleFacts, stdin: StdinReader): IptablesState {
  const text = readTextFile(path, '--previous', stdin);
  return withPrevious(path, () => readState(text, facts));
}

/**
 * Run work that reads the previous state's rules: they are parsed lazily, so a malformed
 * rule can surface late; it is reported as the user's file and line, never as a crash.
 */
export function withPrevious<T>(path: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (e instanceof RulesReadError) throw new UsageError(`--previous ${path}:${e.line}: ${e.detail}`);
    throw e;
  }
}

/**
 * Reading a previous state (`--previous PATH`): kpc's own output or a node's iptables-save.
 */

import { DEFAULT_MAX_INPUT_BYTES, InputFileError, readBoundedFile } from '../../parser/input-files.js';
import { readState, type IptablesState, type RuleFacts } from '../../diff/state.js';
import { RulesReadError } from '../../trace/read.js';
import { UsageError } from '../exit-codes.js';

/** A text input named by a flag (--previous, --golden, --rules), under the input size limit. */
export function readTextFile(path: string, what: string, maxBytes = DEFAULT_MAX_INPUT_BYTES): string {
  try {
    return readBoundedFile(path, maxBytes, false).toString('utf8');
  } catch (e) {
    if (e instanceof InputFileError) throw new UsageError(`${what} ${path}: ${e.diagnostic.message}`);
    throw e;
  }
}

export function readPreviousState(path: string, facts: RuleFacts): IptablesState {
  const text = readTextFile(path, '--previous');
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

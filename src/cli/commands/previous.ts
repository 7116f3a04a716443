/**
 * Reading a previous state (`--previous PATH`): kpc's own output or a node's iptables-save.
 */

import { readFileSync } from 'node:fs';
import { readState, type IptablesState, type RuleFacts } from '../../diff/state.js';
import { RulesReadError } from '../../trace/read.js';
import { UsageError } from '../exit-codes.js';

export function readTextFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`${what} ${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
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

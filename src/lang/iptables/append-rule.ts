/**
 * One appended or inserted rule read into its chain: what every reading of iptables text does
 * with an `-A` / `-I` line (read.ts, whether it reads eagerly or waits; indexed-read.ts).
 */

import type { Chain, Rule, Table } from './model.js';
import { parseRuleArgs } from './parse-rule.js';
import { tokenize, type Token } from './tokenize.js';
import { isKpcError } from '../../errors.js';
import { lineError } from '../line-error.js';
import type { TextSource } from '../text-source.js';

/**
 * `-A` / `-I` (`insert`) of `tokens` (the line's, command and chain first) into `chain` at its
 * end or the insert's position.
 */
export function appendRule(t: Table, chain: Chain, tokens: Token[], line: string, lineNo: number, warnings: string[], insert = false): void {
  let skip = 2;
  let position = chain.rules.length;
  if (insert) {
    position = 0;
    const first = tokens[2];
    if (first && /^\d+$/.test(first.text) && !first.quoted) {
      position = Math.max(0, Math.min(chain.rules.length, Number(first.text) - 1));
      skip = 3;
    }
  }
  const rule = ruleOfTokens(t, chain.name, tokens, skip, line, lineNo, warnings);
  if (position === chain.rules.length) {
    chain.rules.push(rule);
    rule.index = chain.rules.length;
  } else {
    chain.rules.splice(position, 0, rule);
    chain.rules.forEach((r, k) => (r.index = k + 1));
  }
}

/**
 * The rule of a line's tokens after the first `skip` (command, chain, an insert's position),
 * not yet placed (index 0); a jump to a chain the table does not declare is a warning.
 */
function ruleOfTokens(t: Table, chain: string, tokens: Token[], skip: number, line: string, lineNo: number, warnings: string[]): Rule {
  const arg = tokens[1]!.text;
  let spec = line.slice(line.indexOf(arg) + arg.length).trim();
  if (skip === 3) spec = spec.replace(/^\d+\s*/, '');
  let parsed;
  try {
    parsed = parseRuleArgs(tokens.slice(skip), (name) => t.chains.has(name));
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) throw lineError(lineNo, `${e.message} (in: ${line})`);
    throw e;
  }
  const rule: Rule = { table: t.name, chain, index: 0, line: lineNo, spec, ...parsed };
  if (rule.target?.kind === 'chain' && !t.chains.has(rule.target.chain)) {
    warnings.push(`line ${lineNo}: jump to chain ${rule.target.chain}, which is not declared in table ${t.name}`);
  }
  return rule;
}

/**
 * How a LazyChain reads the `-A` lines that waited: `text` holds them, `rule` parses the one at
 * start..end (its line number lineNo) into an unplaced rule of the chain.
 */
export interface WaitingLines {
  text: TextSource;
  rule(chain: Chain & { table: Table }, lineNo: number, start: number, end: number): Rule;
}

export function waitingLines(text: TextSource, warnings: string[]): WaitingLines {
  return {
    text,
    rule(chain, lineNo, start, end) {
      const line = withoutCounters(text.slice(start, end).replace(/\r$/, '').trim());
      return ruleOfTokens(chain.table, chain.name, tokensOf(line, lineNo), 2, line, lineNo, warnings);
    },
  };
}

/** iptables-save -c puts the counters first. */
export function withoutCounters(line: string): string {
  const counters = /^\[\d+:\d+\]\s+/.exec(line);
  return counters ? line.slice(counters[0].length) : line;
}

export function tokensOf(line: string, lineNo: number): Token[] {
  try {
    return tokenize(line);
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) throw e.atLine(lineNo);
    throw e;
  }
}

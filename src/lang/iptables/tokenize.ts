/**
 * Split one iptables-restore / iptables-save line into arguments the way iptables-restore
 * does (xshared.c add_param_to_argv): blanks separate arguments; a double quote opens and
 * closes a quoted run (the quotes are dropped); inside quotes a backslash makes the next
 * character literal (so `\"` is a quote). Single quotes are ordinary characters.
 */

import { KpcError } from '../../errors.js';

/** A rule text iptables-restore would refuse; the reader that knows the line adds it (KpcError.atLine). */
function syntaxError(message: string): KpcError {
  return new KpcError('input', 'previous.unreadable', message);
}


export interface Token {
  text: string;
  /** Some part of it was inside double quotes: it is a value, never an option. */
  quoted: boolean;
}


export function tokenize(line: string): Token[] {
  // Most lines have no quotes: split them directly.
  if (!line.includes('"')) {
    return line.split(/[ \t]+/).filter((t) => t !== '').map((text) => ({ text, quoted: false }));
  }
  // Scanned by index, the text between quotes, blanks and backslashes taken as slices (kube-proxy's
  // rules all carry a quoted comment: 31,000 of them to read for one kpc explain at 20,000 Services).
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === SPACE || c === TAB) {
      i++;
      continue;
    }
    // An argument: unquoted characters, then at most one quoted run, which ends it.
    let end = i;
    while (end < line.length && !endsUnquoted(line.charCodeAt(end))) end++;
    if (line.charCodeAt(end) === QUOTE) {
      const run = quotedRun(line, end + 1);
      out.push({ text: line.slice(i, end) + run.text, quoted: true });
      i = run.next;
    } else {
      out.push({ text: line.slice(i, end), quoted: false });
      i = end;
    }
  }
  return out;
}

/**
 * The quoted run that starts at `from` (after its opening quote): its text, a backslash
 * making the next character literal, and where the line goes on after the closing quote.
 */
function quotedRun(line: string, from: number): { text: string; next: number } {
  let text = '';
  let start = from;
  for (let i = from; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === QUOTE) return { text: text + line.slice(start, i), next: i + 1 };
    if (c === BACKSLASH) {
      // A backslash at the end leaves the quote open.
      if (i + 1 >= line.length) break;
      text += line.slice(start, i) + line[i + 1];
      i++;
      start = i + 1;
    }
  }
  throw syntaxError('unterminated double quote');
}

const SPACE = 32;
const TAB = 9;
const QUOTE = 34;
const BACKSLASH = 92;

/** What ends an argument's unquoted characters: a blank, or a quote opening its quoted run. */
function endsUnquoted(c: number): boolean {
  return c === SPACE || c === TAB || c === QUOTE;
}

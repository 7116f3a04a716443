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
  const n = line.length;
  let i = 0;
  while (i < n) {
    let c = line.charCodeAt(i);
    if (c === SPACE || c === TAB) {
      i++;
      continue;
    }
    // An argument: unquoted characters, and at most one quoted run, which ends it.
    let text = '';
    let quoted = false;
    let from = i;
    while (i < n) {
      c = line.charCodeAt(i);
      if (c === SPACE || c === TAB) break;
      if (c !== QUOTE) {
        i++;
        continue;
      }
      text += line.slice(from, i);
      quoted = true;
      i++;
      from = i;
      for (;;) {
        if (i >= n) throw syntaxError('unterminated double quote');
        c = line.charCodeAt(i);
        if (c === BACKSLASH) {
          // The next character is literal (a backslash at the end leaves the quote open).
          if (i + 1 >= n) throw syntaxError('unterminated double quote');
          text += line.slice(from, i) + line[i + 1];
          i += 2;
          from = i;
        } else if (c === QUOTE) {
          text += line.slice(from, i);
          i++;
          from = i;
          break;
        } else i++;
      }
      // iptables-restore ends the argument at the closing quote.
      break;
    }
    if (!quoted) text = line.slice(from, i);
    out.push({ text, quoted });
  }
  return out;
}

const SPACE = 32;
const TAB = 9;
const QUOTE = 34;
const BACKSLASH = 92;

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
  const out: Token[] = [];
  let buf = '';
  let quoted = false;
  let inQuote = false;
  let escaped = false;
  let started = false;
  const flush = () => {
    if (started) out.push({ text: buf, quoted });
    buf = '';
    quoted = false;
    started = false;
  };
  for (const ch of line) {
    if (inQuote) {
      if (escaped) {
        buf += ch;
        escaped = false;
      } else if (ch === '\\') {
        escaped = true;
      } else if (ch === '"') {
        inQuote = false;
        // iptables-restore ends the argument at the closing quote.
        flush();
      } else {
        buf += ch;
      }
      continue;
    }
    if (ch === '"') {
      inQuote = true;
      quoted = true;
      started = true;
      continue;
    }
    if (ch === ' ' || ch === '\t') {
      flush();
      continue;
    }
    buf += ch;
    started = true;
  }
  if (inQuote) throw syntaxError('unterminated double quote');
  flush();
  return out;
}

/**
 * tokenize (src/lang/iptables/tokenize.ts) against its first form, kept here as the
 * reference: iptables-restore's argument splitting (xshared.c add_param_to_argv) character
 * by character. The index scan must split every line alike and refuse the same lines, for
 * random lines of blanks, quotes, backslashes and ordinary characters, and for kpc's rules.
 */

import { expect, it } from 'vitest';
import { tokenize, type Token } from '../../../src/lang/iptables/tokenize.js';

function referenceTokenize(line: string): Token[] {
  if (!line.includes('"')) return line.split(/[ \t]+/).filter((t) => t !== '').map((text) => ({ text, quoted: false }));
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
      } else if (ch === '\\') escaped = true;
      else if (ch === '"') {
        inQuote = false;
        flush();
      } else buf += ch;
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
  if (inQuote) throw new Error('unterminated double quote');
  flush();
  return out;
}

function outcome(f: (line: string) => Token[], line: string): Token[] | string {
  try {
    return f(line);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

it('splits 200,000 random lines as the first form did', () => {
  let seed = 23;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  const alphabet = [' ', ' ', '\t', '"', '"', '\\', 'a', 'b', '-', '!', "'", 'é', '😀'];
  let refused = 0;
  for (let k = 0; k < 200_000; k++) {
    const line = Array.from({ length: Math.floor(rand() * 24) }, () => alphabet[Math.floor(rand() * alphabet.length)]!).join('');
    const want = outcome(referenceTokenize, line);
    expect(outcome(tokenize, line), JSON.stringify(line)).toEqual(want);
    if (typeof want === 'string') refused++;
  }
  expect(refused).toBeGreaterThan(10_000);
}, 60_000);

it('splits kpc\'s rules with quoted comments', () => {
  const line = '-A KUBE-SERVICES -m comment --comment "ns-0/svc-0:p8080 cluster IP" -m tcp -p tcp -d 10.96.0.10 --dport 80 -j KUBE-SVC-YPKLXFUYJ4IXJXSA';
  expect(tokenize(line)).toEqual(referenceTokenize(line));
  expect(tokenize(line)[5]).toEqual({ text: 'ns-0/svc-0:p8080 cluster IP', quoted: true });
  expect(tokenize('-m comment --comment "a \\"b\\" c"x')).toEqual([
    { text: '-m', quoted: false },
    { text: 'comment', quoted: false },
    { text: '--comment', quoted: false },
    { text: 'a "b" c', quoted: true },
    { text: 'x', quoted: false },
  ]);
});

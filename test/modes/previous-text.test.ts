/**
 * PreviousText's comparisons (src/modes/previous-text.ts): an output, given as chunks of text
 * (matches) or as the bytes it was printed into (matchesBytes), is the previous file exactly or
 * is not, whether the file is read piece by piece or was read whole (standard input).
 *
 * Run alone: `npx vitest run test/modes/previous-text.test.ts`.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AsciiBytes } from '../../src/lang/ascii-bytes.js';
import { PreviousText } from '../../src/modes/previous-text.js';

const dir = mkdtempSync(join(tmpdir(), 'kpc-previous-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noStdin = (): Uint8Array => {
  throw new Error('standard input read');
};

/** A text of `n` bytes, more than one of the file reader's 1 MiB pieces when n is large. */
function textOf(n: number): string {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `add element ip kube-proxy cluster-ips { 10.96.${(i >> 8) & 255}.${i & 255} }\n`;
  return s.slice(0, n);
}

/** The same text with byte `at` changed. */
function changedAt(text: string, at: number): string {
  return text.slice(0, at) + (text[at] === 'x' ? 'y' : 'x') + text.slice(at + 1);
}

function fileOf(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Both comparisons of `output` with the previous text `text`, read from a file and from standard input. */
function comparisons(name: string, text: string, output: string): boolean[] {
  const bytes = AsciiBytes.of(Buffer.from(output, 'latin1'))!;
  const file = fileOf(name, text);
  const stdin = () => Buffer.from(text, 'latin1');
  const chunks = (s: string) => [s.slice(0, 1000), s.slice(1000, 3_000_000), s.slice(3_000_000)];
  return [
    PreviousText.open(file, '--previous', noStdin).matches(chunks(output)),
    PreviousText.open(file, '--previous', noStdin).matchesBytes(bytes),
    PreviousText.open('-', '--previous', stdin).matches(chunks(output)),
    PreviousText.open('-', '--previous', stdin).matchesBytes(bytes),
  ];
}

describe('PreviousText: an output compared with the previous file', () => {
  const text = textOf(2_500_000);

  it('the same bytes match, in every form', () => {
    expect(comparisons('same', text, text)).toEqual([true, true, true, true]);
    expect(comparisons('empty', '', '')).toEqual([true, true, true, true]);
  });

  it('one byte changed, at the start, in a later piece or last, does not match', () => {
    for (const at of [0, (1 << 20) + 17, text.length - 1]) {
      expect(comparisons(`changed-${at}`, text, changedAt(text, at)), `byte ${at}`).toEqual([false, false, false, false]);
    }
  });

  it('an output longer or shorter than the file does not match', () => {
    expect(comparisons('longer', text, `${text}x`)).toEqual([false, false, false, false]);
    expect(comparisons('shorter', text, text.slice(0, -1))).toEqual([false, false, false, false]);
    expect(comparisons('shorter-piece', text, text.slice(0, 1 << 20))).toEqual([false, false, false, false]);
  });

  it('a file that is gone by the time it is compared does not match', () => {
    const file = fileOf('gone', text);
    const previous = PreviousText.open(file, '--previous', noStdin);
    rmSync(file);
    expect(previous.matchesBytes(AsciiBytes.of(Buffer.from(text, 'latin1'))!)).toBe(false);
  });

  it('head is the text\'s first bytes, from the file or the text read; empty for a file gone', () => {
    const file = fileOf('head', text);
    expect(PreviousText.open(file, '--previous', noStdin).head(100)).toBe(text.slice(0, 100));
    expect(PreviousText.open(file, '--previous', noStdin).head()).toBe(text.slice(0, 1 << 16));
    expect(PreviousText.open('-', '--previous', () => Buffer.from('table ip kube-proxy {')).head(5)).toBe('table');
    const gone = PreviousText.open(fileOf('head-gone', text), '--previous', noStdin);
    rmSync(join(dir, 'head-gone'));
    expect(gone.head()).toBe('');
  });

  it('expectedLength is the file\'s size, or the text read', () => {
    expect(PreviousText.open(fileOf('size', text), '--previous', noStdin).expectedLength()).toBe(text.length);
    expect(PreviousText.open('-', '--previous', () => Buffer.from('abc')).expectedLength()).toBe(3);
  });
});

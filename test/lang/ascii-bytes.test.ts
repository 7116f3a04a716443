/**
 * AsciiBytes (src/lang/ascii-bytes.ts): a file's ASCII bytes, not decoded, answer the string
 * methods the lazy readers use as the decoded string would, at every position.
 */

import { describe, expect, it } from 'vitest';
import { AsciiBytes } from '../../src/lang/ascii-bytes.js';
import { isTextSource, oneString } from '../../src/lang/text-source.js';
import { PiecedText } from '../../src/lang/pieced-text.js';

const WHOLE = ['*nat', ':KUBE-SERVICES - [0:0]', '', '-A KUBE-SERVICES -d 10.96.0.10/32 -j KUBE-SVC-A', '# a comment\t"quoted"', 'COMMIT', ''].join('\n');

function bytesOf(text: string): AsciiBytes {
  const bytes = AsciiBytes.of(Buffer.from(text, 'utf8'));
  expect(bytes).toBeDefined();
  return bytes!;
}

describe('AsciiBytes', () => {
  it('is made only of ASCII bytes', () => {
    expect(AsciiBytes.of(Buffer.from('a é b', 'utf8'))).toBeUndefined();
    expect(AsciiBytes.of(new Uint8Array([0x61, 0x80]))).toBeUndefined();
    expect(AsciiBytes.of(new Uint8Array([0x61, 0x00, 0x7f]))?.length).toBe(3);
    // A view into a larger buffer reads only its own bytes.
    const big = Buffer.from('xx*nat\nyy', 'utf8');
    expect(AsciiBytes.of(big.subarray(2, 7))?.toString()).toBe('*nat\n');
  });

  it('reads as the decoded string at every position', () => {
    const text = bytesOf(WHOLE);
    expect(text.length).toBe(WHOLE.length);
    expect(text.toString()).toBe(WHOLE);
    const positions = [-2, ...Array(WHOLE.length + 3).keys()];
    for (const at of positions) {
      expect(text.charCodeAt(at), `charCodeAt ${at}`).toEqual(WHOLE.charCodeAt(at));
      for (const search of ['\n', '-A ', 'KUBE-SERVICES', '"', 'no such', '', 'é', 'Ā', '\u0100A']) {
        expect(text.indexOf(search, at), `${JSON.stringify(search)} from ${at}`).toBe(WHOLE.indexOf(search, at));
        expect(text.startsWith(search, at), `startsWith ${JSON.stringify(search)} at ${at}`).toBe(WHOLE.startsWith(search, at));
      }
      for (const end of [at, at + 1, at + 7, -1, -40, WHOLE.length, WHOLE.length + 5]) expect(text.slice(at, end), `slice ${at} ${end}`).toBe(WHOLE.slice(at, end));
      for (const [b, length] of [[at + 1, 3], [0, 4], [WHOLE.indexOf('KUBE-SERVICES', 10), 13]] as const) {
        expect(text.sameRange(at, b, length), `sameRange ${at} ${b} ${length}`).toBe(at >= 0 && b >= 0 && at + length <= WHOLE.length && b + length <= WHOLE.length && WHOLE.slice(at, at + length) === WHOLE.slice(b, b + length));
      }
    }
    expect(text.indexOf('\n')).toBe(WHOLE.indexOf('\n'));
    expect(text.slice()).toBe(WHOLE);
    // The two declarations of KUBE-SERVICES' name.
    expect(text.sameRange(WHOLE.indexOf('KUBE-SERVICES'), WHOLE.lastIndexOf('KUBE-SERVICES'), 13)).toBe(true);
  });

  it('joins strings into bytes, growing past its first size or the length expected, and refuses any other character', () => {
    const chunks = Array.from({ length: 300 }, (_, i) => `add rule ip kube-proxy chain-${i} counter\n`.repeat(1 + (i % 400)));
    const whole = chunks.join('');
    expect(whole.length).toBeGreaterThan(1 << 16);
    for (const expected of [0, 10, whole.length - 1, whole.length, whole.length + 1, 4 * whole.length]) {
      const joined = AsciiBytes.join(chunks, expected);
      expect(joined?.toString(), `expected ${expected}`).toBe(whole);
      expect(joined?.length).toBe(whole.length);
    }
    expect(AsciiBytes.join([])?.length).toBe(0);
    expect(AsciiBytes.join(['abc', 'd\u00e9f', 'g'])).toBeUndefined();
    // A character whose latin1 byte would be ASCII ('Ł' is U+0141) is refused too.
    expect(AsciiBytes.join(['abc', '\u0141'])).toBeUndefined();
  });

  it('compares ranges of two texts as memory', () => {
    const a = bytesOf('abcdef\nxyz\n');
    const b = bytesOf('--cdef\nxy');
    expect(a.sameBytes(2, b, 2, 5)).toBe(true);
    expect(a.sameBytes(2, b, 2, 7)).toBe(true);
    expect(a.sameBytes(2, b, 2, 8)).toBe(false);
    expect(a.sameBytes(0, b, 0, 2)).toBe(false);
    expect(a.sameBytes(0, b, 0, 0)).toBe(true);
    // Past either end: not the same.
    expect(a.sameBytes(8, b, 8, 4)).toBe(false);
    expect(a.sameBytes(-1, b, 0, 1)).toBe(false);
  });

  it('is one string when it fits one; a PiecedText has none; a string is its own', () => {
    const text = bytesOf(WHOLE);
    expect(oneString(text)).toBe(WHOLE);
    expect(oneString(new PiecedText([WHOLE]))).toBeUndefined();
    expect(oneString(WHOLE)).toBe(WHOLE);
    expect([WHOLE, text, new PiecedText([WHOLE]), {}, undefined].map(isTextSource)).toEqual([true, true, true, false, false]);
  });
});

/**
 * PiecedText (src/lang/pieced-text.ts): a text too long to be one string, held as pieces that
 * end lines, answers the string methods the lazy readers use as the whole string would, at
 * positions in the whole text.
 */

import { describe, expect, it } from 'vitest';
import { PiecedText } from '../../src/lang/pieced-text.js';

const WHOLE = ['add table ip kube-proxy', 'add chain ip kube-proxy services', '', 'add rule ip kube-proxy services jump x', '# é comment', 'add chain ip kube-proxy x', ''].join('\n');

/** WHOLE cut after each line feed whose index is in `cuts`. */
function cutAt(cuts: number[]): PiecedText {
  const pieces: string[] = [];
  let start = 0;
  for (const cut of cuts) {
    pieces.push(WHOLE.slice(start, cut + 1));
    start = cut + 1;
  }
  pieces.push(WHOLE.slice(start));
  return new PiecedText(pieces);
}

const feeds = [...WHOLE.matchAll(/\n/g)].map((m) => m.index);

describe('PiecedText', () => {
  for (const cuts of [[], [feeds[0]!], feeds.slice(0, -1), [feeds[2]!, feeds[4]!], feeds]) {
    it(`reads as the whole string, cut after line feeds ${JSON.stringify(cuts)}`, () => {
      const text = cutAt(cuts);
      expect(text.length).toBe(WHOLE.length);
      expect(text.pieces.join('')).toBe(WHOLE);
      // Positions in any order: the reader's remembered piece must not answer for another.
      const positions = [...Array(WHOLE.length + 1).keys()];
      for (const at of [...positions, ...positions.reverse()]) {
        expect(text.charCodeAt(at)).toEqual(WHOLE.charCodeAt(at));
        for (const search of ['\n', 'add ', 'kube-proxy', 'x', 'no such']) expect(text.indexOf(search, at), `${search} from ${at}`).toBe(WHOLE.indexOf(search, at));
        for (const search of ['add', 'chain ip', 'x\n', '']) expect(text.startsWith(search, at)).toBe(WHOLE.startsWith(search, at));
        for (const end of [at, at + 1, at + 7, WHOLE.length]) expect(text.slice(at, end)).toBe(WHOLE.slice(at, end));
      }
      expect(text.slice(0)).toBe(WHOLE);
    });
  }

  it('holds an empty text when given no pieces', () => {
    const text = new PiecedText([]);
    expect(text.length).toBe(0);
    expect(text.indexOf('\n')).toBe(-1);
    expect(text.slice(0)).toBe('');
  });
});

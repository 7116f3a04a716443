/**
 * TextNames and LineRuns (src/lang/text-names.ts), what the lazy readers index a node's rules
 * with: a name given as a range of the text and as a string is one id; runs give back their
 * lines in order.
 */

import { describe, expect, it } from 'vitest';
import { LineRuns, TextNames } from '../../src/lang/text-names.js';

describe('TextNames', () => {
  it('a name is one id however it is given, and ids count up from 0', () => {
    const text = 'alpha beta alpha gamma';
    const names = new TextNames(text);
    expect(names.addAt(0, 5)).toBe(0);
    expect(names.addAt(6, 4)).toBe(1);
    expect(names.addAt(11, 5)).toBe(0);
    expect(names.add('gamma')).toBe(2);
    expect(names.addAt(17, 5)).toBe(2);
    expect(names.add('delta')).toBe(3);
    expect(names.find('delta')).toBe(3);
    expect(names.find('alph')).toBe(-1);
    expect(names.find('')).toBe(-1);
    expect([0, 1, 2, 3].map((id) => names.name(id))).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    expect(names.count).toBe(4);
  });

  it('keeps every name through growth (tens of thousands, more than it made room for)', () => {
    const words = Array.from({ length: 50_000 }, (_, i) => `KUBE-SVC-${(i * 2654435761 >>> 0).toString(36).toUpperCase()}`);
    const text = words.join('\n');
    const names = new TextNames(text, 16);
    let at = 0;
    const ids = words.map((w) => {
      const id = names.addAt(at, w.length);
      at += w.length + 1;
      return id;
    });
    expect(new Set(ids).size).toBe(new Set(words).size);
    words.forEach((w, i) => expect(names.find(w)).toBe(ids[i]));
    expect(names.find('KUBE-SVC-NOTHERE')).toBe(-1);
  });
});

describe('LineRuns', () => {
  it('gives an id\'s lines back in the order of the text, each run split at its newlines', () => {
    const text = 'a1\na2\nb1\na3\n\nb2';
    const runs = new LineRuns(text);
    runs.begin(0, 0, 2, 1);
    runs.extend(5);
    runs.begin(1, 6, 8, 3);
    runs.begin(0, 9, 11, 4);
    runs.begin(1, 13, 15, 6);
    const lines = (id: number) => {
      const out: string[] = [];
      runs.eachLine(id, (s, e, n) => out.push(`${n}:${text.slice(s, e)}`));
      return out;
    };
    expect(lines(0)).toEqual(['1:a1', '2:a2', '4:a3']);
    expect(lines(1)).toEqual(['3:b1', '6:b2']);
    expect(runs.has(2)).toBe(false);
    expect(runs.has(-1)).toBe(false);
    expect(lines(2)).toEqual([]);
    runs.begin(5000, 0, 2);
    expect(lines(5000)).toEqual(['0:a1']);
  });
});

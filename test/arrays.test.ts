/** append (src/arrays.ts): push for arrays longer than a call takes arguments. */

import { describe, expect, it } from 'vitest';
import { append } from '../src/arrays.js';

describe('append', () => {
  it('appends in order, to what the target holds', () => {
    const target = [1, 2];
    append(target, [3, 4]);
    append(target, []);
    expect(target).toEqual([1, 2, 3, 4]);
  });

  it('appends 500,000 items, which push(...items) cannot take', () => {
    const items = Array.from({ length: 500_000 }, (_, i) => i);
    expect(() => [].push(...(items as never[]))).toThrow(RangeError);
    const target: number[] = [-1];
    append(target, items);
    expect(target).toHaveLength(500_001);
    expect(target[500_000]).toBe(499_999);
  });
});

import { describe, expect, it } from 'vitest';
import { formatFixed10, probability } from '../../../src/emit/iptables/probability.js';

describe('probability text is Go %0.10f of 1/n', () => {
  // TestComputeProbability and iptables-mode.md §8.13.
  it.each([
    [1, '1.0000000000'],
    [2, '0.5000000000'],
    [3, '0.3333333333'],
    [6, '0.1666666667'],
    [7, '0.1428571429'],
    [10, '0.1000000000'],
    [100, '0.0100000000'],
    [1000, '0.0010000000'],
    [10000, '0.0001000000'],
    [100000, '0.0000100000'],
    [100001, '0.0000099999'],
  ])('1/%i → %s', (n, text) => {
    expect(probability(n)).toBe(text);
  });

  it('rounds exact ties to even, as Go does (toFixed would round up)', () => {
    expect((1 / 2048).toFixed(10)).toBe('0.0004882813');
    expect(probability(2048)).toBe('0.0004882812');
    expect(formatFixed10(0.00048828125)).toBe('0.0004882812');
  });
});

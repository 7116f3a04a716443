import { describe, expect, it } from 'vitest';
import { sortByName } from '../../src/emit/iptables/chain-sort.js';

const ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A deterministic pseudo-random generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function names(count: number, seed: number): string[] {
  const next = rng(seed);
  const prefixes = ['KUBE-SEP-', 'KUBE-SVC-', 'KUBE-SVL-', 'KUBE-EXT-', 'KUBE-FW-', 'KUBE-', 'KUBE-MARK-', 'K', 'INPUT', 'KUBE-SEP'];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let name = prefixes[Math.floor(next() * prefixes.length)]!;
    const length = Math.floor(next() * 17);
    // A small alphabet makes long shared prefixes (and duplicates) common.
    const alphabet = next() < 0.5 ? 'AB2-' : ALPHABET;
    for (let k = 0; k < length; k++) name += alphabet[Math.floor(next() * alphabet.length)];
    out.push(name);
  }
  return out;
}

describe('sortByName (radix sort of chain names) sorts like <', () => {
  it.each([0, 1, 2, 16, 17, 100, 5000, 60000])('%i names', (count) => {
    const items = names(count, count + 1).map((name) => ({ name }));
    const expected = items.map((x) => x.name).sort();
    expect(sortByName(items).map((x) => x.name)).toEqual(expected);
  });

  it('with a known shared prefix', () => {
    const items = names(20000, 7)
      .filter((n) => n.startsWith('KUBE-'))
      .map((name) => ({ name }));
    expect(sortByName(items, 5).map((x) => x.name)).toEqual(items.map((x) => x.name).sort());
  });

  it('keeps every item (duplicates included) and does not change its input', () => {
    const items = ['KUBE-A', 'KUBE-A', 'KUBE-B', ...names(100, 3)].map((name) => ({ name }));
    const before = [...items];
    const sorted = sortByName(items);
    expect(items).toEqual(before);
    expect(new Set(sorted)).toEqual(new Set(items));
    expect(sorted.length).toBe(items.length);
  });
});

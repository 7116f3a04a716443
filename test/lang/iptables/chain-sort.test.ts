import { describe, expect, it } from 'vitest';
import { NameKeys, sortByName } from '../../../src/lang/iptables/chain-sort.js';

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

  it('with a known shared prefix (starting at the second round)', () => {
    const kube = names(20000, 7).filter((n) => n.startsWith('KUBE-'));
    const keys = new NameKeys(kube);
    const sorted = keys.sort(Array.from(kube, (_, i) => i), 1).map((i) => kube[i]);
    expect(sorted).toEqual([...kube].sort());
  });

  it('compares names as equal exactly when they are', () => {
    const list = ['KUBE-SEP-AAAAAAAAAAAAAAAA', 'KUBE-SEP-AAAAAAAAAAAAAAAA', 'KUBE-SEP-AAAAAAAAAAAAAAA', 'KUBE-SEP-AAAAAAAAAAAAAAAB', 'K', 'K-', ...names(300, 11)];
    const keys = new NameKeys(list);
    for (let a = 0; a < list.length; a++) {
      for (let b = 0; b < list.length; b++) {
        const expected = list[a]! < list[b]! ? -1 : list[a]! > list[b]! ? 1 : 0;
        expect(Math.sign(keys.compare(a, b)), `${list[a]} vs ${list[b]}`).toBe(expected);
      }
    }
  });

  it('refuses a name longer than a chain name can be', () => {
    expect(() => new NameKeys(['KUBE-' + 'A'.repeat(25)])).toThrow(/too long/);
    expect(() => new NameKeys(['KUBE-' + 'A'.repeat(23)])).not.toThrow();
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

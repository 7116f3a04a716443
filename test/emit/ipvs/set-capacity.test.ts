import { describe, expect, it } from 'vitest';
import { emptySetEntries, overfullSets, SET_MAX_ELEMENTS, createOptions } from '../../../src/emit/ipvs/sets.js';

function filled(n: number): Set<string> {
  const s = new Set<string>();
  for (let i = 0; i < n; i++) s.add(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},tcp:80`);
  return s;
}

describe('ipset capacity (kube-proxy maxelem)', () => {
  it('is the maxelem the create lines carry', () => {
    expect(createOptions('hash:ip,port', 'IPv4')).toContain(`maxelem ${SET_MAX_ELEMENTS}`);
    expect(SET_MAX_ELEMENTS).toBe(65536);
  });

  it('reports nothing at the limit and the set past it, with the family name', () => {
    const entries = emptySetEntries();
    entries.set('KUBE-CLUSTER-IP', filled(SET_MAX_ELEMENTS));
    expect(overfullSets(entries, 'IPv4')).toEqual([]);
    entries.set('KUBE-CLUSTER-IP', filled(SET_MAX_ELEMENTS + 1));
    expect(overfullSets(entries, 'IPv4')).toEqual([{ name: 'KUBE-CLUSTER-IP', size: SET_MAX_ELEMENTS + 1 }]);
    expect(overfullSets(entries, 'IPv6')).toEqual([{ name: 'KUBE-6-CLUSTER-IP', size: SET_MAX_ELEMENTS + 1 }]);
  });
});

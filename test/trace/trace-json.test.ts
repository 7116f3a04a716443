/**
 * traceJSON (src/cli/commands/trace.ts): `kpc trace -o json` in pieces, a branch each, whose
 * bytes are JSON.stringify's of the whole (an nftables trace of a Service with 5,000 endpoints
 * is 1.8 GB, longer than one string can be).
 */

import { describe, expect, it } from 'vitest';
import { traceJSON } from '../../src/cli/commands/trace.js';
import { traceRuleSet, readRules, type TraceResult } from '../../src/trace/index.js';

const whole = (r: TraceResult) => {
  const { verdict, endpoints, masquerade, path, ...rest } = r;
  return JSON.stringify({ verdict, endpoints, masquerade, path, ...rest }, null, 2) + '\n';
};

describe('traceJSON', () => {
  it('gives the bytes of the whole, in pieces, for no, one and many branches', () => {
    const base = { verdict: 'ACCEPT', endpoints: ['10.0.0.1:80'], masquerade: false, path: [], notes: ['a "quoted"\nnote'] } as unknown as TraceResult;
    const branch = (i: number) => ({ probability: 1 / (i + 1), verdict: 'ACCEPT', steps: [{ table: 'nat', chain: `C${i}`, rule: { spec: 'x\ty "z"', index: i } }], nested: { list: [[], [1, { a: [] }]], empty: {} } });
    for (const n of [0, 1, 2, 7]) {
      const r = { ...base, branches: Array.from({ length: n }, (_, i) => branch(i)), affinity: undefined, after: 'tail' } as unknown as TraceResult;
      const pieces = traceJSON(r);
      expect(pieces.join(''), `${n} branches`).toBe(whole(r));
      if (n > 1) expect(pieces.length).toBeGreaterThan(n);
    }
  });

  it('of a real trace: the same bytes', () => {
    const rules = '*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SVC - [0:0]\n-A PREROUTING -d 10.96.0.1/32 -j KUBE-SVC\n' +
      '-A KUBE-SVC -m statistic --mode random --probability 0.5 -j DNAT --to-destination 10.0.0.1:80\n-A KUBE-SVC -j DNAT --to-destination 10.0.0.2:80\nCOMMIT\n';
    const r = traceRuleSet(readRules(rules), { destination: '10.96.0.1', port: 80, protocol: 'tcp', source: '10.0.3.4' }, { ips: [] });
    expect((r as unknown as { branches: unknown[] }).branches.length).toBe(2);
    expect(traceJSON(r).join('')).toBe(whole(r));
  });
});

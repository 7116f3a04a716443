import { describe, expect, it } from 'vitest';
import { newRuleset } from '../../../src/lang/iptables/ruleset.js';
import { gather, gatheredChain, renderRulesetText } from '../../../src/lang/iptables/print.js';

describe('renderRuleset (the printer)', () => {
  it('prints chains in canonical order, built-in chains with policy ACCEPT, rules chain by chain', () => {
    const rs = newRuleset();
    const sep = rs.nat.declareNew('KUBE-SEP-BBB');
    rs.nat.append(rs.nat.declare('KUBE-SERVICES'), '-j KUBE-SEP-BBB');
    rs.nat.append(sep, '-j DNAT --to-destination 10.0.0.1:80');
    rs.nat.append(rs.nat.declareNew('KUBE-SEP-AAA'), '-j DNAT --to-destination 10.0.0.2:80');
    rs.nat.append(rs.nat.declare('PREROUTING'), '-j KUBE-SERVICES');
    rs.nat.declare('KUBE-NODEPORTS');
    rs.nat.append('KUBE-SERVICES', '-j KUBE-NODEPORTS');
    expect(renderRulesetText(rs)).toBe(
      [
        '*filter',
        'COMMIT',
        '*nat',
        ':KUBE-NODEPORTS - [0:0]',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-SEP-AAA - [0:0]',
        ':KUBE-SEP-BBB - [0:0]',
        ':PREROUTING ACCEPT [0:0]',
        '-A KUBE-SERVICES -j KUBE-SEP-BBB',
        '-A KUBE-SERVICES -j KUBE-NODEPORTS',
        '-A KUBE-SEP-AAA -j DNAT --to-destination 10.0.0.2:80',
        '-A KUBE-SEP-BBB -j DNAT --to-destination 10.0.0.1:80',
        '-A PREROUTING -j KUBE-SERVICES',
        'COMMIT',
        '',
      ].join('\n'),
    );
  });

  it.each([2, 40])('refuses a chain declared twice without a lookup (%i chains)', (count) => {
    const rs = newRuleset();
    for (let i = 0; i < count; i++) rs.nat.declareNew(`KUBE-SEP-${String(i).padStart(4, '0')}`);
    rs.nat.declareNew('KUBE-SEP-0001');
    expect(() => renderRulesetText(rs)).toThrow(/chain KUBE-SEP-0001 declared twice in table nat/);
  });

  it('refuses a chain name that is not one', () => {
    const rs = newRuleset();
    rs.filter.declareNew('KUBE-SEP-"; rm -rf /');
    expect(() => renderRulesetText(rs)).toThrow(/unsafe chain name/);
  });

  it('finds every chain of a gathered table by name, and no other (gatheredChain)', () => {
    const rs = newRuleset();
    const names = ['KUBE-NODEPORTS', 'KUBE-SERVICES', 'PREROUTING', 'POSTROUTING', 'OTHER', 'KUBE-MARK-MASQ'];
    for (let i = 0; i < 300; i++) names.push(`KUBE-${['SEP', 'SVC', 'EXT'][i % 3]}-${((i * 7919) % 1000).toString(36).toUpperCase().padStart(4, 'A')}`);
    const declared = new Map(names.map((n) => [n, rs.nat.declareNew(n)]));
    const g = gather(rs.nat);
    for (const [name, rules] of declared) expect(gatheredChain(g, name), name).toBe(rules);
    for (const name of ['KUBE-SEP-', 'KUBE-SEP-ZZZZ', 'A', 'ZZZ', 'KUBE-NODEPORTS2', 'KUBE-', 'INPUT']) expect(gatheredChain(g, name), name).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { newRuleset } from '../../../src/lang/iptables/ruleset.js';
import { renderRulesetText } from '../../../src/lang/iptables/print.js';

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
});

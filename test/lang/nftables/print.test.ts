/**
 * The nftables printer writes knftables' syntax (objects.go writeOperation) and refuses any
 * name, comment or element word that could end a token, a string or a command early.
 */

import { describe, expect, it } from 'vitest';
import { concat, NftTransaction, printOperation, renderTransactionText } from '../../../src/lang/nftables/index.js';

describe('nftables printer', () => {
  it('writes knftables\' forms (lines taken from kube-proxy\'s recorded transactions)', () => {
    const tx = new NftTransaction('ip', 'kube-proxy');
    tx.add({ kind: 'table', comment: 'rules for kube-proxy' });
    tx.add({ kind: 'chain', name: 'filter-prerouting-pre-dnat', base: { type: 'filter', hook: 'prerouting', priority: -110 } });
    tx.flush({ kind: 'chain', name: 'filter-prerouting-pre-dnat' });
    tx.add({ kind: 'chain', name: 'reject-chain', comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports' });
    tx.add({ kind: 'set', name: 'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80', type: 'ipv4_addr', flags: ['dynamic', 'timeout'], timeout: 10800 });
    tx.add({ kind: 'element', container: 'no-endpoint-services', key: ['172.30.0.46', 'tcp', '80'], comment: 'ns6/svc6:p80', value: ['goto reject-chain'] });
    tx.add({ kind: 'rule', chain: 'cluster-ips-check', rule: concat('ip', 'daddr', '@', 'cluster-ips', 'reject'), comment: 'Reject traffic to invalid ports of ClusterIPs' });
    tx.add({ kind: 'counter', name: 'localhost-nodeport-rejected-tcp' });
    tx.delete({ kind: 'counter', name: 'localhost-nodeport-rejected-tcp' });
    tx.delete({ kind: 'map', name: 'localhost-nodeport-reject-ports', type: '' });
    expect(renderTransactionText(tx)).toBe(
      [
        'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
        'add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }',
        'flush chain ip kube-proxy filter-prerouting-pre-dnat',
        'add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }',
        'add set ip kube-proxy affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
        'add element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }',
        'add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"',
        'add counter ip kube-proxy localhost-nodeport-rejected-tcp',
        'delete counter ip kube-proxy localhost-nodeport-rejected-tcp',
        'delete map ip kube-proxy localhost-nodeport-reject-ports',
        '',
      ].join('\n'),
    );
  });

  it('joins words as knftables.Concat does (util.go: a space between words, none after a lone "@", a number leaving that as it was)', () => {
    // Each worked by hand through knftables' Concat.
    expect(concat('ip', 'daddr', '@', 'cluster-ips', 'reject')).toBe('ip daddr @cluster-ips reject');
    expect(concat('numgen random mod', 2, 'vmap', '{', ['0 : goto a', ',', '1 : goto b'], '}')).toBe('numgen random mod 2 vmap { 0 : goto a , 1 : goto b }');
    expect(concat()).toBe('');
    expect(concat('', 'a')).toBe('a');
    expect(concat('a', '', 'b')).toBe('a  b');
    expect(concat('a', 5)).toBe('a 5');
    expect(concat(7, '@', 's')).toBe('7 @s');
    expect(concat('@', 5, 'x')).toBe('@5x');
    expect(concat('x', '@', [], 'y')).toBe('x @y');
    expect(concat(['a', '@'], 'set')).toBe('a @set');
    expect(concat('@')).toBe('@');
  });

  it('refuses text that could break out of a name, a comment or an element', () => {
    const bad = [
      { kind: 'chain', name: 'x\nadd table ip evil' },
      { kind: 'chain', name: 'a b' },
      { kind: 'chain', name: 'c', comment: 'x" ; }\nflush ruleset ; #' },
      { kind: 'element', container: 'cluster-ips', key: ['1.2.3.4 }\ndelete table ip kube-proxy'] },
      { kind: 'element', container: 'service-ips', key: ['1.2.3.4', 'tcp', '80'], value: ['goto x;flush'] },
      { kind: 'element', container: 'cluster-ips', key: ['1.2.3.4'], comment: 'é'.repeat(100) },
    ] as const;
    for (const object of bad) expect(() => printOperation('ip', 'kube-proxy', { verb: 'add', object: object as never }), JSON.stringify(object)).toThrow(/refusing to write unsafe nftables/);
  });

  it('refuses an unsafe name right after safe ones (the names last found safe are not checked again; no other is let through)', () => {
    const rule = (chain: string) => printOperation('ip', 'kube-proxy', { verb: 'add', object: { kind: 'rule', chain, rule: 'counter' } });
    for (const unsafe of ['a b', 'services\nflush ruleset', 'x'.repeat(300)]) {
      expect(rule('services')).toBe('add rule ip kube-proxy services counter');
      expect(rule('other')).toBe('add rule ip kube-proxy other counter');
      expect(() => rule(unsafe), unsafe).toThrow(/refusing to write unsafe nftables/);
      expect(() => rule(unsafe), unsafe).toThrow(/refusing to write unsafe nftables/);
      expect(() => printOperation('ip', unsafe, { verb: 'add', object: { kind: 'chain', name: 'services' } }), unsafe).toThrow(/refusing to write unsafe nftables/);
    }
  });
});

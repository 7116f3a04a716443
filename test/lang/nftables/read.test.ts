/**
 * The nftables readers and the canonical rule form, without a kernel: the pairs below are what
 * knftables writes and what nft 1.0.6 lists for the same rule (seen in
 * test/lang/nftables/read-kernel.test.ts's loads), and the reader's errors.
 */

import { describe, expect, it } from 'vitest';
import { canonicalRule, parseDuration, parsePriority, readListing, readNftState, readTransaction, stateDifferences } from '../../../src/lang/nftables/index.js';
import { isKpcError } from '../../../src/errors.js';

describe('canonicalRule: knftables form = nft listing form', () => {
  const pairs: Array<[string, string]> = [
    ['mark set mark or 0x00004000', 'meta mark set meta mark | 0x00004000'],
    ['mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random', 'meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random'],
    ['mark and 0x4000 == 0 return', 'meta mark & 0x00004000 == 0x00000000 return'],
    ['ip daddr { 172.30.0.0/16 } drop', 'ip daddr 172.30.0.0/16 drop'],
    ['ip6 daddr { fd00::/108,fd01::/108 } drop', 'ip6 daddr { fd00::/108, fd01::/108 } drop'],
    ['ip6 saddr != { 2001:db8::/64 , fd00::5 } drop', 'ip6 saddr != { 2001:db8::/64, fd00::5 } drop'],
    ['meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.4 . 80 , 1 : 10.180.0.5 . 80 }', 'meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.180.0.4 . 80, 1 : 10.180.0.5 . 80 }'],
    ['iifname veth* goto services', 'iifname "veth*" goto services'],
    ['numgen random mod 1 vmap { 0 : goto endpoint-X }', 'numgen random mod 1 vmap { 0 : goto endpoint-X }'],
  ];
  for (const [a, b] of pairs) it(a, () => expect(canonicalRule(a)).toBe(canonicalRule(b)));
  it('tells different rules apart', () => {
    expect(canonicalRule('ip daddr 10.0.0.1 drop')).not.toBe(canonicalRule('ip daddr 10.0.0.2 drop'));
    expect(canonicalRule('numgen random mod 2 vmap { 0 : goto a, 1 : goto b }')).not.toBe(canonicalRule('numgen random mod 2 vmap { 0 : goto b, 1 : goto a }'));
    expect(canonicalRule('mark set mark or 0x4000')).not.toBe(canonicalRule('mark set mark xor 0x4000'));
  });
});

describe('priorities and durations', () => {
  it('named priorities', () => {
    expect([parsePriority('dstnat - 10'), parsePriority('filter'), parsePriority('srcnat'), parsePriority('-110'), parsePriority('mangle + 5'), parsePriority('bogus')]).toEqual([-110, 0, 100, -110, -145, undefined]);
  });
  it('durations', () => {
    expect([parseDuration('3h'), parseDuration('10800s'), parseDuration('1d2h3m4s'), parseDuration('60'), parseDuration('x')]).toEqual([10800, 10800, 93784, 60, undefined]);
  });
});

const LISTING = `table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 accept
	}
}
table ip kube-proxy {
	comment "rules for kube-proxy"
	set affinity-X {
		type ipv4_addr
		size 65535
		flags dynamic,timeout
		timeout 3h
		elements = { 10.0.0.2 timeout 3h expires 2h59m58s }
	}
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 172.30.0.41 . tcp . 80 : goto service-A,
			     172.30.0.42 . tcp . 80 : goto service-B }
	}
	chain nat-prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		jump services # handle 12
	}
	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
	}
	chain service-A {
		update @affinity-X { ip saddr }
		meta l4proto tcp dnat to 10.180.0.1:80 comment "x"
	}
	chain service-B {
	}
}
`;

describe('readListing', () => {
  it('reads one table of a ruleset listing, multi-line elements, handles, dynamic elements', () => {
    const s = readListing(LISTING, 'ip', 'kube-proxy');
    expect(s.exists).toBe(true);
    expect(s.comment).toBe('rules for kube-proxy');
    expect([...s.chains.keys()]).toEqual(['nat-prerouting', 'services', 'service-A', 'service-B']);
    expect(s.chains.get('nat-prerouting')!.base).toEqual({ type: 'nat', hook: 'prerouting', priority: -100 });
    expect(s.chains.get('nat-prerouting')!.rules.map((r) => r.text)).toEqual(['jump services']);
    expect(s.chains.get('service-A')!.rules[1]).toMatchObject({ text: 'meta l4proto tcp dnat to 10.180.0.1:80', comment: 'x' });
    expect([...s.sets.get('service-ips')!.elements.values()].map((e) => `${e.key} : ${e.value}`)).toEqual(['172.30.0.41 . tcp . 80 : goto service-A', '172.30.0.42 . tcp . 80 : goto service-B']);
    expect(s.sets.get('affinity-X')).toMatchObject({ flags: ['timeout'], timeout: 10800 });
    expect(readListing(LISTING, 'ip6', 'kube-proxy').exists).toBe(false);
  });

  it('equals the same table written in knftables form (dynamic elements are not compared)', () => {
    const tx = readTransaction(
      [
        'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
        'add set ip kube-proxy affinity-X { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }',
        'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }',
        'add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }',
        'add chain ip kube-proxy services',
        'add chain ip kube-proxy service-A',
        'add chain ip kube-proxy service-B',
        'add rule ip kube-proxy nat-prerouting jump services',
        'add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips',
        'add rule ip kube-proxy service-A update @affinity-X { ip saddr }',
        'add rule ip kube-proxy service-A meta l4proto tcp dnat to 10.180.0.1:80 comment "x"',
        'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-A }',
        'add element ip kube-proxy service-ips { 172.30.0.42 . tcp . 80 : goto service-B }',
      ].join('\n'),
      'ip',
      'kube-proxy',
    );
    expect(stateDifferences(tx, readListing(LISTING, 'ip', 'kube-proxy'))).toEqual([]);
  });

  it('refuses truncated listings and unknown objects, naming the line', () => {
    const cut = LISTING.slice(0, LISTING.indexOf('chain service-B'));
    for (const [text, line] of [[cut, undefined], [LISTING.replace('chain service-B {', 'flowtable f {'), undefined]] as const) {
      try {
        readListing(text, 'ip', 'kube-proxy');
        expect.unreachable();
      } catch (e) {
        expect(isKpcError(e, 'previous.unreadable')).toBe(true);
        if (line) expect((e as { at?: { line?: number } }).at?.line).toBe(line);
      }
    }
  });
});

describe('readTransaction / readNftState', () => {
  it('applies flush and delete, and ignores other tables', () => {
    const s = readTransaction(
      ['add table ip kube-proxy', 'add chain ip kube-proxy a', 'add rule ip kube-proxy a drop', 'flush chain ip kube-proxy a', 'add rule ip kube-proxy a accept', 'add chain ip kube-proxy b', 'delete chain ip kube-proxy b', 'add table ip6 kube-proxy', 'add chain ip6 kube-proxy c'].join('\n'),
      'ip',
      'kube-proxy',
    );
    expect([...s.chains.keys()]).toEqual(['a']);
    expect(s.chains.get('a')!.rules.map((r) => r.text)).toEqual(['accept']);
  });
  it('refuses what it cannot read, at its line', () => {
    for (const [text, line] of [
      ['add table ip kube-proxy\nadd frobnicate ip kube-proxy x', 2],
      ['add table ip kube-proxy\ndelete rule ip kube-proxy a handle 4', 2],
      ['insert rule ip kube-proxy a drop', 1],
      ['{"nftables": [{"rule": {"family": "ip", "table": "kube-proxy", "chain": "nope", "expr": []}}]}', 1],
      ['{ not json', 1],
    ] as const) {
      try {
        readNftState(text, 'ip', 'kube-proxy');
        expect.unreachable(text);
      } catch (e) {
        expect(isKpcError(e, 'previous.unreadable'), String(e)).toBe(true);
        expect((e as { at?: { line?: number } }).at?.line, text).toBe(line);
      }
    }
  });
});

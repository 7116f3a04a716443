/**
 * runner/nft.ts canonicalNftListing: the three orders it removes (objects, named-set elements,
 * anonymous-set items) and the differences it must keep (rule order, rule text, an element's
 * verdict, a numgen index's target, set flags, comments). Hand-written `nft list table` texts
 * in nft 1.0.6's layout; no kernel needed.
 */

import { describe, expect, it } from 'vitest';
import { canonicalNftListing, kpcRefusesNFTables, nftFamilyOf, sortAnonymousSets } from './runner/nft.js';

const A = `table ip kube-proxy {
	comment "rules for kube-proxy"
	set cluster-ips {
		type ipv4_addr
		comment "Active ClusterIPs"
		elements = { 172.30.0.41, 172.30.0.42,
			     172.30.0.43 }
	}

	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80,
			     172.30.0.42 . tcp . 80 comment "ns2/svc2:p80" : goto service-42NFTM6N-ns2/svc2/tcp/p80 }
	}

	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
		ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain service-ULMVA6XW-ns1/svc1/tcp/p80 {
		ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
		numgen random mod 2 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80, 1 : goto endpoint-AAAAAAAA-ns1/svc1/tcp/p80__10.180.0.2/80 }
	}
}
`;

/** A with every order nft/the kernel may choose changed: chains first, elements and anonymous items reversed. */
const A_REORDERED = `table ip kube-proxy {
	comment "rules for kube-proxy"
	chain service-ULMVA6XW-ns1/svc1/tcp/p80 {
		ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
		numgen random mod 2 vmap { 1 : goto endpoint-AAAAAAAA-ns1/svc1/tcp/p80__10.180.0.2/80, 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }
	}

	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 172.30.0.42 . tcp . 80 comment "ns2/svc2:p80" : goto service-42NFTM6N-ns2/svc2/tcp/p80,
			     172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
	}

	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
		ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	set cluster-ips {
		type ipv4_addr
		comment "Active ClusterIPs"
		elements = { 172.30.0.43, 172.30.0.41, 172.30.0.42 }
	}
}
`;

describe('canonicalNftListing', () => {
  it('removes the orders nft and the kernel choose', () => {
    expect(canonicalNftListing(A_REORDERED)).toBe(canonicalNftListing(A));
    expect(canonicalNftListing(A)).toContain('set cluster-ips {\n\ttype ipv4_addr\n\tcomment "Active ClusterIPs"\n\telement 172.30.0.41\n\telement 172.30.0.42\n\telement 172.30.0.43\n}');
  });

  const keeps: [string, (s: string) => string][] = [
    ['rule order in a chain', (s) => s.replace(/(\t\tip daddr \. meta l4proto[^\n]*\n)(\t\tip daddr @nodeport-ips[^\n]*\n)/, '$2$1')],
    ['a rule text', (s) => s.replace('ip saddr != 10.0.0.0/8', 'ip saddr != 10.0.0.0/16')],
    ['an element moved to another verdict', (s) => s.replace('172.30.0.41 . tcp . 80 : goto service-ULMVA6XW', '172.30.0.41 . tcp . 80 : goto service-42NFTM6N')],
    ['a numgen index pointing elsewhere', (s) => s.replace('0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80, 1 : goto endpoint-AAAAAAAA-ns1/svc1/tcp/p80__10.180.0.2/80', '0 : goto endpoint-AAAAAAAA-ns1/svc1/tcp/p80__10.180.0.2/80, 1 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80')],
    ['an element less', (s) => s.replace('172.30.0.41, 172.30.0.42,', '172.30.0.41,')],
    ['an element comment', (s) => s.replace('comment "ns2/svc2:p80"', 'comment "ns2/svc2:p81"')],
    ['a set flag', (s) => s.replace('\t\ttype ipv4_addr\n', '\t\ttype ipv4_addr\n\t\tflags interval\n')],
    ['the table comment', (s) => s.replace('comment "rules for kube-proxy"', 'comment "rules"')],
    ['a chain name', (s) => s.replace('chain services {', 'chain services2 {')],
  ];
  for (const [what, change] of keeps) {
    it(`keeps ${what}`, () => {
      const changed = change(A);
      expect(changed).not.toBe(A);
      expect(canonicalNftListing(changed)).not.toBe(canonicalNftListing(A));
    });
  }

  it('sorts anonymous-set items only outside quotes and keeps nested items whole', () => {
    expect(sortAnonymousSets('ip daddr { 10.0.0.2, 10.0.0.1 } comment "a, { b }"')).toBe('ip daddr { 10.0.0.1, 10.0.0.2 } comment "a, { b }"');
  });

  it('refuses text that is not a table listing', () => {
    expect(() => canonicalNftListing('Error: No such file or directory\n')).toThrow(/not an nft table listing/);
    expect(() => canonicalNftListing('table ip kube-proxy {\n\tchain x {\n')).toThrow(/unterminated/);
  });
});

describe('runner helpers', () => {
  it('tells kpc refusing the mode from kpc refusing an input', () => {
    expect(kpcRefusesNFTables(2, `error: option '--proxy-mode <mode>' argument 'nftables' is invalid. Allowed choices are iptables, ipvs.`)).toBe(true);
    expect(kpcRefusesNFTables(2, 'error: --proxy-mode: "nftables" is not supported; kpc compiles iptables, ipvs')).toBe(true);
    expect(kpcRefusesNFTables(2, 'cluster.json:1:1: Service a/b: spec.ports[0].port: Invalid value: 0')).toBe(false);
    expect(kpcRefusesNFTables(0, 'nftables is not supported')).toBe(false);
  });
  it('reads the family from the flags', () => {
    expect(nftFamilyOf(['--ip-family', 'ipv6'])).toBe('ip6');
    expect(nftFamilyOf(['--ip-family=ipv6'])).toBe('ip6');
    expect(nftFamilyOf(['--proxy-mode', 'nftables'])).toBe('ip');
  });
});

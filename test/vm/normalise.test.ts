/**
 * The normalisers on REAL read-backs (no VM needed): fixtures/worked-example/ holds a hand-written
 * kube-proxy-shaped bundle (input/, after shared/spec/ipvs-mode.md §10) and what the guest's
 * tools printed after apply.sh loaded it, with the nf_tables (nft/) and the legacy (legacy/)
 * iptables backends. Plus the scrambled ipvsadm input of shared/spec/ipvs-real-kernel.md §4.2.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalIp, normaliseAddrs, normaliseIpset, normaliseIptables, normaliseIpvs, parseIpset, tokenize } from './normalise.js';

const EX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'worked-example');
const read = (p: string) => readFileSync(join(EX, p), 'utf8');

/** The jumps apply.sh inserts with `iptables -I` (kube-proxy's "ensure rule" step). */
const JUMPS = `*nat
-I PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-I OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-I POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
COMMIT
*filter
-I FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-I INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER
COMMIT
`;

describe.each(['nft', 'legacy'])('read-back of the worked example (%s backend)', (backend) => {
  it('ipvsadm-save -n equals ipvs.rules', () => {
    expect(normaliseIpvs(read(`${backend}/ipvsadm-save.txt`))).toBe(normaliseIpvs(read('input/ipvs.rules')));
  });
  it('ipset save equals ipset.rules (initval, bucketsize and /32 dropped)', () => {
    const out = read(`${backend}/ipset-save.txt`);
    expect(out).toMatch(/bucketsize 12 initval 0x[0-9a-f]+/);
    expect(out).toContain('198.51.100.7\n');
    expect(normaliseIpset(out)).toBe(normaliseIpset(read('input/ipset.rules')));
  });
  it('iptables-save equals iptables.rules plus the inserted jumps', () => {
    const got = normaliseIptables(read(`${backend}/iptables-save.txt`));
    expect(got).toBe(normaliseIptables(read('input/iptables.rules') + JUMPS));
    // the rewrites that made it necessary
    expect(got).toContain('-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000');
    expect(got).toContain('-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0');
    expect(got).toContain('-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment');
    expect(got).toContain('-j REJECT --reject-with icmp-port-unreachable');
    expect(got).toContain('-m ipvs --vproto 6 --vaddr 203.0.113.10 --vport 80');
  });
  it('kube-ipvs0 addresses equal kube-ipvs0.addrs', () => {
    expect(normaliseAddrs(read(`${backend}/kube-ipvs0.txt`))).toBe(normaliseAddrs(read('input/kube-ipvs0.addrs')));
    expect(normaliseAddrs(read('input/kube-ipvs0.addrs'))).toBe('10.96.0.10/32\n10.96.0.20/32\n');
  });
});

describe('normaliseIpvs', () => {
  // shared/spec/ipvs-real-kernel.md §4.2: scrambled, non-canonical input and what -S printed
  const input = `-A -t [FD00:0::0010]:443 -s rr
-a -t [fd00::10]:443 -r [fd00:244::7]:8443 -m -w 1
-a -t [fd00::10]:443 -r [fd00:244::5]:8443 -m -w 1
-A -u 10.96.0.10:53 -s rr -p 10800
-a -u 10.96.0.10:53 -r 10.244.2.9:53 -m -w 0
-a -u 10.96.0.10:53 -r 10.244.1.9:53 -m -w 1
-A -t 10.96.0.10:80 -s rr
-a -t 10.96.0.10:80 -r 10.244.2.7:8080 -m -w 1
-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1
-A -t 10.96.0.1:443
-a -t 10.96.0.1:443 -r 192.168.0.10:6443
-A -t 200.1.1.1:80 -s wrr
-a -t 200.1.1.1:80 -r 10.244.1.5:80 -m -w 3
-A -t 1.1.1.1:80 -s lc -p
-a -t 1.1.1.1:80 -r 10.244.1.5 -i
-A -t 10.96.0.20:http -s sh -b sh-fallback,sh-port
-a -t 10.96.0.20:80 -r 10.244.1.6:80 -m -x 100 -y 50
-A -t 10.96.0.30:80 -s rr -p 600 -M 255.255.255.0
-A -f 100 -s rr
-a -f 100 -r 10.244.3.3:0 -m
-A -u 10.96.0.40:5060 -s rr -o
`;
  const saved = `-A -t 200.1.1.1:80 -s wrr
-a -t 200.1.1.1:80 -r 10.244.1.5:80 -m -w 3
-A -t 1.1.1.1:80 -s lc -p 360
-a -t 1.1.1.1:80 -r 10.244.1.5:80 -i -w 1 --tun-type ipip
-A -t 10.96.0.1:443 -s wlc
-a -t 10.96.0.1:443 -r 192.168.0.10:443 -g -w 1
-A -t 10.96.0.10:80 -s rr
-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1
-a -t 10.96.0.10:80 -r 10.244.2.7:8080 -m -w 1
-A -t 10.96.0.20:80 -s sh -b sh-fallback,sh-port
-a -t 10.96.0.20:80 -r 10.244.1.6:80 -m -w 1
-A -t 10.96.0.30:80 -s rr -p 600 -M 255.255.255.0
-A -u 10.96.0.10:53 -s rr -p 10800
-a -u 10.96.0.10:53 -r 10.244.1.9:53 -m -w 1
-a -u 10.96.0.10:53 -r 10.244.2.9:53 -m -w 0
-A -u 10.96.0.40:5060 -s rr -o
-A -t [fd00::10]:443 -s rr
-a -t [fd00::10]:443 -r [fd00:244::5]:8443 -m -w 1
-a -t [fd00::10]:443 -r [fd00:244::7]:8443 -m -w 1
-A -f 100 -s rr
-a -f 100 -r 10.244.3.3:0 -m -w 1
`;
  it('maps the scrambled input onto what ipvsadm -S printed', () => {
    expect(normaliseIpvs(input)).toBe(normaliseIpvs(saved));
  });
  it('sorts numerically (1.1.1.1 before 200.1.1.1), IPv4 before IPv6, fwmark last', () => {
    const n = normaliseIpvs(saved).split('\n').filter((l) => l.startsWith('-A'));
    expect(n[0]).toBe('-A -t 1.1.1.1:80 -s lc -p 360');
    expect(n.at(-2)).toBe('-A -t [fd00::10]:443 -s rr');
    expect(n.at(-1)).toBe('-A -f 100 -s rr');
  });
  it('replays edits and deletes', () => {
    const text = '-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.1.0.1:80 -m -w 1\n-e -t 10.0.0.1:80 -r 10.1.0.1:80 -m -w 0\n-A -u 10.0.0.1:53\n-D -u 10.0.0.1:53\n';
    expect(normaliseIpvs(text)).toBe('-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.1.0.1:80 -m -w 0\n');
  });
  it('rejects what ipvsadm -R rejects', () => {
    expect(() => normaliseIpvs('-a -t 10.0.0.1:80 -r 10.1.0.1:80 -m\n')).toThrow(/service not defined/);
    expect(() => normaliseIpvs('-A -t 10.0.0.1:80 --bogus\n')).toThrow(/unknown word/);
  });
});

describe('normaliseIpset', () => {
  it('fills defaults, rounds hashsize, drops -exist, replays flush/del', () => {
    const input = `create S hash:ip,port hashsize 1000 -exist
add S 10.0.0.2,tcp:http
add S 10.0.0.1,UDP:53 -exist
create S hash:ip,port family inet hashsize 1024 maxelem 65536 -exist
create B bitmap:port range 0-65535
add B 30080
add B 30081
del B 30081
create F hash:ip family inet6
add F fd00:0::1
flush F
`;
    expect(normaliseIpset(input)).toBe(
      'create B bitmap:port range 0-65535\nadd B 30080\ncreate F hash:ip family inet6 hashsize 1024 maxelem 65536\ncreate S hash:ip,port family inet hashsize 1024 maxelem 65536\nadd S 10.0.0.1,udp:53\nadd S 10.0.0.2,tcp:80\n',
    );
  });
  it('keeps comments (double-quoted) and the initval when asked', () => {
    const s = parseIpset('create C hash:ip,port family inet hashsize 1024 maxelem 65536 comment bucketsize 12 initval 0x12345678\nadd C 10.96.0.10,tcp:80 comment "default/kubernetes:https"\n', { keepInitval: true });
    expect(s.get('C')!.options).toEqual(['family', 'inet', 'hashsize', '1024', 'maxelem', '65536', 'comment', 'bucketsize', '12', 'initval', '0x12345678']);
    expect([...s.get('C')!.members]).toEqual(['10.96.0.10,tcp:80 comment "default/kubernetes:https"']);
  });
  it('rejects a re-create with other options and adds to unknown sets', () => {
    expect(() => normaliseIpset('create S hash:ip\ncreate S hash:ip maxelem 10\n')).toThrow(/other options/);
    expect(() => normaliseIpset('add X 10.0.0.1\n')).toThrow(/unknown set/);
  });
});

describe('normaliseIptables', () => {
  it('applies the save-time rewrites to restore input', () => {
    const input = `*nat
:KUBE-B - [0:0]
:KUBE-A - [0:0]
-A KUBE-A -p tcp --dport 80 -d 10.96.0.1 -j MARK --set-mark 0x10
-A KUBE-B -m comment --comment one-word -j MARK --and-mark 0xffffbfff
-A KUBE-B -m comment --comment "a/b" -m mark --mark 0x4000/0xffffffff -j RETURN
COMMIT
`;
    expect(normaliseIptables(input)).toBe(`*nat
:KUBE-A -
:KUBE-B -
-A KUBE-A -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j MARK --set-xmark 0x10/0xffffffff
-A KUBE-B -m comment --comment one-word -j MARK --set-xmark 0x0/0x4000
-A KUBE-B -m comment --comment "a/b" -m mark --mark 0x4000 -j RETURN
COMMIT
`);
  });
  it('keeps empty builtin chains only when asked; ipv6 host length is /128', () => {
    const save = '*filter\n:INPUT ACCEPT [1:2]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -s fd00::1 -j REJECT\nCOMMIT\n';
    expect(normaliseIptables(save, { family: 'ipv6' })).toBe(
      '*filter\n:FORWARD DROP\n:OUTPUT ACCEPT\n-A OUTPUT -s fd00::1/128 -j REJECT --reject-with icmp6-port-unreachable\nCOMMIT\n',
    );
    expect(normaliseIptables(save, { family: 'ipv6', keepEmptyBuiltins: true })).toContain(':INPUT ACCEPT\n');
  });
  it('rejects rules in undeclared chains', () => {
    expect(() => normaliseIptables('*nat\n-A KUBE-X -j RETURN\nCOMMIT\n')).toThrow(/not declared/);
  });
});

describe('helpers', () => {
  it('canonicalIp', () => {
    expect(canonicalIp('FD00:0::0010')).toBe('fd00::10');
    expect(canonicalIp('2001:db8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalIp('2001:db8:0:1:0:0:0:1')).toBe('2001:db8:0:1::1');
    expect(canonicalIp('::ffff:10.0.0.1')).toBe('::ffff:a00:1');
    expect(canonicalIp('::')).toBe('::');
    expect(canonicalIp('010.001.0.1')).toBe('10.1.0.1');
  });
  it('tokenize', () => {
    expect(tokenize(`-A X -m comment --comment "a b" -j Y`)).toEqual(['-A', 'X', '-m', 'comment', '--comment', 'a b', '-j', 'Y']);
    expect(tokenize(`add S 1.2.3.4 comment "x\\"y"`)).toEqual(['add', 'S', '1.2.3.4', 'comment', 'x"y']);
  });
  it('normaliseAddrs reads ip -o output and address lists', () => {
    expect(normaliseAddrs('7: kube-ipvs0    inet6 fd00::0010/128 scope global \\       valid_lft forever\n7: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\n')).toBe('10.96.0.10/32\nfd00::10/128\n');
    expect(normaliseAddrs('10.96.0.10\nip addr add fd00::1/128 dev kube-ipvs0\n')).toBe('10.96.0.10/32\nfd00::1/128\n');
  });
});

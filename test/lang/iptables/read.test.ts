/**
 * The rules reader: iptables-restore input and iptables-save output into the rule model.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRules, tokenize, type Match, type Rule } from '../../../src/trace/index.js';
import { KpcError } from '../../../src/errors.js';
import { FIXTURES_ROOT } from '../../helpers/fixtures.js';

function only(text: string, table = 'filter', chain = 'KUBE-SERVICES'): Rule {
  const rs = readRules(text);
  const rules = rs.tables.get(table)!.chains.get(chain)!.rules;
  expect(rules).toHaveLength(1);
  return rules[0]!;
}

function filterRule(args: string, chain = 'KUBE-SERVICES'): Rule {
  return only(`*filter\n:${chain} - [0:0]\n:KUBE-X - [0:0]\n-A ${chain} ${args}\nCOMMIT\n`, 'filter', chain);
}

function kinds(r: Rule): string[] {
  return r.matches.map((m) => m.kind);
}

function find<K extends Match['kind']>(r: Rule, kind: K): Extract<Match, { kind: K }> {
  const m = r.matches.find((x) => x.kind === kind);
  if (!m) throw new Error(`no ${kind} match in ${r.spec}`);
  return m as Extract<Match, { kind: K }>;
}

describe('tokenize', () => {
  it('splits on blanks and keeps quoted runs together', () => {
    expect(tokenize('-A X -m comment --comment "a b  c" -j Y').map((t) => t.text)).toEqual(['-A', 'X', '-m', 'comment', '--comment', 'a b  c', '-j', 'Y']);
  });
  it('marks quoted tokens and unescapes inside quotes', () => {
    const t = tokenize('--comment "say \\"hi\\"" "-not-an-option"');
    expect(t.map((x) => [x.text, x.quoted])).toEqual([['--comment', false], ['say "hi"', true], ['-not-an-option', true]]);
  });
  it('keeps an empty quoted argument', () => {
    expect(tokenize('--comment ""').map((t) => t.text)).toEqual(['--comment', '']);
  });
  it('refuses an unterminated quote', () => {
    expect(() => tokenize('--comment "abc')).toThrow(/unterminated/);
  });
});

describe('readRules: kpc / kube-proxy restore input', () => {
  const text = readFileSync(join(FIXTURES_ROOT, 'kube-proxy/iptables/TestOverallIPTablesRules/expected.out'), 'utf8');
  const rs = readRules(text);

  it('has both tables, all chains, every rule', () => {
    expect([...rs.tables.keys()]).toEqual(['filter', 'nat']);
    const count = (t: string) => [...rs.tables.get(t)!.chains.values()].reduce((n, c) => n + c.rules.length, 0);
    const lines = (prefix: string) => text.split('*nat')[prefix === 'filter' ? 0 : 1]!.split('\n').filter((l) => l.startsWith('-A ')).length;
    expect(count('filter')).toBe(lines('filter'));
    expect(count('nat')).toBe(lines('nat'));
    expect(rs.warnings).toEqual([]);
  });

  it('reads a cluster IP rule', () => {
    const r = rs.tables.get('nat')!.chains.get('KUBE-SERVICES')!.rules[0]!;
    expect(r.comment).toBe('ns1/svc1:p80 cluster IP');
    expect(kinds(r)).toEqual(['protocol', 'address', 'comment', 'port']);
    expect(find(r, 'address')).toMatchObject({ which: 'destination', negated: false });
    expect(find(r, 'address').addresses[0]!.text).toBe('172.30.0.41');
    expect(find(r, 'port')).toMatchObject({ which: 'destination', ranges: [[80, 80]], module: 'tcp' });
    expect(r.target).toEqual({ kind: 'chain', chain: 'KUBE-SVC-XPGD46QRK7WJZT7O', goto: false });
    expect(r.index).toBe(1);
  });

  it('reads statistic, recent, DNAT, MARK, conntrack, nfacct, addrtype', () => {
    const nat = rs.tables.get('nat')!.chains;
    const stat = nat.get('KUBE-SVC-4SW47YFZTEDKD3PK')!.rules[1]!;
    expect(find(stat, 'random')).toEqual({ kind: 'random', negated: false, probability: 0.5, text: '0.5000000000' });
    const recent = nat.get('KUBE-SVC-NUKIZ6OKUXPJNT4C')!.rules[1]!;
    expect(find(recent, 'recent')).toEqual({ kind: 'recent', negated: false, name: 'KUBE-SEP-I77PXRDZVX7PMWMN', action: 'rcheck', seconds: 10800, reap: true });
    const set = nat.get('KUBE-SEP-I77PXRDZVX7PMWMN')!.rules[1]!;
    expect(find(set, 'recent').action).toBe('set');
    expect(set.target).toEqual({ kind: 'DNAT', to: '10.180.0.3:80', ip: '10.180.0.3', port: 80 });
    expect(nat.get('KUBE-MARK-MASQ')!.rules[0]!.target).toMatchObject({ kind: 'MARK', value: 0x4000, mask: 0x4000 });
    const post = nat.get('KUBE-POSTROUTING')!.rules;
    expect(find(post[0]!, 'mark')).toEqual({ kind: 'mark', on: 'packet', negated: true, value: 0x4000, mask: 0x4000 });
    expect(post[1]!.target).toMatchObject({ kind: 'MARK', value: 0x4000, mask: 0 });
    expect(post[2]!.target).toEqual({ kind: 'MASQUERADE', options: [] });
    const fw = rs.tables.get('filter')!.chains.get('KUBE-FIREWALL')!.rules[0]!;
    expect(find(fw, 'ctstate')).toEqual({ kind: 'ctstate', negated: true, states: ['RELATED', 'ESTABLISHED', 'DNAT'] });
    const src = fw.matches.find((m) => m.kind === 'address' && m.which === 'source') as Extract<Match, { kind: 'address' }>;
    expect(src.negated).toBe(true);
    const nodeport = nat.get('KUBE-NODEPORTS')!.rules[0]!;
    expect(find(nodeport, 'nfacct')).toEqual({ kind: 'nfacct', name: 'localhost_nps_accepted_pkts' });
    expect(nodeport.comment).toBe('ns2/svc2:p80');
    const last = nat.get('KUBE-SERVICES')!.rules.at(-1)!;
    expect(find(last, 'addrtype')).toEqual({ kind: 'addrtype', which: 'destination', negated: false, types: ['LOCAL'] });
  });

  it('reads a rule with no target', () => {
    const r = rs.tables.get('nat')!.chains.get('KUBE-FW-NUKIZ6OKUXPJNT4C')!.rules[1]!;
    expect(r.target).toBeUndefined();
    expect(r.comment).toBe('other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL');
  });
});

describe('readRules: iptables-save forms', () => {
  it('reads the same rule in kube-proxy order and in iptables-save order', () => {
    const a = filterRule('-m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-X');
    const b = filterRule('! -s 10.0.0.0/8 -d 172.30.0.41/32 -p tcp -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp --dport 80 -j KUBE-X');
    const key = (r: Rule) => r.matches.map((m) => JSON.stringify(m, (k, v) => (k === 'text' ? undefined : v instanceof Uint8Array ? [...v] : v))).sort();
    expect(key(b)).toEqual(key(a));
    expect(b.target).toEqual(a.target);
  });

  it('reads "-s ! addr" (old iptables) like "! -s addr"', () => {
    const a = filterRule('! -s 10.0.0.0/8 -j ACCEPT');
    const b = filterRule('-s ! 10.0.0.0/8 -j ACCEPT');
    expect(find(b, 'address').negated).toBe(true);
    expect(find(b, 'address').addresses[0]!.bytes).toEqual(find(a, 'address').addresses[0]!.bytes);
  });

  it('reads "--dport ! 80" (old iptables)', () => {
    expect(find(filterRule('-p tcp -m tcp --dport ! 80 -j ACCEPT'), 'port').negated).toBe(true);
  });

  it('reads the protocol module implicitly when -m is missing', () => {
    expect(find(filterRule('-p udp --dport 53 -j ACCEPT'), 'port')).toMatchObject({ module: 'udp', ranges: [[53, 53]] });
  });

  it('reads iptables-save -c counters before the rule', () => {
    const r = only('*filter\n:INPUT ACCEPT [12:3400]\n[5:300] -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n', 'filter', 'INPUT');
    expect(r.target).toEqual({ kind: 'ACCEPT' });
  });

  it('normalises the MARK forms to set-xmark', () => {
    const mark = (opt: string) => filterRule(`-j MARK ${opt}`).target;
    expect(mark('--set-xmark 0x4000/0x4000')).toMatchObject({ value: 0x4000, mask: 0x4000 });
    expect(mark('--or-mark 0x4000')).toMatchObject({ value: 0x4000, mask: 0x4000 });
    expect(mark('--xor-mark 0x4000')).toMatchObject({ value: 0x4000, mask: 0 });
    expect(mark('--set-xmark 0x4000/0x0')).toMatchObject({ value: 0x4000, mask: 0 });
    expect(mark('--and-mark 0xffffbfff')).toMatchObject({ value: 0, mask: 0x4000 });
    expect(mark('--set-mark 0x1/0xff')).toMatchObject({ value: 1, mask: 0xff });
  });

  it('reads REJECT with and without --reject-with', () => {
    expect(filterRule('-j REJECT').target).toEqual({ kind: 'REJECT' });
    expect(filterRule('-j REJECT --reject-with icmp-port-unreachable').target).toEqual({ kind: 'REJECT', rejectWith: 'icmp-port-unreachable' });
  });

  it('reads iptables-save recent and statistic spellings', () => {
    const r = filterRule('-m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-X --mask 255.255.255.255 --rsource -j KUBE-X');
    expect(find(r, 'recent')).toEqual({ kind: 'recent', negated: false, name: 'KUBE-SEP-X', action: 'rcheck', seconds: 10800, reap: true });
    expect(find(filterRule('-m statistic --mode random --probability 0.33333333349 -j KUBE-X'), 'random').probability).toBeCloseTo(1 / 3, 9);
    expect(find(filterRule('-m nfacct --nfacct-name  ct_state_invalid_dropped_pkts -j DROP'), 'nfacct').name).toBe('ct_state_invalid_dropped_pkts');
  });

  it('reads /32, /128, bare and dotted-mask addresses', () => {
    const a = (spec: string) => find(filterRule(`-d ${spec} -j ACCEPT`), 'address').addresses[0]!;
    expect([...a('10.1.2.3/32').mask]).toEqual([255, 255, 255, 255]);
    expect([...a('10.1.2.3').mask]).toEqual([255, 255, 255, 255]);
    expect([...a('10.1.2.0/255.255.255.0').mask]).toEqual([255, 255, 255, 0]);
    expect([...a('10.1.2.3/8').bytes]).toEqual([10, 0, 0, 0]);
    expect(a('fd00::1/128').family).toBe('IPv6');
    expect(a('::1').family).toBe('IPv6');
    expect(find(filterRule('-d 1.2.3.4,5.6.7.8 -j ACCEPT'), 'address').addresses).toHaveLength(2);
  });

  it('reads multiport, iprange, conntrack, state, connmark, tcp flags', () => {
    expect(find(filterRule('-p tcp -m multiport --dports 80,443,8000:8080 -j ACCEPT'), 'port').ranges).toEqual([[80, 80], [443, 443], [8000, 8080]]);
    expect(find(filterRule('-m iprange --src-range 10.0.0.1-10.0.0.9 -j ACCEPT'), 'iprange').which).toBe('source');
    expect(find(filterRule('-m state --state NEW,ESTABLISHED -j ACCEPT'), 'ctstate').states).toEqual(['NEW', 'ESTABLISHED']);
    expect(find(filterRule('-m connmark --mark 0x1/0x1 -j ACCEPT'), 'mark').on).toBe('connection');
    expect(find(filterRule('-p tcp -m tcp --syn -j ACCEPT'), 'tcp-flags').comp).toEqual(['SYN']);
    expect(find(filterRule('-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -j ACCEPT'), 'tcp-flags').mask).toEqual(['FIN', 'SYN', 'RST', 'ACK']);
  });

  it('keeps matches it cannot evaluate as unsupported (other components\' rules)', () => {
    const r = filterRule('-m set --match-set cali40all-hosts-net src -j ACCEPT');
    expect(find(r, 'unsupported')).toMatchObject({ module: 'set' });
    expect(find(filterRule('-m limit --limit 5/min -j ACCEPT'), 'neutral').module).toBe('limit');
    expect(filterRule('-j LOG --log-prefix "dropped: " --log-level 4').target).toEqual({ kind: 'other', name: 'LOG', options: ['--log-prefix dropped: ', '--log-level 4'] });
  });

  it('reads a Docker-style iptables-save with other components\' chains', () => {
    const rs = readRules(`# Generated by iptables-save v1.8.9 (nf_tables) on Thu Jan  1 00:00:00 2026
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:DOCKER - [0:0]
-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER
-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
-A DOCKER -i docker0 -j RETURN
COMMIT
# Completed on Thu Jan  1 00:00:00 2026
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:DOCKER-USER - [0:0]
-A FORWARD -j DOCKER-USER
-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A DOCKER-USER -j RETURN
COMMIT
`);
    expect(rs.tables.get('filter')!.chains.get('FORWARD')!.policy).toBe('DROP');
    expect(rs.tables.get('nat')!.chains.get('POSTROUTING')!.rules[0]!.matches.find((m) => m.kind === 'interface')).toEqual({ kind: 'interface', which: 'out', negated: true, name: 'docker0' });
    expect(rs.tables.get('nat')!.chains.get('DOCKER')!.rules[0]!.target).toEqual({ kind: 'RETURN' });
  });
});

describe('readRules: commands and errors', () => {
  it('applies -I, -N, -X, -F and -P', () => {
    const rs = readRules(`*filter
:INPUT ACCEPT [0:0]
-N MINE
-A INPUT -j MINE
-I INPUT -p tcp -j ACCEPT
-I INPUT 2 -p udp -j ACCEPT
-P INPUT DROP
:GONE - [0:0]
-X GONE
:FLUSHED - [0:0]
-A FLUSHED -j ACCEPT
-F FLUSHED
COMMIT
`);
    const f = rs.tables.get('filter')!.chains;
    expect(f.get('INPUT')!.rules.map((r) => r.spec)).toEqual(['-p tcp -j ACCEPT', '-p udp -j ACCEPT', '-j MINE']);
    expect(f.get('INPUT')!.rules.map((r) => r.index)).toEqual([1, 2, 3]);
    expect(f.get('INPUT')!.policy).toBe('DROP');
    expect(f.has('GONE')).toBe(false);
    expect(f.get('FLUSHED')!.rules).toEqual([]);
  });

  it('re-declaring a chain flushes it, as iptables-restore does', () => {
    const rs = readRules('*nat\n:A - [0:0]\n-A A -j RETURN\n:A - [0:0]\nCOMMIT\n');
    expect(rs.tables.get('nat')!.chains.get('A')!.rules).toEqual([]);
  });

  it('warns about a jump to an undeclared chain and an -A to one', () => {
    const rs = readRules('*nat\n:A - [0:0]\n-A A -j MISSING\n-A B -j RETURN\nCOMMIT\n');
    expect(rs.warnings.join('\n')).toMatch(/MISSING/);
    expect(rs.warnings.join('\n')).toMatch(/chain B was used without a declaration/);
  });

  const bad: Array<[string, RegExp, number]> = [
    ['-A INPUT -j ACCEPT\n', /outside a table/, 1],
    ['*filter\n:INPUT ACCEPT [0:0]\n', /no COMMIT/, 3],
    ['*filter\n-A INPUT --bogus -j ACCEPT\nCOMMIT\n', /outside any module/, 2],
    ['*filter\n-A INPUT -z -j ACCEPT\nCOMMIT\n', /unknown option "-z"/, 2],
    ['*filter\n-A INPUT -s 10.0.0.300 -j ACCEPT\nCOMMIT\n', /not an address/, 2],
    ['*filter\n-A INPUT -m comment --comment "open -j ACCEPT\nCOMMIT\n', /unterminated/, 2],
    ['*filter\n-A INPUT -m statistic --mode random --probability 1.5 -j ACCEPT\nCOMMIT\n', /not a probability/, 2],
    ['*filter\n-A INPUT -p tcp -m tcp --dport 70000 -j ACCEPT\nCOMMIT\n', /out of range/, 2],
    ['*filter\nhello\nCOMMIT\n', /not an iptables-restore line/, 2],
    ['*filter\n*nat\nCOMMIT\n', /before COMMIT/, 2],
    ['*filter\n-A INPUT -j ACCEPT -j DROP\nCOMMIT\n', /more than one target/, 2],
  ];
  for (const [text, msg, line] of bad) {
    it(`refuses ${JSON.stringify(text.split('\n').slice(0, 2).join(' | '))}`, () => {
      let err: unknown;
      try {
        readRules(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KpcError);
      expect((err as KpcError).code).toBe('previous.unreadable');
      expect((err as KpcError).message).toMatch(msg);
      expect((err as KpcError).at?.line).toBe(line);
    });
  }
});

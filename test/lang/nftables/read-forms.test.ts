/**
 * The nftables readers on nft's listings made with output options (listings/: recorded from
 * nft 1.0.6 on the kernel, see listings/README.md), without a kernel:
 *   - -n, -nn, -S, -j -n, -j -S are refused as previous.unreadable, at the line of the first
 *     value nft wrote otherwise, with the plain command to list the table;
 *   - -a (handles) reads to the same state as the plain listing;
 *   - names a delta would write back (chains, sets, maps, counters, an element's goto chain)
 *     are checked, in every form.
 * The counts and lines below were read off the listing files by hand.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJSON, readListing, readNftState, readTransaction, stateDifferences } from '../../../src/lang/nftables/index.js';
import { listedRuleProblem } from '../../../src/lang/nftables/read-checks.js';
import { isKpcError, type KpcError } from '../../../src/errors.js';

const dir = join(import.meta.dirname, 'listings');
const listing = (name: string) => readFileSync(join(dir, name), 'utf8');

function refusal(text: string): KpcError {
  try {
    readNftState(text, 'ip', 'kube-proxy');
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) return e;
    throw e;
  }
  throw new Error('read, not refused');
}

const HINT = 'list it without them: nft list table ip kube-proxy (or nft -j list table ip kube-proxy)';

describe('listings made with nft output options', () => {
  it('the plain listing reads (the elements and rules kpc wrote)', () => {
    const s = readListing(listing('ruleset.txt'), 'ip', 'kube-proxy');
    expect([...s.sets.get('service-ips')!.elements.keys()]).toEqual(['1.2.3.4 . tcp . 80', '5.6.7.8 . tcp . 80', '10.96.0.20 . tcp . 80']);
    expect([...s.sets.get('service-nodeports')!.elements.keys()]).toEqual(['tcp . 30080']);
    expect(s.chains.get('filter-input')!.rules.map((r) => r.text)).toEqual(['ct state new jump nodeport-endpoints-check', 'ct state new jump service-endpoints-check']);
  });

  it('-a: handles are stripped (table, blocks, rules); the state is the plain listing', () => {
    const plain = readListing(listing('ruleset.txt'), 'ip', 'kube-proxy');
    const a = readListing(listing('ruleset-a.txt'), 'ip', 'kube-proxy');
    expect(a.exists).toBe(true);
    expect(stateDifferences(plain, a)).toEqual([]);
    expect(a.chains.get('filter-prerouting-pre-dnat')!.rules.map((r) => r.text)).toEqual(['ct state new jump firewall-check']);
  });

  it('-a: a `# handle N` inside a quoted comment is the comment', () => {
    const text = listing('ruleset-a.txt').replace('comment "masquerade"', 'comment "masquerade # handle 7"');
    expect(text).not.toBe(listing('ruleset-a.txt'));
    const rules = readListing(text, 'ip', 'kube-proxy').chains.get('external-7XESENFC-ns/lb/tcp/p')!.rules;
    expect(rules[0]).toMatchObject({ text: 'meta mark set meta mark | 0x00004000', comment: 'masquerade # handle 7' });
  });

  for (const [file, line, what] of [
    ['ruleset-n.txt', 6, '"6" is not tcp, udp or sctp (inet_proto)'],
    ['ruleset-nn.txt', 6, '"6" is not tcp, udp or sctp (inet_proto)'],
    ['ruleset-S.txt', 6, '"\\"http-alt\\"" is not a port number (inet_service)'],
  ] as const) {
    it(`${file}: refused at line ${line}`, () => {
      const e = refusal(listing(file));
      expect(e.at?.line).toBe(line);
      expect(e.message).toContain(what);
      expect(e.message).toContain(HINT);
    });
  }

  for (const [file, what] of [
    ['ruleset-jn.json', 'nftables[2]: element "10.244.1.5 . 10.244.1.5 . 6 . 8080" of hairpin-connections: "6" is not tcp, udp or sctp'],
    ['ruleset-jS.json', 'nftables[2]: element "10.244.1.5 . 10.244.1.5 . tcp . http-alt" of hairpin-connections: "http-alt" is not a port number'],
  ] as const) {
    it(`${file}: refused`, () => {
      const e = refusal(listing(file));
      expect(e.message).toContain(what);
      expect(e.message).toContain(HINT);
    });
  }

  it('the plain JSON reads and equals the plain listing', () => {
    const j = readJSON(listing('ruleset.json'), 'ip', 'kube-proxy');
    expect(j.sets.get('service-ips')!.elements.size).toBe(3);
    expect(stateDifferences(readListing(listing('ruleset.txt'), 'ip', 'kube-proxy'), j)).toEqual([]);
  });

  it('an element on a continuation line is refused at its own line', () => {
    // line 41: `5.6.7.8 . tcp . 80 : goto external-…` (the 2nd of service-ips' three lines)
    const lines = listing('ruleset.txt').split('\n');
    expect(lines[40]).toContain('5.6.7.8 . tcp . 80');
    lines[40] = lines[40]!.replace('5.6.7.8 . tcp . 80', '5.6.7.8 . 6 . 80');
    const e = refusal(lines.join('\n'));
    expect(e.at?.line).toBe(41);
    expect(e.message).toContain('element "5.6.7.8 . 6 . 80" of service-ips');
  });

  it('numeric rules are refused where the elements are plain (ct state, l4proto, -S ports)', () => {
    const plain = listing('ruleset.txt');
    for (const [from, to, line] of [
      ['\t\tct state new jump firewall-check\n\t}\n\n\tchain filter-output-pre-dnat', '\t\tct state 0x8 jump firewall-check\n\t}\n\n\tchain filter-output-pre-dnat', 53],
      ['ct status dnat', 'ct status 0x20', 114],
      ['meta l4proto tcp dnat ip to', 'meta l4proto 6 dnat ip to', 127],
      ['map { 0 : 10.244.1.5 . 8080 }', 'map { 0 : 10.244.1.5 . "http-alt" }', 127],
    ] as const) {
      expect(plain.includes(from), from).toBe(true);
      const e = refusal(plain.replace(from, to));
      expect(e.at?.line, to).toBe(line);
      expect(e.message).toContain(HINT);
    }
  });
});

describe('listedRuleProblem: the rule forms nft -n, -S and -N print (nft 1.0.6, kube-proxy rules)', () => {
  const refused = [
    'ct state 0x8 jump firewall-check',
    'ct status 0x20 ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random',
    'meta l4proto 6 dnat to 10.180.0.1:80',
    'fib saddr type 2 goto service-42NFTM6N-ns2/svc2/tcp/p80',
    'meta l4proto tcp dnat to 10.180.0.3:"http"',
    'meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.180.0.4 . "http", 1 : 10.180.0.5 . "http" }',
    // read.ts's rendering of -j -n and -j -S
    'ct state 8 jump firewall-check',
    'reject with icmp 3',
    'meta l4proto tcp dnat to 10.244.1.5:http-alt',
    'meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.180.0.4 . http, 1 : 10.180.0.5 . 80 }',
    // -N: host names for addresses
    'ip saddr != { 5.6.7.8, lb.example.com } drop',
    'meta l4proto tcp dnat to pod-a.example:80',
  ];
  const read = [
    'ct state new jump firewall-check',
    'ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random',
    'meta l4proto tcp dnat to 10.180.0.1:80',
    'meta l4proto tcp dnat to [fd00:10:180::1]:80',
    'fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80',
    'meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.180.0.4 . 80, 1 : 10.180.0.5 . 80 }',
    'meta l4proto tcp dnat ip6 to numgen random mod 1 map { 0 : fd00:10:180::4 . 80 }',
    'ip saddr != { 5.6.7.8, 10.0.0.0/8, 192.168.0.0/16 } drop',
    'ip daddr @cluster-ips ip saddr != 10.244.0.0/16 meta mark set meta mark | 0x00004000',
    'ip6 saddr != fd00:244::/56 meta mark set meta mark | 0x00004000',
    'iifname "eth0" goto services',
    'reject',
    'reject with icmpv6 addr-unreachable',
  ];
  for (const r of refused) it(`refused: ${r}`, () => expect(listedRuleProblem(r)).toBeDefined());
  for (const r of read) it(`read: ${r}`, () => expect(listedRuleProblem(r)).toBeUndefined());
});

describe('names read from a previous state', () => {
  it('a JSON chain named `evil"; flush ruleset; #` is refused (it reached the printer guard: exit 3)', () => {
    const text = '{"nftables":[{"metainfo":{"json_schema_version":1}},{"table":{"family":"ip","name":"kube-proxy","handle":1}},{"chain":{"family":"ip","table":"kube-proxy","name":"evil\\"; flush ruleset; #","handle":2}}]}';
    const e = refusal(text);
    expect(e.message).toContain('chain name "evil\\"; flush ruleset; #" is not an nftables name kpc can write back');
  });
  it('in a listing, a transaction and a map element’s goto', () => {
    const cases: Array<[string, number]> = [
      [listing('ruleset.txt').replace('chain reject-chain {', 'chain reject;chain {'), 121],
      [listing('ruleset.txt').replace('map service-nodeports {', 'map service*nodeports {'), 45],
      [listing('ruleset.txt').replace(': goto firewall-7XESENFC-ns/lb/tcp/p }', ': goto firewall-7XESENFC-ns/lb/tcp/p} }'), 34],
      ['add table ip kube-proxy\nadd chain ip kube-proxy a"b', 2],
      ['add table ip kube-proxy\nadd set ip kube-proxy s;x { type ipv4_addr ; }', 2],
      ['add table ip kube-proxy\nadd counter ip kube-proxy c#1', 2],
    ];
    for (const [text, line] of cases) {
      const e = refusal(text);
      expect(e.at?.line, text.slice(0, 80)).toBe(line);
      expect(e.message).toMatch(/name .* is not an nftables name kpc can write back|is not a verdict/);
    }
  });
  it('kube-proxy’s own names are read', () => {
    const s = readTransaction('add table ip kube-proxy\nadd chain ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80\nadd set ip kube-proxy affinity-5TPGNJF2-ns1/svc1/tcp/p80__10.180.0.1/80 { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }', 'ip', 'kube-proxy');
    expect([...s.chains.keys()]).toEqual(['endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80']);
  });
  it('a transaction element in the numeric form is refused', () => {
    const e = refusal('add table ip kube-proxy\nadd map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }\nadd chain ip kube-proxy a\nadd element ip kube-proxy service-ips { 10.0.0.1 . 6 . 80 : goto a }');
    expect(e.at?.line).toBe(4);
  });
});

describe('a long listing', () => {
  const block = (els: string[]) => `table ip kube-proxy {\n\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\telements = { ${els.join(',\n\t\t\t     ')} }\n\t}\n}\n`;
  const element = (i: number, proto = 'tcp') => `10.${(i >> 8) & 255}.${i & 255}.1 . ${proto} . 80 : goto service-${i}`;

  it('8,000 elements over 8,000 lines read in linear time (the running brace depth)', { timeout: 120_000 }, () => {
    // nft prints a map's elements one per line after the first; kube-proxy's service-ips of 8,000
    // Services is such a block. Reading it used to rescan the joined text at every line.
    const text = block(Array.from({ length: 8000 }, (_, i) => element(i)));
    const t = performance.now();
    const s = readListing(text, 'ip', 'kube-proxy');
    const ms = performance.now() - t;
    expect(s.sets.get('service-ips')!.elements.size).toBe(8000);
    expect(s.sets.get('service-ips')!.elements.get('10.31.63.1 . tcp . 80')!.value).toBe('goto service-7999');
    expect(ms, `${ms.toFixed(0)} ms`).toBeLessThan(5_000);
  });

  it('an element on line 4,000 of the block is refused at that line', () => {
    // element 0 is on line 4, element 3996 on line 4000
    const text = block(Array.from({ length: 8000 }, (_, i) => element(i, i === 3996 ? '6' : 'tcp')));
    expect(text.split('\n')[3999]).toContain('10.15.156.1 . 6 . 80');
    expect(refusal(text).at?.line).toBe(4000);
  });
});

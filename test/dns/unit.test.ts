/**
 * The pieces of kpc dns on their own: names and their escaping, addresses as Go reads them,
 * reverse names, endpoint hostnames, SRV weights, and the CLI's refusals.
 */

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KpcError } from '../../src/errors.js';
import { describe, expect, it } from 'vitest';
import { parseIP } from '../../src/net/ip.js';
import { endpointHostname } from '../../src/dns/model.js';
import { addressFromReverse, goIPString, joinName, parseDomain, presentLabel, relativeName, reverseName, reverseZone } from '../../src/dns/names.js';
import { srvWeight } from '../../src/dns/zone.js';
import { runKpc } from '../helpers/run-kpc.js';

const SVC = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  clusterIP: 10.96.0.5
  ports: [{name: http, port: 80}]
`;

describe('names', () => {
  it('letters, digits, - and _ pass; other printable bytes are escaped \\c, the rest \\DDD (RFC 1035 §5.1)', () => {
    expect(presentLabel('db-0')).toBe('db-0');
    expect(presentLabel('_http')).toBe('_http');
    expect(presentLabel('Web')).toBe('web');
    expect(presentLabel('a.b')).toBe('a\\.b');
    expect(presentLabel('a;b')).toBe('a\\;b');
    expect(presentLabel('a b')).toBe('a\\032b');
    expect(presentLabel('$x')).toBe('\\$x');
    expect(presentLabel('@')).toBe('\\@');
    expect(presentLabel('"')).toBe('\\"');
    expect(presentLabel('a\nb')).toBe('a\\010b');
    expect(presentLabel('é')).toBe('\\195\\169');
  });

  it('refuses what no name can hold: an empty label, a label over 63 octets, a name over 255', () => {
    expect(() => presentLabel('')).toThrow(KpcError);
    expect(presentLabel('a'.repeat(63))).toBe('a'.repeat(63));
    expect(() => presentLabel('a'.repeat(64))).toThrow(/at most 63/);
    const long = Array(4).fill('b'.repeat(63)).join('.');
    expect(() => parseDomain(long)).toThrow(/at most 255/);
    expect(parseDomain(Array(3).fill('b'.repeat(63)).join('.') + '.' + 'c'.repeat(61))).toHaveLength(253 + 1);
    // An escaped octet is one octet on the wire.
    expect(() => joinName(['\\'.repeat(63)], '.')).not.toThrow();
    expect(() => parseDomain('a..b')).toThrow(/empty label/);
  });

  it('names relative to the origin', () => {
    expect(relativeName('cluster.local.', 'cluster.local.')).toBe('@');
    expect(relativeName('web.shop.svc.cluster.local.', 'cluster.local.')).toBe('web.shop.svc');
    expect(relativeName('www.example.com.', 'cluster.local.')).toBe('www.example.com.');
  });
});

describe('addresses', () => {
  it("Go's net.ParseIP: leading zeros are no address; IPv4-mapped IPv6 is IPv4; IPv6 printed canonically", () => {
    expect(goIPString('010.1.2.3')).toBeUndefined();
    expect(goIPString('10.1.2.3')).toBe('10.1.2.3');
    expect(goIPString('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(goIPString('fd00:0:0::1')).toBe('fd00::1');
  });

  it('reverse names and the zone cut', () => {
    const v4 = parseIP('10.244.1.5')!.ip;
    expect(reverseName(v4)).toBe('5.1.244.10.in-addr.arpa.');
    expect(reverseZone(v4)).toBe('10.in-addr.arpa.');
    const v6 = parseIP('2001:db8::1')!.ip;
    expect(reverseName(v6)).toBe('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.');
    expect(reverseZone(v6)).toBe('1.0.0.2.ip6.arpa.');
  });

  it("ExtractAddressFromReverse: a whole address only, printed as Go prints it", () => {
    expect(addressFromReverse('5.1.244.10.in-addr.arpa.')).toBe('10.244.1.5');
    expect(addressFromReverse('1.244.10.in-addr.arpa.')).toBeUndefined();
    expect(addressFromReverse('010.1.244.10.in-addr.arpa.')).toBeUndefined();
    expect(addressFromReverse('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.')).toBe('2001:db8::1');
    expect(addressFromReverse('0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.')).toBe('2001:db8::');
    expect(addressFromReverse('8.b.d.0.1.0.0.2.ip6.arpa.')).toBeUndefined();
    expect(addressFromReverse('web.shop.svc.cluster.local.')).toBeUndefined();
  });

  it('endpointHostname: the hostname, else the address with . or : dashed (a trailing - gets a 0)', () => {
    expect(endpointHostname({ ip: '10.244.1.5', hostname: 'db-0' })).toBe('db-0');
    expect(endpointHostname({ ip: '10.244.1.5', hostname: '' })).toBe('10-244-1-5');
    expect(endpointHostname({ ip: 'fd00::5', hostname: '' })).toBe('fd00--5');
    expect(endpointHostname({ ip: '2001:db8:3333:4444:5555:6666::', hostname: '' })).toBe('2001-db8-3333-4444-5555-6666--0');
  });

  it("SRV weights as plugin.SRV computes them: floor(100/n), at least 1", () => {
    expect([1, 2, 3, 4, 6, 7, 100, 101, 250].map(srvWeight)).toEqual([100, 50, 33, 25, 16, 14, 1, 1, 1]);
  });
});

describe('kpc dns command line', () => {
  it('refuses a cluster domain whose names cannot be written, and nothing is printed', async () => {
    const domain = [...Array(3).fill('d'.repeat(63)), 'e'.repeat(55)].join('.');
    const r = await runKpc(['dns', '-f', '-', '--cluster-domain', domain], SVC);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/at most 255/);
  });

  it('--cluster-domain: a lowercase RFC 1123 subdomain (kubeadm ValidateNetworking), one trailing dot allowed; the rest is a usage error', async () => {
    for (const bad of ['a/b', 'a\\b', 'a_b.local', 'Cluster.Local', '-a.local', 'a-.local', '.', '', 'a b', 'a..b', '..', `${'x'.repeat(63)}.${'y'.repeat(63)}.${'z'.repeat(63)}.${'w'.repeat(62)}`]) {
      const r = await runKpc(['dns', '-f', '-', '--cluster-domain', bad], SVC);
      expect(r.code, bad).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`--cluster-domain "${bad}": `);
    }
    const dir = mkdtempSync(join(tmpdir(), 'kpc-dns-domain-'));
    try {
      const r = await runKpc(['dns', '-f', '-', '--cluster-domain', 'a/b', '-o', dir], SVC);
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(/ENOENT/);
      expect(readdirSync(dir)).toEqual([]);
      for (const good of ['corp.example', 'corp.example.', '1-2.a', 'k8s']) {
        const g = await runKpc(['dns', '-f', '-', '--cluster-domain', good], SVC);
        expect(g.code, good).toBe(0);
        expect(g.stdout).toContain(`$ORIGIN ${good.replace(/\.$/, '')}.\n`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses bad flags', async () => {
    for (const [args, msg] of [
      [['--cluster-domain', 'a..b'], /a lowercase RFC 1123 subdomain must consist of/],
      [['--cluster-domain', 'in-addr.arpa'], /reverse zone/],
      [['--ttl', '3601'], /--ttl/],
      [['--dns-service', 'kube-dns'], /NAMESPACE\/NAME/],
      [['--dns-pod-ip', '10.0.0.300'], /not an IP address/],
      [['--config', 'x.yaml'], /KubeProxyConfiguration/],
    ] as const) {
      const r = await runKpc(['dns', '-f', '-', ...args], SVC);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(msg);
    }
    const t = await runKpc(['dns', 'resolve', 'web', 'MX', '-f', '-'], SVC);
    expect(t.code).toBe(2);
    expect(t.stderr).toMatch(/not one of/);
  });

  it('kpc dns zones is the default subcommand; dns --help says what cannot be known offline', async () => {
    const a = await runKpc(['dns', '-f', '-'], SVC);
    const b = await runKpc(['dns', 'zones', '-f', '-'], SVC);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).toMatch(/^web\.shop\.svc 5 IN A 10\.96\.0\.5$/m);
    const h = await runKpc(['dns', '--help']);
    expect(h.stdout).toMatch(/pods insecure/);
    expect(h.stdout).toMatch(/Wildcards/);
    expect(h.stdout).toMatch(/upstream resolver/);
    expect(h.stdout).toMatch(/DNS server's own address/);
  });

  it('resolve explains a name found in another namespace', async () => {
    const r = await runKpc(['dns', 'resolve', 'web', '--from-namespace', 'blog', '-f', '-'], SVC);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1. web.blog.svc.cluster.local. A: NXDOMAIN');
    expect(r.stdout).toContain('4. web. A (as is, last): forwarded upstream');
    expect(r.stdout).toContain('hint: Service shop/web exists: from namespace blog ask for web.shop');
  });

  it('resolve: a name with 5 dots is asked as is first; pods insecure answers a dashed pod name', async () => {
    const r = await runKpc(['dns', 'resolve', 'a.b.c.d.e.f', '-f', '-', '-o', 'json'], SVC);
    const j = JSON.parse(r.stdout) as { steps: { name: string; reason: string }[] };
    expect(j.steps.map((s) => s.reason)).toEqual(['as-is', 'search', 'search', 'search']);
    const p = await runKpc(['dns', 'resolve', '10-244-1-7.shop.pod.cluster.local.', '-f', '-', '-o', 'json'], SVC);
    const pj = JSON.parse(p.stdout) as { outcome: string; steps: { answer: { data: string }[] }[] };
    expect(pj.outcome).toBe('answer');
    expect(pj.steps[0]!.answer[0]!.data).toBe('10.244.1.7');
    const d = await runKpc(['dns', 'resolve', '10-244-1-7.shop.pod.cluster.local.', '--pods', 'disabled', '-f', '-', '-o', 'json'], SVC);
    expect((JSON.parse(d.stdout) as { outcome: string }).outcome).toBe('NXDOMAIN');
  });
});

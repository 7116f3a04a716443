import { describe, expect, it } from 'vitest';
import { canonicalCIDR, canonicalIP, compareIPs, formatHostPort, formatIP, isCanonicalIPv4, parseCIDR, parseIP } from '../../src/net/ip.js';

describe('IP parsing with Go ParseIPSloppy semantics, printed as Go prints', () => {
  it.each([
    ['10.1.2.3', '10.1.2.3'],
    ['010.001.002.003', '10.1.2.3'], // decimal, never octal (CVE-2021-29923)
    ['172.30.0.041', '172.30.0.41'],
    ['::ffff:1.2.3.4', '1.2.3.4'], // IPv4-mapped is IPv4 to Go
    ['2001:DB8:0::1', '2001:db8::1'],
    ['fd00:10:180::1', 'fd00:10:180::1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'], // the longest zero run is compressed
    ['0:0:1:0:0:1:0:0', '::1:0:0:1:0:0'], // the first of equal runs
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['::', '::'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalIP(input)).toBe(expected);
  });

  it.each(['', '1.2.3', '1.2.3.4.5', '256.1.1.1', 'fe80::1%eth0', '1::2::3', ':1', '1:', '[::1]', ' 1.2.3.4', '1.2.3.4\n'])('rejects %j', (input) => {
    expect(parseIP(input)).toBeUndefined();
  });

  it('marks what strict validation would reject', () => {
    expect(parseIP('010.1.2.3')?.sloppy).toBe('leading-zeros');
    expect(parseIP('::ffff:1.2.3.4')?.sloppy).toBe('ipv4-mapped');
    expect(parseIP('10.1.2.3')?.sloppy).toBeUndefined();
  });
});

describe('CIDR parsing', () => {
  it.each([
    ['203.0.113.000/025', '203.0.113.0/25'],
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['fd00:10::1/64', 'fd00:10::/64'],
    ['0.0.0.0/0', '0.0.0.0/0'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalCIDR(input)).toBe(expected);
  });

  it.each(['1.2.3.4', '1.2.3.4/33', '::/129', '1.2.3.4/', '/8', '1.2.3.4/8/8'])('rejects %j', (input) => {
    expect(parseCIDR(input)).toBeUndefined();
  });
});

describe('isCanonicalIPv4 (the shortcut that skips parsing)', () => {
  it('is true exactly when parseIP reads IPv4 text with nothing sloppy that formatIP prints back', () => {
    const parts = ['0', '00', '1', '01', '9', '10', '99', '100', '127', '255', '256', '999', '1000', '', 'a', ' 1', '-1', '0x1'];
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let k = 0; k < 20000; k++) {
      const count = 1 + Math.floor(next() * 5);
      const text = Array.from({ length: count }, () => parts[Math.floor(next() * parts.length)]).join(next() < 0.97 ? '.' : ':');
      const p = parseIP(text);
      const canonical = p !== undefined && p.ip.family === 'IPv4' && p.sloppy === undefined && formatIP(p.ip) === text;
      expect(isCanonicalIPv4(text), JSON.stringify(text)).toBe(canonical);
    }
    for (const text of ['10.0.0.1', '255.255.255.255', '0.0.0.0']) expect(isCanonicalIPv4(text)).toBe(true);
    for (const text of ['010.0.0.1', '1.2.3', '1.2.3.4.', '::ffff:1.2.3.4', '1.2.3.256']) expect(isCanonicalIPv4(text)).toBe(false);
  });
});

describe('formatHostPort (Go net.JoinHostPort)', () => {
  it('brackets a host with a colon, and only that', () => {
    expect(formatHostPort('10.96.0.1', 443)).toBe('10.96.0.1:443');
    expect(formatHostPort('fd00::1', 53)).toBe('[fd00::1]:53');
    expect(formatHostPort('::', 0)).toBe('[::]:0');
    expect(formatHostPort('node-1', 80)).toBe('node-1:80');
  });
});

describe('compareIPs', () => {
  it('IPv4 before IPv6, then numerically (not as text)', () => {
    const ips = ['fd00::1', '10.0.0.10', '::1', '10.0.0.9', '1.2.3.4', '::ffff:0.0.0.1', '255.255.255.255'];
    const sorted = ips.map((t) => parseIP(t)!.ip).sort(compareIPs).map(formatIP);
    expect(sorted).toEqual(['0.0.0.1', '1.2.3.4', '10.0.0.9', '10.0.0.10', '255.255.255.255', '::1', 'fd00::1']);
    expect(compareIPs(parseIP('10.0.0.1')!.ip, parseIP('10.0.0.1')!.ip)).toBe(0);
  });
});

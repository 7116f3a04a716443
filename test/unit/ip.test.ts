import { describe, expect, it } from 'vitest';
import { canonicalCIDR, canonicalIP, parseCIDR, parseIP } from '../../src/net/ip.js';

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

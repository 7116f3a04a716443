import { describe, expect, it } from 'vitest';
import { isPlainUnicastIPv4, validateCIDR, validateEndpointIP, validateIP, validateIPStrictly } from '../../../src/parser/k8s/validate/ips.js';
import { INVALID_CIDR, INVALID_IP, render } from './helpers.js';

const P = ['f'];
const legacy = (v: string) => ({ errors: render(validateIP(P, v, 'legacy').filter((e) => e.severity === 'error')), warnings: render(validateIP(P, v, 'legacy').filter((e) => e.severity === 'warning')) });
const strict = (v: string) => render(validateIP(P, v, 'strict').filter((e) => e.severity === 'error'));

describe('validateIP', () => {
  it.each([
    ['10.1.2.3', [], []],
    ['fd00::1', [], []],
    ['fe80::1%eth0', [`f: Invalid value: "fe80::1%eth0": ${INVALID_IP}`], []],
    ['1.2.3', [`f: Invalid value: "1.2.3": ${INVALID_IP}`], []],
    ['', [`f: Invalid value: "": ${INVALID_IP}`], []],
    ['010.1.2.3', [], ['f: Invalid value: "010.1.2.3": must not have leading 0s (accepted as 10.1.2.3, as clusters before v1.36 do; iptables would read it as octal)']],
    ['::ffff:1.2.3.4', [], ['f: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address (accepted as 1.2.3.4, as clusters before v1.36 do)']],
    ['::ffff:01.2.3.4', [], ['f: Invalid value: "::ffff:01.2.3.4": must not have leading 0s (accepted as 1.2.3.4, as clusters before v1.36 do; iptables would read it as octal)']],
    ['2001:DB8::1', [], ['f: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")']],
  ])('legacy %j', (v, errors, warnings) => expect(legacy(v)).toEqual({ errors, warnings }));

  it.each([
    ['010.1.2.3', ['f: Invalid value: "010.1.2.3": must not have leading 0s']],
    ['::ffff:1.2.3.4', ['f: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address']],
    ['2001:DB8::1', []],
  ])('strict %j', (v, errors) => expect(strict(v)).toEqual(errors));
});

describe('validateCIDR', () => {
  it.each([
    ['10.0.0.0/8', 'legacy', []],
    ['10.0.0.0', 'legacy', [`f: Invalid value: "10.0.0.0": ${INVALID_CIDR}`]],
    ['10.0.0.0/33', 'legacy', [`f: Invalid value: "10.0.0.0/33": ${INVALID_CIDR}`]],
    ['10.0.0.1/8', 'legacy', ['f: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length (accepted as 10.0.0.0/8, as clusters before v1.36 do)']],
    ['10.0.0.0/08', 'legacy', ['f: Invalid value: "10.0.0.0/08": must not have leading 0s in IP or prefix length (accepted as 10.0.0.0/8, as clusters before v1.36 do)']],
    ['010.0.0.0/8', 'strict', ['f: Invalid value: "010.0.0.0/8": must not have leading 0s in IP or prefix length']],
    ['::ffff:10.0.0.0/104', 'strict', ['f: Invalid value: "::ffff:10.0.0.0/104": must not have an IPv4-mapped IPv6 address']],
    ['::ffff:10.0.0.0/104', 'legacy', ['f: Invalid value: "::ffff:10.0.0.0/104": must not have an IPv4-mapped IPv6 address (accepted as 10.0.0.0/8, as clusters before v1.36 do)']],
    ['10.0.0.1/8', 'strict', ['f: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length']],
    ['FD00::/64', 'strict', ['f: IPv6 CIDR value "FD00::/64" should be in RFC 5952 canonical format ("fd00::/64")']],
  ] as const)('%j (%s)', (v, mode, expected) => expect(render(validateCIDR(P, v, mode))).toEqual(expected));
});

describe('validateEndpointIP and validateIPOfFamily', () => {
  it.each([
    ['10.0.0.1', []],
    ['::', ['f: Invalid value: "::": may not be unspecified (::)']],
    ['::1', ['f: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)']],
    ['224.0.0.251', ['f: Invalid value: "224.0.0.251": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)']],
    ['ff05::1', []],
    ['x', ['f: Invalid value: "x": must be a valid IP address']],
  ])('validateEndpointIP(%j)', (v, expected) => expect(render(validateEndpointIP(P, v))).toEqual(expected));

  it('validateIPStrictly is IsValidIP: leading zeros, IPv4-mapped and non-canonical forms are errors', () => {
    expect(render(validateIPStrictly(P, 'fd00::1'))).toEqual([]);
    expect(render(validateIPStrictly(P, 'x'))).toEqual(['f: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
    expect(render(validateIPStrictly(P, '::ffff:1.2.3.4'))).toEqual(['f: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address']);
    expect(render(validateIPStrictly(P, 'FD00::1'))).toEqual(['f: Invalid value: "FD00::1": must be in canonical form ("fd00::1")']);
  });
});

describe('isPlainUnicastIPv4 (the EndpointSlice shortcut)', () => {
  it('says yes only where validateIP and validateEndpointIP report nothing', () => {
    const texts = ['10.1.2.3', '1.2.3.4', '255.255.255.255', '0.1.2.3', '127.0.0.1', '169.254.1.1', '169.1.2.3', '224.0.0.1', '224.1.2.3', '010.1.2.3', '1.2.3.04', '1.2.3', '1.2.3.4.5', '1.2.3.256', '1.2.3.4 ', ' 1.2.3.4', '1..2.3', '::ffff:1.2.3.4', '', '1.2.3.4a', '1000.2.3.4', '+1.2.3.4'];
    let seed = 1;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    for (let k = 0; k < 3000; k++) {
      const part = () => [String(rnd(256)), String(rnd(300)), `0${rnd(10)}`, String(rnd(10))][rnd(4)]!;
      texts.push([part(), part(), part(), part()].join('.'));
    }
    for (const t of texts) {
      const silent = validateIP(P, t, 'legacy').length === 0 && validateIP(P, t, 'strict').length === 0 && validateEndpointIP(P, t).length === 0;
      if (isPlainUnicastIPv4(t)) expect(silent, t).toBe(true);
    }
    expect(isPlainUnicastIPv4('10.1.2.3')).toBe(true);
  });
});

/**
 * Addresses as iptables rules match them: `10.0.0.0/8`, `10.180.0.1` (= /32), `10.180.0.1/32`
 * (iptables-save's form), `192.168.0.0/255.255.255.0` (iptables-save prints a non-contiguous
 * mask this way), `fd00::1/128`, `::1`.
 */

import { parseIP, type IP } from '../../net/ip.js';
import type { AddressMatchSpec } from './model.js';

function prefixMask(family: 'IPv4' | 'IPv6', prefix: number): Uint8Array {
  const len = family === 'IPv4' ? 4 : 16;
  const out = new Uint8Array(len);
  for (let k = 0; k < len; k++) {
    const bits = Math.max(0, Math.min(8, prefix - k * 8));
    out[k] = (0xff << (8 - bits)) & 0xff;
  }
  return out;
}

/** Parse one address or network; undefined when it is neither (iptables would resolve a host name). */
export function parseAddressSpec(text: string): AddressMatchSpec | undefined {
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const maskText = slash < 0 ? undefined : text.slice(slash + 1);
  const parsed = parseIP(addrText);
  if (!parsed) return undefined;
  const ip = parsed.ip;
  // An IPv4-mapped IPv6 address is an IPv6 address to ip6tables; parseIP folds it to IPv4.
  if (addrText.includes(':') && ip.family === 'IPv4') return undefined;
  const max = ip.family === 'IPv4' ? 32 : 128;
  let mask: Uint8Array;
  if (maskText === undefined) {
    mask = prefixMask(ip.family, max);
  } else if (/^\d{1,3}$/.test(maskText)) {
    const n = Number(maskText);
    if (n > max) return undefined;
    mask = prefixMask(ip.family, n);
  } else {
    const m = parseIP(maskText);
    if (!m || m.ip.family !== ip.family || (maskText.includes(':') !== addrText.includes(':'))) return undefined;
    mask = m.ip.bytes;
  }
  const bytes = new Uint8Array(ip.bytes.length);
  for (let k = 0; k < bytes.length; k++) bytes[k] = ip.bytes[k]! & mask[k]!;
  return { family: ip.family, bytes, mask, text };
}

export function addressMatches(spec: AddressMatchSpec, ip: IP): boolean {
  if (spec.family !== ip.family) return false;
  for (let k = 0; k < spec.bytes.length; k++) {
    if ((ip.bytes[k]! & spec.mask[k]!) !== spec.bytes[k]) return false;
  }
  return true;
}

/** Compare two addresses as unsigned big-endian numbers (IPv4 first); trace/ imports it by this name. */
export { compareIPs as compareIP } from '../../net/ip.js';

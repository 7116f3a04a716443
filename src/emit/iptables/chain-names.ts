/**
 * kube-proxy's chain names: a fixed prefix and 16 characters of
 * base32(sha256(service port name + protocol [+ endpoint])) (proxier.go
 * servicePortChainNameBase / servicePortEndpointChainNameBase).
 */

import { sha256 } from './sha256.js';
import type { Protocol } from '../../ir/model.js';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The first 16 characters of RFC 4648 base32 of the SHA-256 of `input` (10 bytes → 16 chars), as character codes. */
function hashCodes(input: string): number[] {
  const digest = sha256(input);
  const codes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < 10; i++) {
    buffer = (buffer << 8) | digest[i]!;
    bits += 8;
    while (bits >= 5) {
      codes.push(BASE32.charCodeAt((buffer >>> (bits - 5)) & 31));
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return codes;
}

export function hashSuffix(input: string): string {
  return String.fromCharCode(...hashCodes(input));
}

/**
 * `prefix` + the hash suffix, made as one flat string. (A string built with `+` is a tree
 * of pieces in V8; chain names are kept, compared and sorted by the hundred thousand, and a
 * flat string is one object and compares fast.)
 */
function hashedName(prefix: string, codes: readonly number[]): string {
  const all: number[] = [];
  for (let i = 0; i < prefix.length; i++) all.push(prefix.charCodeAt(i));
  return String.fromCharCode(...all, ...codes);
}

/** The hash input of a service port: the protocol is hashed lower-case ("ns1/svc1:p80tcp"). */
function servicePortKey(spn: string, protocol: Protocol): string {
  return spn + protocol.toLowerCase();
}

/** The suffix shared by KUBE-SVC-, KUBE-SVL-, KUBE-EXT- and KUBE-FW- of one service port. */
export function servicePortHash(spn: string, protocol: Protocol): string {
  return hashSuffix(servicePortKey(spn, protocol));
}

/** KUBE-SEP-<hash of spn + protocol + endpoint string>. */
export function endpointChainName(spn: string, protocol: Protocol, endpointAddress: string): string {
  return hashedName('KUBE-SEP-', hashCodes(servicePortKey(spn, protocol) + endpointAddress));
}

export interface ServicePortChains {
  svc: string;
  svl: string;
  ext: string;
  fw: string;
}

export function servicePortChains(spn: string, protocol: Protocol): ServicePortChains {
  const codes = hashCodes(servicePortKey(spn, protocol));
  return { svc: hashedName('KUBE-SVC-', codes), svl: hashedName('KUBE-SVL-', codes), ext: hashedName('KUBE-EXT-', codes), fw: hashedName('KUBE-FW-', codes) };
}

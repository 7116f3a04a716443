/**
 * kube-proxy's chain names: a fixed prefix and 16 characters of
 * base32(sha256(service port name + protocol [+ endpoint])) (proxier.go
 * servicePortChainNameBase / servicePortEndpointChainNameBase).
 */

import { hash } from 'node:crypto';
import type { Protocol } from '../../ir/model.js';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The first 16 characters of RFC 4648 base32 of the SHA-256 of `input` (10 bytes → 16 chars). */
export function hashSuffix(input: string): string {
  const digest = hash('sha256', input, 'buffer');
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < 10; i++) {
    buffer = (buffer << 8) | digest[i]!;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

/** The suffix shared by KUBE-SVC-, KUBE-SVL-, KUBE-EXT- and KUBE-FW- of one service port. */
export function servicePortHash(spn: string, protocol: Protocol): string {
  // The protocol is hashed lower-case: "ns1/svc1:p80tcp".
  return hashSuffix(spn + protocol.toLowerCase());
}

/** KUBE-SEP-<hash of spn + protocol + endpoint string>. */
export function endpointChainName(spn: string, protocol: Protocol, endpointAddress: string): string {
  return `KUBE-SEP-${hashSuffix(spn + protocol.toLowerCase() + endpointAddress)}`;
}

export interface ServicePortChains {
  svc: string;
  svl: string;
  ext: string;
  fw: string;
}

export function servicePortChains(spn: string, protocol: Protocol): ServicePortChains {
  const h = servicePortHash(spn, protocol);
  return { svc: `KUBE-SVC-${h}`, svl: `KUBE-SVL-${h}`, ext: `KUBE-EXT-${h}`, fw: `KUBE-FW-${h}` };
}

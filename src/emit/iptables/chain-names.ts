/**
 * kube-proxy's chain names: a fixed prefix and 16 characters of
 * base32(sha256(service port name + protocol [+ endpoint])) (proxier.go
 * servicePortChainNameBase / servicePortEndpointChainNameBase).
 *
 * A large ruleset has a quarter of a million of these names, kept, compared and sorted, so
 * each is made as one flat string straight from character codes. (A string built with `+`
 * is a tree of pieces in V8: more objects to keep, slower to compare.)
 */

import { BASE32, base32Digit, sha256Words } from '../common/sha256.js';
import type { Protocol } from '../../ir/model.js';

const SUFFIX_LENGTH = 16;

/**
 * Put the first 16 characters of RFC 4648 base32 of the SHA-256 of `spn + protocol +
 * endpoint` (its first 80 bits, 5 per character) into `codes` from `at`, as character codes.
 */
function putHashSuffix(spn: string, protocol: string, endpoint: string, codes: number[], at: number): void {
  const words = sha256Words(spn, protocol, endpoint);
  for (let k = 0; k < SUFFIX_LENGTH; k++) codes[at + k] = BASE32.charCodeAt(base32Digit(words, k));
}

/**
 * Character-code arrays by length, reused: a name is made from one with a single
 * String.fromCharCode call, and a quarter of a million names need no array each.
 */
const codeArrays: number[][] = [];

function codesOfLength(length: number): number[] {
  return (codeArrays[length] ??= new Array<number>(length).fill(0));
}

/** `text` as one flat string. */
function flat(text: string): string {
  const codes = codesOfLength(text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  return String.fromCharCode.apply(null, codes);
}

/**
 * `prefix` + the hash suffix of what the name hashes: the service port name, the protocol
 * lower-case and, for KUBE-SEP, the endpoint string ("ns1/svc1:p80" "tcp" "10.180.0.1:80"),
 * as one flat string. The parts are hashed in turn, not joined into a new string first.
 */
function hashedName(prefix: string, spn: string, protocol: string, endpoint: string): string {
  const codes = codesOfLength(prefix.length + SUFFIX_LENGTH);
  for (let i = 0; i < prefix.length; i++) codes[i] = prefix.charCodeAt(i);
  putHashSuffix(spn, protocol, endpoint, codes, prefix.length);
  return String.fromCharCode.apply(null, codes);
}

/** The first 16 characters of base32(sha256(input)). */
export function hashSuffix(input: string): string {
  return hashedName('', input, '', '');
}

const LOWER_CASE: Record<Protocol, string> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** The suffix shared by KUBE-SVC-, KUBE-SVL-, KUBE-EXT- and KUBE-FW- of one service port. */
export function servicePortHash(spn: string, protocol: Protocol): string {
  return hashedName('', spn, LOWER_CASE[protocol], '');
}

/** KUBE-SEP-<hash of spn + protocol + endpoint string>. */
export function endpointChainName(spn: string, protocol: Protocol, endpointAddress: string): string {
  return hashedName('KUBE-SEP-', spn, LOWER_CASE[protocol], endpointAddress);
}

export interface ServicePortChains {
  svc: string;
  svl: string;
  ext: string;
  fw: string;
}

export function servicePortChains(spn: string, protocol: Protocol): ServicePortChains {
  const suffix = servicePortHash(spn, protocol);
  return { svc: flat(`KUBE-SVC-${suffix}`), svl: flat(`KUBE-SVL-${suffix}`), ext: flat(`KUBE-EXT-${suffix}`), fw: flat(`KUBE-FW-${suffix}`) };
}

/**
 * SHA-256 (FIPS 180-4) of an ASCII string, in plain JavaScript, for kube-proxy's chain names
 * (iptables' KUBE-SEP-…, nftables' endpoint-…).
 *
 * Why not node:crypto: a 20,000-Service ruleset names a quarter of a million endpoint
 * chains, each the hash of a ~40-character string. For inputs that small the native call,
 * the string conversion and the result Buffer cost more than the hash itself; this loop
 * does the same work without them (about twice as fast). Strings with any non-ASCII
 * character (impossible after validation, but not this module's business) go to
 * node:crypto, which hashes their UTF-8 bytes.
 */

import { hash } from 'node:crypto';

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** The message schedule and the state, reused between calls (the hash is not re-entrant and need not be). */
const W = new Int32Array(64);
const STATE = new Int32Array(8);
/** The padded message, reused while it fits (chain-name inputs are well under 200 bytes). */
let MESSAGE = new Uint8Array(256);
/** The first two parts of the last message, and their character codes OR-ed together. */
let lastA = '';
let lastB = '';
let lastMessage = MESSAGE;
let lastHeadCodes = 0;

/**
 * The digest of `a + b + c` as eight big-endian 32-bit words, in an array that the next call
 * overwrites (no allocation: this runs a quarter of a million times per large ruleset).
 * In parts so that a chain name's input (service port name, protocol, endpoint) is hashed
 * without first being joined into a new string.
 */
export function sha256Words(a: string, b = '', c = ''): Int32Array {
  const n = a.length + b.length + c.length;
  // The message, then 0x80, zeros, and the bit length as the last 8 bytes of the last block.
  const blocks = ((n + 8) >>> 6) + 1;
  if (MESSAGE.length < blocks * 64) MESSAGE = new Uint8Array(blocks * 64);
  const m = MESSAGE;
  // Successive calls often share their first two parts (the KUBE-SEP chains of one service
  // port): those bytes are still in the message from the last call.
  if (a !== lastA || b !== lastB || m !== lastMessage) {
    lastA = a;
    lastB = b;
    lastMessage = m;
    lastHeadCodes = copyCodes(a, m, 0) | copyCodes(b, m, a.length);
  }
  const ascii = lastHeadCodes | copyCodes(c, m, a.length + b.length);
  if (ascii > 0x7f) return wordsOf(hash('sha256', a + b + c, 'buffer'));
  m[n] = 0x80;
  m.fill(0, n + 1, blocks * 64 - 8);
  STATE.set(INITIAL);
  for (let k = 0; k < blocks; k++) {
    for (let i = 0, p = k * 64; i < 16; i++, p += 4) W[i] = (m[p]! << 24) | (m[p + 1]! << 16) | (m[p + 2]! << 8) | m[p + 3]!;
    if (k === blocks - 1) {
      W[14] = Math.floor(n / 0x20000000); // n * 8 as a 64-bit big-endian number
      W[15] = n << 3;
    }
    compress(STATE);
  }
  return STATE;
}

/** Copy the character codes of `s` into `m` from `at` (low bytes); returns them OR-ed together (> 0x7f: not ASCII). */
function copyCodes(s: string, m: Uint8Array, at: number): number {
  let all = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    all |= code;
    m[at + i] = code;
  }
  return all;
}

/** RFC 4648 base32's alphabet, in which kube-proxy writes its chain-name hashes. */
export const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * The k-th base32 digit (0-31) of a digest given as big-endian words (sha256Words): the five
 * bits from bit 5k, continuing into the next word when they cross one.
 */
export function base32Digit(words: Int32Array, k: number): number {
  const bit = k * 5;
  const word = words[bit >>> 5]!;
  const offset = bit & 31;
  return (offset <= 27 ? word >>> (27 - offset) : (word << (offset - 27)) | (words[(bit >>> 5) + 1]! >>> (59 - offset))) & 31;
}

function wordsOf(digest: Uint8Array): Int32Array {
  for (let i = 0; i < 8; i++) STATE[i] = (digest[i * 4]! << 24) | (digest[i * 4 + 1]! << 16) | (digest[i * 4 + 2]! << 8) | digest[i * 4 + 3]!;
  return STATE;
}

/** The digest of `a + b + c` as 32 bytes. */
export function sha256(a: string, b = '', c = ''): Uint8Array {
  const words = sha256Words(a, b, c);
  const digest = new Uint8Array(32);
  for (let i = 0; i < 32; i++) digest[i] = words[i >>> 2]! >>> (24 - 8 * (i & 3));
  return digest;
}

/** One 64-byte block (its first 16 words in W) into `state`. */
function compress(state: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15]!;
    const y = W[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/emit/iptables/sha256.js';

const native = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const ours = (s: string) => Buffer.from(sha256(s)).toString('hex');

describe('sha256 (chain-name hashing) agrees with node:crypto', () => {
  it('on every length around the block and padding boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const s = Array.from({ length: n }, (_, i) => String.fromCharCode(32 + ((i * 7 + n) % 95))).join('');
      expect(ours(s), `length ${n}`).toBe(native(s));
    }
  });

  it('on chain-name inputs', () => {
    for (const s of ['ns1/svc1:p80tcp', 'ns1/svc1:p80tcp10.180.0.1:80', 'ns1/svc1:p80tcp[fd00:10:180::1]:80', 'a'.repeat(1000)]) expect(ours(s)).toBe(native(s));
  });

  it('on non-ASCII text (hashed as UTF-8)', () => {
    for (const s of ['é', 'ns/ü:p', '\u{1F600}x', '\x7f\x80']) expect(ours(s)).toBe(native(s));
  });
});

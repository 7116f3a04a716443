import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/emit/common/sha256.js';

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

  it('on input given in parts: the digest of the parts joined', () => {
    const parts: Array<[string, string, string]> = [['ns1/svc1:p80', 'tcp', '10.180.0.1:80'], ['', 'x'.repeat(70), ''], ['a'.repeat(55), '', 'b'], ['é', 'tcp', '1']];
    for (const [a, b, c] of parts) expect(Buffer.from(sha256(a, b, c)).toString('hex')).toBe(native(a + b + c));
    // Calls sharing their first two parts reuse those bytes; a grown buffer must not.
    for (const c of ['10.0.0.1:80', '10.0.0.22:8080', 'z'.repeat(400), '1']) expect(Buffer.from(sha256('ns/a:p', 'tcp', c)).toString('hex')).toBe(native(`ns/a:ptcp${c}`));
    expect(Buffer.from(sha256('ns/a:p', 'udp', '1')).toString('hex')).toBe(native('ns/a:pudp1'));
    // The reused message buffer must not leak a longer earlier message into a shorter one.
    expect(ours('a'.repeat(300))).toBe(native('a'.repeat(300)));
    expect(ours('abc')).toBe(native('abc'));
  });

  it('on non-ASCII text (hashed as UTF-8)', () => {
    for (const s of ['é', 'ns/ü:p', '\u{1F600}x', '\x7f\x80']) expect(ours(s)).toBe(native(s));
  });
});

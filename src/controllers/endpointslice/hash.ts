/**
 * util.deepHashObjectToString for what the controller hashes: spew's `%#v` dump of a value
 * (apimachinery/utils dump.ForHash), hashed with MD5 (v1.34) or FNV-128a (from v1.35), as
 * lower-case hex.
 */

import { createHash } from 'node:crypto';
import { compareStrings } from '../../go/strings.js';
import type { EndpointPort } from '../../parser/k8s/types.js';

const FNV128_OFFSET = 0x6c62272e07bb014262b821756295c58dn;
const FNV128_PRIME = 0x0000000001000000000000000000013bn;
const MASK128 = (1n << 128n) - 1n;

/** hash/fnv New128a over the UTF-8 bytes, as hex (32 digits). */
export function fnv128a(text: string): string {
  let h = FNV128_OFFSET;
  for (const b of Buffer.from(text, 'utf8')) {
    h ^= BigInt(b);
    h = (h * FNV128_PRIME) & MASK128;
  }
  return h.toString(16).padStart(32, '0');
}

export function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/**
 * dump.ForHash(discovery.EndpointPort{...}) for a port the controller built (getEndpointPorts:
 * name, protocol and port always set, appProtocol copied from the Service): spew prints a
 * pointer's target without quotes and a nil pointer as <nil>.
 */
export function spewEndpointPort(p: EndpointPort): string {
  return `(v1.EndpointPort){Name:(*string)${p.name} Protocol:(*v1.Protocol)${p.protocol} Port:(*int32)${p.port ?? '<nil>'} AppProtocol:(*string)${p.appProtocol ?? '<nil>'}}`;
}

/**
 * NewPortMapKey's sort (util/controller_utils.go, portsInOrder): ports by the hex hash of each
 * one's dump, compared as Go strings. The EndpointSlice controller and the mirroring controller
 * (newAddrTypePortMapKey) both sort a slice's ports so, in place, before writing them. Each port
 * comes back with its hash.
 */
export function portsInOrder<P extends EndpointPort>(ports: readonly P[], hash: 'md5' | 'fnv128a'): Array<{ port: P; hash: string }> {
  const h = hash === 'md5' ? md5 : fnv128a;
  return ports.map((port) => ({ port, hash: h(spewEndpointPort(port)) })).sort((a, b) => compareStrings(a.hash, b.hash));
}

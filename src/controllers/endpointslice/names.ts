/**
 * Names for derived slices. The controller creates each slice with generateName
 * (getEndpointSlicePrefix: `<service>-`, or the bare name when the dash would make an invalid
 * name) and the API server appends 5 random characters (SimpleNameGenerator: the prefix cut to
 * 58 characters, then 5 of util/rand's alphabet). kpc keeps that shape with a suffix derived from
 * the slice's identity (namespace, Service, address type, ports, chunk) instead of a random one,
 * so the same input always gives the same names. Names are not compared with the controller's.
 */

import { nameIsDNSSubdomain } from '../../parser/k8s/validate/names.js';

/** util/rand's alphabet (no vowels, no look-alikes). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** getEndpointSlicePrefix. */
export function endpointSlicePrefix(serviceName: string): string {
  const dashed = `${serviceName}-`;
  return nameIsDNSSubdomain(dashed, true).length === 0 ? dashed : serviceName;
}

export function generatedName(prefix: string, seed: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHANUMS[fnv1a(`${seed}/${i}`) % ALPHANUMS.length];
  return `${prefix.slice(0, 58)}${suffix}`;
}

/**
 * Resource records: the few types cluster DNS serves, their presentation (master-file and
 * dig) form, and one order for printing them.
 */

import { compareStrings } from '../go/strings.js';
import { formatIP, type IP } from '../net/ip.js';

export type RRType = 'A' | 'AAAA' | 'CNAME' | 'SRV' | 'PTR' | 'TXT' | 'NS' | 'SOA';

export const RR_TYPES: readonly RRType[] = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'SRV', 'PTR', 'TXT'];

export type RData =
  | { type: 'A' | 'AAAA'; ip: IP }
  | { type: 'CNAME' | 'PTR' | 'NS'; target: string }
  | { type: 'SRV'; priority: number; weight: number; port: number; target: string }
  | { type: 'TXT'; text: string }
  | { type: 'SOA'; mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number };

export interface RR {
  /** Absolute owner name, presentation form, lower case. */
  name: string;
  ttl: number;
  data: RData;
}

/** A TXT character-string, quoted (RFC 1035 §5.1): `"` and `\` escaped, non-printables as \DDD. */
function quoteText(text: string): string {
  let out = '"';
  for (const b of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(b);
    if (c === '"' || c === '\\') out += `\\${c}`;
    else if (b >= 0x20 && b < 0x7f) out += c;
    else out += `\\${b.toString().padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** The RDATA in presentation form (names absolute, as given). */
export function rdataText(d: RData): string {
  switch (d.type) {
    case 'A':
    case 'AAAA':
      return formatIP(d.ip);
    case 'CNAME':
    case 'PTR':
    case 'NS':
      return d.target;
    case 'SRV':
      return `${d.priority} ${d.weight} ${d.port} ${d.target}`;
    case 'TXT':
      return quoteText(d.text);
    case 'SOA':
      return `${d.mname} ${d.rname} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
  }
}

/** One line, as dig prints an answer: `name ttl IN TYPE rdata` (single spaces). */
export function rrText(rr: RR): string {
  return `${rr.name} ${rr.ttl} IN ${rr.data.type} ${rdataText(rr.data)}`;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Records of one name: by type (RR_TYPES order), then addresses numerically, SRV by port then target. */
export function compareRData(a: RData, b: RData): number {
  const t = RR_TYPES.indexOf(a.type) - RR_TYPES.indexOf(b.type);
  if (t !== 0) return t;
  if ((a.type === 'A' || a.type === 'AAAA') && (b.type === 'A' || b.type === 'AAAA')) return compareBytes(a.ip.bytes, b.ip.bytes);
  if (a.type === 'SRV' && b.type === 'SRV') return a.port - b.port || compareStrings(a.target, b.target) || a.weight - b.weight;
  return compareStrings(rdataText(a), rdataText(b));
}

/** Drop repeated records, keeping the first. */
export function dedupRRs(rrs: readonly RR[]): RR[] {
  const seen = new Set<string>();
  const out: RR[] = [];
  for (const rr of rrs) {
    const k = `${rr.name} ${rr.data.type} ${rdataText(rr.data)}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(rr);
  }
  return out;
}

/** JSON form (kpc dns resolve -o json): the owner, TTL, type and the RDATA as text. */
export function rrJSON(rr: RR): { name: string; ttl: number; type: RRType; data: string } {
  return { name: rr.name, ttl: rr.ttl, type: rr.data.type, data: rdataText(rr.data) };
}

/**
 * Domain names as kpc dns writes them: absolute, lower case, in RFC 1035 master-file
 * presentation form (`web.shop.svc.cluster.local.`), each label checked and escaped so that
 * nothing taken from a manifest can change the meaning of a zone file line.
 *
 * Names are strings ending in a dot. Labels come from Kubernetes names that validation
 * already restricted (DNS-1123/1035 labels, IANA service names), so escaping is normally a
 * no-op; it is still applied, and what cannot be a name at all (an empty label, a label over
 * 63 octets, a name over 255 octets on the wire) is refused with a KpcError (code dns.name).
 */

import { formatIP, parseIP, type IP } from '../net/ip.js';
import { KpcError } from '../errors.js';
import { isDNS1123Subdomain } from '../parser/k8s/validate/names.js';

/** A name that cannot be a DNS name (callers add what it was for). */
export function dnsNameError(message: string): KpcError {
  return new KpcError('usage', 'dns.name', message);
}

const MAX_LABEL = 63;
const MAX_NAME_WIRE = 255;

/**
 * One label in presentation form (RFC 1035 §5.1): letters, digits, `-` and `_` as they are;
 * other printable ASCII as `\c`; anything else as `\DDD`. Upper case is folded to lower case
 * (DNS compares names case-insensitively and CoreDNS lower-cases what it matches).
 */
export function presentLabel(raw: string): string {
  const bytes = Buffer.from(raw.toLowerCase(), 'utf8');
  if (bytes.length === 0) throw dnsNameError('a DNS name cannot have an empty label');
  if (bytes.length > MAX_LABEL) throw dnsNameError(`label "${raw}" is ${bytes.length} octets; a DNS label holds at most ${MAX_LABEL}`);
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (/[a-z0-9_-]/.test(c)) out += c;
    else if (b > 0x20 && b < 0x7f) out += `\\${c}`;
    else out += `\\${b.toString().padStart(3, '0')}`;
  }
  return out;
}

/** Octets of a presentation label on the wire (each `\c` or `\DDD` is one octet). */
function wireLength(label: string): number {
  return label.replace(/\\(\d{3}|.)/g, 'x').length;
}

/** The absolute name of these raw labels, checked: `name(['web', 'shop', 'svc'], 'cluster.local.')`. */
export function joinName(labels: readonly string[], suffix: string): string {
  const presented = labels.map(presentLabel);
  const text = presented.length > 0 ? `${presented.join('.')}.${suffix === '.' ? '' : suffix}` : suffix;
  checkNameLength(text);
  return text;
}

/** Throws unless the presentation name fits in 255 octets on the wire. */
export function checkNameLength(name: string): void {
  const labels = splitName(name);
  const wire = labels.reduce((n, l) => n + 1 + wireLength(l), 1);
  if (wire > MAX_NAME_WIRE) throw dnsNameError(`${name} is ${wire} octets on the wire; a DNS name holds at most ${MAX_NAME_WIRE}`);
}

/** The presentation labels of an absolute name (`a.b.` → ['a', 'b']); the root has none. */
export function splitName(name: string): string[] {
  if (name === '.') return [];
  const body = name.endsWith('.') ? name.slice(0, -1) : name;
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\') {
      cur += body.slice(i, i + (/\d/.test(body[i + 1] ?? '') ? 4 : 2));
      i += /\d/.test(body[i + 1] ?? '') ? 3 : 1;
    } else if (c === '.') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/**
 * A domain name given by the user or a manifest (`cluster.local`, `www.example.com.`), made
 * absolute and checked label by label. Returns the presentation form.
 */
export function parseDomain(text: string): string {
  const t = text.endsWith('.') ? text.slice(0, -1) : text;
  if (t === '') throw dnsNameError('an empty domain name');
  return joinName(t.split('.'), '.');
}

/**
 * The cluster domain (`--cluster-domain cluster.local`), as parseDomain returns it, accepted only
 * when it is a lowercase RFC 1123 subdomain (apimachinery's IsDNS1123Subdomain; one trailing dot
 * allowed, the absolute form CoreDNS's zones take). kubelet's own validation
 * (ValidateKubeletConfiguration) does not look at clusterDomain; kubeadm's ValidateNetworking
 * checks its networking.dnsDomain, the value it gives kubelet, with ValidateDNS1123Subdomain. So
 * `a/b`, `a_b`, `Cluster.Local` or `a..b` are refused here rather than escaped into a zone's
 * name (and `-o DIR`'s file name).
 */
export function parseClusterDomain(text: string): string {
  const t = text.endsWith('.') ? text.slice(0, -1) : text;
  const errs = isDNS1123Subdomain(t);
  if (errs.length > 0) throw dnsNameError(errs.join('; '));
  return parseDomain(t);
}

/** True when `name` is `zone` or below it (names in presentation form, lower case). */
export function isSubdomain(name: string, zone: string): boolean {
  return zone === '.' || name === zone || name.endsWith(`.${zone}`);
}

/** `name` relative to `origin` for an owner field: `@` for the origin itself. */
export function relativeName(name: string, origin: string): string {
  if (name === origin) return '@';
  if (!name.endsWith(`.${origin}`)) return name;
  return name.slice(0, -origin.length - 1);
}

/** The labels of `name` below `zone` (`web.shop.svc.cluster.local.`, `cluster.local.` → web, shop, svc). */
export function labelsBelow(name: string, zone: string): string[] | undefined {
  if (name === zone) return [];
  if (!isSubdomain(name, zone)) return undefined;
  return splitName(relativeName(name, zone));
}

// ---------------------------------------------------------------------------------------------
// Addresses as CoreDNS (Go's net package) reads them, and reverse names
// ---------------------------------------------------------------------------------------------

/**
 * The address Go's net.ParseIP (Go 1.17+) reads from `text`, as CoreDNS's msg.Service.HostType
 * does, or undefined. Unlike the Kubernetes API's legacy parser, Go rejects IPv4 with leading
 * zeros (`010.1.2.3`): CoreDNS takes such a "host" for a name and answers a CNAME to it.
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is an IPv4 address to Go (To4), so an A record.
 */
export function goParseIP(text: string): IP | undefined {
  const p = parseIP(text);
  if (!p || p.sloppy === 'leading-zeros') return undefined;
  return p.ip;
}

/** Go's net.IP.String() of what goParseIP reads: the text CoreDNS's indexes compare with. */
export function goIPString(text: string): string | undefined {
  const ip = goParseIP(text);
  return ip ? formatIP(ip) : undefined;
}

export const IN_ADDR_ARPA = 'in-addr.arpa.';
export const IP6_ARPA = 'ip6.arpa.';

function nibbles(ip: IP): string[] {
  const out: string[] = [];
  for (const b of ip.bytes) out.push((b >> 4).toString(16), (b & 15).toString(16));
  return out;
}

/** The PTR owner of an address: `5.1.244.10.in-addr.arpa.`, 32 nibbles + `ip6.arpa.`. */
export function reverseName(ip: IP): string {
  if (ip.family === 'IPv4') return `${[...ip.bytes].reverse().join('.')}.${IN_ADDR_ARPA}`;
  return `${nibbles(ip).reverse().join('.')}.${IP6_ARPA}`;
}

/**
 * The reverse zone kpc writes an address's PTR record in: the address's first octet for IPv4
 * (`10.in-addr.arpa.`, the classful /8 cut), its first 16-bit group for IPv6
 * (`0.0.d.f.ip6.arpa.` for fd00::/16). See README.md, "Reverse zones".
 */
export function reverseZone(ip: IP): string {
  if (ip.family === 'IPv4') return `${ip.bytes[0]}.${IN_ADDR_ARPA}`;
  return `${nibbles(ip).slice(0, 4).reverse().join('.')}.${IP6_ARPA}`;
}

/**
 * CoreDNS's dnsutil.ExtractAddressFromReverse: the address a full reverse name stands for, as
 * Go prints it, or undefined (not a reverse name, or not exactly one address's labels).
 */
export function addressFromReverse(name: string): string | undefined {
  let search: string;
  let v6 = false;
  if (name.endsWith(`.${IN_ADDR_ARPA}`)) search = name.slice(0, -IN_ADDR_ARPA.length - 1);
  else if (name.endsWith(`.${IP6_ARPA}`)) {
    search = name.slice(0, -IP6_ARPA.length - 1);
    v6 = true;
  } else return undefined;
  const parts = search.split('.').reverse();
  if (!v6) {
    const ip = goParseIP(parts.join('.'));
    return ip && ip.family === 'IPv4' && parts.length === 4 ? formatIP(ip) : undefined;
  }
  // reverse6: groups of four nibbles joined with ':' (a short tail makes Go's ParseIP fail).
  if (parts.length !== 32 || !parts.every((p) => /^[0-9a-f]$/.test(p))) return undefined;
  const groups: string[] = [];
  for (let i = 0; i < 32; i += 4) groups.push(parts.slice(i, i + 4).join(''));
  // Go prints an IPv4-mapped result as dotted IPv4, and so does formatIP of what parseIP reads.
  const ip = parseIP(groups.join(':'));
  return ip ? formatIP(ip.ip) : undefined;
}

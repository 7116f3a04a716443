/**
 * IP addresses and CIDRs, parsed the way Kubernetes parses them and printed the way Go prints them.
 *
 * Why not node:net? `net.isIP('010.1.2.3')` is 0 while Kubernetes' legacy parser
 * (netutils.ParseIPSloppy, a fork of Go 1.16's net.ParseIP) accepts it and reads it as *decimal*
 * 10.1.2.3. iptables would read the same text as *octal* (CVE-2021-29923), so kpc never copies
 * an address from its input: it parses it here and prints the canonical form.
 */

export type IPFamily = 'IPv4' | 'IPv6';

/** A parsed address: 4 bytes for IPv4 (including IPv4-mapped IPv6 input), 16 for IPv6. */
export interface IP {
  readonly family: IPFamily;
  readonly bytes: Uint8Array;
}

/** A parsed CIDR, already masked to its network address. */
export interface CIDR {
  readonly ip: IP;
  readonly prefix: number;
}

/** What a lenient parse noticed that strict (v1.36+) validation would reject. */
export type Sloppiness = 'leading-zeros' | 'ipv4-mapped' | 'host-bits' | 'non-canonical';

export interface ParsedIP {
  ip: IP;
  /** Present when the text is not already canonical in the way strict validation requires. */
  sloppy?: Sloppiness;
}

export interface ParsedCIDR {
  cidr: CIDR;
  sloppy?: Sloppiness;
}

const MAX_TEXT = 64; // longer strings are never addresses; bounds the work on hostile input

/** Go 1.16 dtoi: a run of decimal digits (leading zeros allowed) and how many were read. */
function readDecimal(s: string, i: number): { n: number; end: number } | undefined {
  let n = 0;
  let j = i;
  while (j < s.length && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) {
    n = n * 10 + (s.charCodeAt(j) - 48);
    if (n >= 0xffffff) return undefined;
    j++;
  }
  return j === i ? undefined : { n, end: j };
}

/**
 * Dotted decimal the way Go 1.16's parseIPv4 reads it: four runs of decimal digits, each
 * at most 255, leading zeros allowed (and noted: they are read as decimal). One pass, no
 * allocation but the result: every endpoint address goes through here.
 */
function parseIPv4Bytes(s: string): { bytes: Uint8Array; leadingZeros: boolean } | undefined {
  const bytes = new Uint8Array(4);
  let leadingZeros = false;
  let i = 0;
  for (let k = 0; k < 4; k++) {
    if (k > 0) {
      if (s.charCodeAt(i) !== 0x2e) return undefined; // '.'
      i++;
    }
    const start = i;
    let n = 0;
    for (let c = s.charCodeAt(i); c >= 0x30 && c <= 0x39; c = s.charCodeAt(++i)) {
      n = n * 10 + (c - 0x30);
      if (n > 255) return undefined;
    }
    if (i === start) return undefined;
    if (i - start > 1 && s.charCodeAt(start) === 0x30) leadingZeros = true;
    bytes[k] = n;
  }
  return i === s.length ? { bytes, leadingZeros } : undefined;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Go 1.16 parseIPv6 (no zones): groups of 1-4 hex digits, one `::`, an optional trailing IPv4. */
function parseIPv6Bytes(s: string): Uint8Array | undefined {
  const ip = new Uint8Array(16);
  let ellipsis = -1;
  let i = 0;
  if (s.startsWith('::')) {
    ellipsis = 0;
    i = 2;
    if (i === s.length) return ip;
  }
  let j = 0;
  while (j < 16) {
    let n = 0;
    let k = i;
    while (k < s.length && k - i < 5) {
      const v = hexValue(s.charCodeAt(k));
      if (v < 0) break;
      n = n * 16 + v;
      k++;
    }
    if (k === i || k - i > 4) return undefined;
    if (k < s.length && s[k] === '.') {
      // Trailing IPv4 in the last 32 bits.
      if (ellipsis < 0 && j !== 12) return undefined;
      if (j + 4 > 16) return undefined;
      const v4 = parseIPv4Bytes(s.slice(i));
      if (!v4) return undefined;
      ip.set(v4.bytes, j);
      j += 4;
      i = s.length;
      break;
    }
    ip[j] = n >> 8;
    ip[j + 1] = n & 0xff;
    j += 2;
    i = k;
    if (i === s.length) break;
    if (s[i] !== ':' || i + 1 === s.length) return undefined;
    i++;
    if (s[i] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = j;
      i++;
      if (i === s.length) break;
    }
  }
  if (i !== s.length) return undefined;
  if (j < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - j;
    for (let k = j - 1; k >= ellipsis; k--) ip[k + n] = ip[k]!;
    for (let k = ellipsis + n - 1; k >= ellipsis; k--) ip[k] = 0;
  } else if (ellipsis >= 0) {
    return undefined; // `::` must stand for at least one group
  }
  return ip;
}

function isIPv4Mapped(b: Uint8Array): boolean {
  for (let k = 0; k < 10; k++) if (b[k] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/**
 * Parse an IP the way netutils.ParseIPSloppy does. Returns undefined for anything Go rejects
 * (zones, brackets, whitespace, empty). IPv4-mapped IPv6 becomes IPv4, as Go's To4() sees it.
 */
export function parseIP(text: string): ParsedIP | undefined {
  if (text.length === 0 || text.length > MAX_TEXT) return undefined;
  if (text.includes('.') && !text.includes(':')) {
    const v4 = parseIPv4Bytes(text);
    if (!v4) return undefined;
    return v4.leadingZeros ? { ip: { family: 'IPv4', bytes: v4.bytes }, sloppy: 'leading-zeros' } : { ip: { family: 'IPv4', bytes: v4.bytes } };
  }
  const v6 = parseIPv6Bytes(text);
  if (!v6) return undefined;
  if (isIPv4Mapped(v6)) return { ip: { family: 'IPv4', bytes: v6.slice(12) }, sloppy: 'ipv4-mapped' };
  const ip: IP = { family: 'IPv6', bytes: v6 };
  return formatIP(ip) === text ? { ip } : { ip, sloppy: 'non-canonical' };
}

/**
 * True when `text` is an IPv4 address in Go's canonical form: four decimal octets 0-255, no
 * leading zeros. parseIP reads such a text as IPv4 with nothing sloppy, and formatIP prints it
 * back unchanged, so a caller that wants only the family and the canonical text can skip the
 * parse and its byte array: every endpoint address of a cluster is asked.
 */
export function isCanonicalIPv4(text: string): boolean {
  let i = 0;
  for (let octet = 0; octet < 4; octet++) {
    if (octet > 0) {
      if (text.charCodeAt(i) !== 0x2e /* . */) return false;
      i++;
    }
    const start = i;
    let value = 0;
    while (i < text.length && i - start < 3) {
      const c = text.charCodeAt(i);
      if (c < 0x30 || c > 0x39) break;
      value = value * 10 + (c - 0x30);
      i++;
    }
    const digits = i - start;
    if (digits === 0 || value > 255 || (digits > 1 && text.charCodeAt(start) === 0x30)) return false;
  }
  return i === text.length;
}

/** Parse a CIDR the way netutils.ParseCIDRSloppy does, masked to its network address. */
export function parseCIDR(text: string): ParsedCIDR | undefined {
  if (text.length === 0 || text.length > MAX_TEXT) return undefined;
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const addr = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  let family: IPFamily;
  let bytes: Uint8Array;
  let leadingZeros = false;
  const v4 = addr.includes(':') ? undefined : parseIPv4Bytes(addr);
  if (v4) {
    family = 'IPv4';
    bytes = v4.bytes;
    leadingZeros = v4.leadingZeros;
  } else {
    const v6 = parseIPv6Bytes(addr);
    if (!v6) return undefined;
    family = 'IPv6';
    bytes = v6;
  }
  const d = readDecimal(prefixText, 0);
  const max = family === 'IPv4' ? 32 : 128;
  if (!d || d.end !== prefixText.length || d.n > max) return undefined;
  if (prefixText.length > 1 && prefixText[0] === '0') leadingZeros = true;
  const masked = maskBytes(bytes, d.n);
  const cidr: CIDR = { ip: { family, bytes: masked }, prefix: d.n };
  let sloppy: Sloppiness | undefined;
  if (leadingZeros) sloppy = 'leading-zeros';
  else if (!equalBytes(masked, bytes)) sloppy = 'host-bits';
  else if (family === 'IPv6' && formatCIDR(cidr) !== text) sloppy = 'non-canonical';
  return sloppy ? { cidr, sloppy } : { cidr };
}

function maskBytes(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let k = 0; k < bytes.length; k++) {
    const bits = Math.max(0, Math.min(8, prefix - k * 8));
    out[k] = bytes[k]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * Numeric address order: IPv4 before IPv6, then the bytes as one unsigned big-endian number
 * (kpc's order for lists kube-proxy takes from a Go map, and ipvsadm's for what it lists).
 */
export function compareIPs(a: IP, b: IP): number {
  if (a.family !== b.family) return a.family === 'IPv4' ? -1 : 1;
  for (let i = 0; i < a.bytes.length; i++) {
    const d = a.bytes[i]! - b.bytes[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Go's net.JoinHostPort: `10.96.0.1:443`, `[fd00::1]:443` (a host with a colon is bracketed).
 * The one home of that text in kpc.
 */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** An address and a port as text: `10.0.0.1:80`, `[fd00::1]:80`. */
export function formatIPPort(ip: IP, port: number): string {
  return formatHostPort(formatIP(ip), port);
}

/** Go's net.IP.String(): dotted decimal, or RFC 5952 with the first longest zero run as `::`. */
export function formatIP(ip: IP): string {
  const b = ip.bytes;
  if (ip.family === 'IPv4') return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  let bestStart = -1;
  let bestEnd = -1;
  for (let i = 0; i < 16; i += 2) {
    let j = i;
    while (j < 16 && b[j] === 0 && b[j + 1] === 0) j += 2;
    if (j > i && j - i > bestEnd - bestStart) {
      bestStart = i;
      bestEnd = j;
      i = j;
    }
  }
  if (bestEnd - bestStart <= 2) {
    bestStart = -1;
    bestEnd = -1;
  }
  let out = '';
  for (let i = 0; i < 16; i += 2) {
    if (i === bestStart) {
      out += '::';
      i = bestEnd;
      if (i >= 16) break;
    } else if (i > 0) {
      out += ':';
    }
    out += ((b[i]! << 8) | b[i + 1]!).toString(16);
  }
  return out;
}

export function formatCIDR(c: CIDR): string {
  return `${formatIP(c.ip)}/${c.prefix}`;
}

export function cidrContains(c: CIDR, ip: IP): boolean {
  if (c.ip.family !== ip.family) return false;
  return equalBytes(maskBytes(ip.bytes, c.prefix), c.ip.bytes);
}

export function isLoopback(ip: IP): boolean {
  if (ip.family === 'IPv4') return ip.bytes[0] === 127;
  return ip.bytes.every((v, k) => (k === 15 ? v === 1 : v === 0));
}

export function isUnspecified(ip: IP): boolean {
  return ip.bytes.every((v) => v === 0);
}

export function isLinkLocalUnicast(ip: IP): boolean {
  const b = ip.bytes;
  if (ip.family === 'IPv4') return b[0] === 169 && b[1] === 254;
  return b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
}

export function isLinkLocalMulticast(ip: IP): boolean {
  const b = ip.bytes;
  if (ip.family === 'IPv4') return b[0] === 224 && b[1] === 0 && b[2] === 0;
  return b[0] === 0xff && (b[1]! & 0x0f) === 0x02;
}

/** Parse and print in one step; undefined when the text is not an address. */
export function canonicalIP(text: string): string | undefined {
  if (isCanonicalIPv4(text)) return text;
  const p = parseIP(text);
  return p ? formatIP(p.ip) : undefined;
}

export function canonicalCIDR(text: string): string | undefined {
  const p = parseCIDR(text);
  return p ? formatCIDR(p.cidr) : undefined;
}

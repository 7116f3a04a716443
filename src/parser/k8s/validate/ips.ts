/**
 * IP and CIDR fields, checked the way apimachinery's pkg/util/validation/ip.go does, with kpc's
 * `legacy | strict` switch for the KEP-4858 rules (StrictIPCIDRValidation: alpha v1.33, on by
 * default from v1.36).
 *
 * - legacy (clusters up to v1.35): leading zeros, IPv4-mapped IPv6 and CIDR host bits are
 *   accepted, read with decimal semantics, and reported as warnings that say what the value was
 *   taken to mean. iptables would read a 0-prefixed octet as octal (CVE-2021-29923), so the user
 *   must see this.
 * - strict: the same texts are errors, as the API server reports them.
 *
 * Parsing is always src/net/ip.ts (Go ParseIPSloppy semantics); nothing here uses node:net.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { fieldWarning } from '../../../diagnostics.js';
import {
  formatCIDR,
  formatIP,
  isLinkLocalMulticast,
  isLinkLocalUnicast,
  isLoopback,
  isCanonicalIPv4,
  isUnspecified,
  parseCIDR,
  parseIP,
  type CIDR,
  type IP,
  type IPFamily,
} from '../../../net/ip.js';
import { asWarning, invalid } from '../field-errors.js';
import { goQuote } from '../go-format.js';

export type IPValidation = 'legacy' | 'strict';

export const INVALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
export const INVALID_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

const LEGACY_NOTE = 'as clusters before v1.36 do';
const OCTAL_NOTE = 'iptables would read it as octal';

/**
 * True when a dotted-quad part of the text (alone or after the last ':') has a leading 0.
 * A loop over the characters rather than slice/split: every endpoint address passes here.
 */
function hasLeadingZeroOctet(text: string): boolean {
  const v4Start = text.lastIndexOf(':') + 1;
  if (text.indexOf('.', v4Start) < 0) return false;
  let partStart = v4Start;
  for (let k = v4Start; k <= text.length; k++) {
    if (k < text.length && text.charCodeAt(k) !== 0x2e /* . */) continue;
    if (k - partStart > 1 && text.charCodeAt(partStart) === 0x30 /* 0 */) return true;
    partStart = k + 1;
  }
  return false;
}

/**
 * parseIP with a memory of one: the rules for one address (family, legacy form, special ranges)
 * run one after another, and one parse serves them all. Callers only read the result.
 */
let lastText: string | undefined;
let lastParsed: ReturnType<typeof parseIP>;
function parseIPOnce(text: string): ReturnType<typeof parseIP> {
  if (text !== lastText) {
    lastParsed = parseIP(text);
    lastText = text;
  }
  return lastParsed;
}

function isV4MappedBytes(ip: IP): boolean {
  if (ip.family !== 'IPv6') return false;
  for (let k = 0; k < 10; k++) if (ip.bytes[k] !== 0) return false;
  return ip.bytes[10] === 0xff && ip.bytes[11] === 0xff;
}

/** Strict-mode complaint about an IP that legacy parsing accepts (netip.ParseAddr's view). */
export function ipStrictness(text: string): 'leading-zeros' | 'ipv4-mapped' | undefined {
  const p = parseIPOnce(text);
  if (!p) return undefined;
  if (hasLeadingZeroOctet(text)) return 'leading-zeros';
  if (p.sloppy === 'ipv4-mapped') return 'ipv4-mapped';
  return undefined;
}

function strictnessError(path: FieldPath, text: string, detail: string, acceptedAs: string, octal: boolean, mode: IPValidation): FieldError {
  if (mode === 'strict') return invalid(path, text, detail);
  const note = octal ? `${LEGACY_NOTE}; ${OCTAL_NOTE}` : LEGACY_NOTE;
  return asWarning(invalid(path, text, `${detail} (accepted as ${acceptedAs}, ${note})`));
}

/** The parsed address, or undefined when Go's ParseIPSloppy would reject the text. */
export function parsedIP(text: string): IP | undefined {
  return parseIPOnce(text)?.ip;
}

/**
 * The family of an address, or undefined when Go's ParseIPSloppy would reject the text. A
 * canonical dotted quad (every Service's cluster IP, usually) needs no parse into bytes.
 */
export function ipFamilyOf(text: string): IPFamily | undefined {
  if (isCanonicalIPv4(text)) return 'IPv4';
  return parseIPOnce(text)?.ip.family;
}

/**
 * IsValidIPForLegacyField: the check behind every IP field kpc reads (clusterIPs, externalIPs,
 * endpoint addresses, load-balancer ingress IPs). Also returns the API server's canonical-form
 * warning for IPv6 (GetWarningsForIP).
 */
export function validateIP(path: FieldPath, text: string, mode: IPValidation): FieldError[] {
  // Nothing below objects to a canonical dotted quad (no leading zeros, not mapped, canonical).
  if (isCanonicalIPv4(text)) return [];
  const p = parseIPOnce(text);
  if (!p) return [invalid(path, text, INVALID_IP)];
  const strictness = ipStrictness(text);
  if (strictness === 'leading-zeros') return [strictnessError(path, text, 'must not have leading 0s', formatIP(p.ip), true, mode)];
  if (strictness === 'ipv4-mapped') return [strictnessError(path, text, 'must not be an IPv4-mapped IPv6 address', formatIP(p.ip), false, mode)];
  if (p.sloppy === 'non-canonical') {
    return [fieldWarning(path, `IPv6 address ${goQuote(text)} should be in RFC 5952 canonical format (${goQuote(formatIP(p.ip))})`)];
  }
  return [];
}

/**
 * validation.IsValidIP (apimachinery util/validation/ip.go): strict, for fields born after
 * strict IP validation (an IPv6 EndpointSlice's addresses): leading zeros and IPv4-mapped
 * addresses are errors, and so is a form other than the canonical one.
 */
export function validateIPStrictly(path: FieldPath, text: string): FieldError[] {
  const p = parseIPOnce(text);
  if (!p) return [invalid(path, text, INVALID_IP)];
  const errs: FieldError[] = [];
  const strictness = ipStrictness(text);
  if (strictness === 'leading-zeros') errs.push(invalid(path, text, 'must not have leading 0s'));
  if (strictness === 'ipv4-mapped') errs.push(invalid(path, text, 'must not be an IPv4-mapped IPv6 address'));
  if (errs.length > 0) return errs;
  const canonical = formatIP(p.ip);
  return canonical === text ? [] : [invalid(path, text, `must be in canonical form (${goQuote(canonical)})`)];
}

/** Go's IPNet.String() for a mapped prefix: the IPv4 network with the prefix reduced by 96. */
function cidrAcceptedAs(c: CIDR): string {
  if (isV4MappedBytes(c.ip) && c.prefix >= 96) {
    return formatCIDR({ ip: { family: 'IPv4', bytes: c.ip.bytes.slice(12) }, prefix: c.prefix - 96 });
  }
  return formatCIDR(c);
}

function cidrHasLeadingZeros(text: string): boolean {
  const slash = text.indexOf('/');
  const prefix = text.slice(slash + 1);
  return hasLeadingZeroOctet(text.slice(0, slash)) || (prefix.length > 1 && prefix.startsWith('0'));
}

/**
 * IsValidCIDRForLegacyField: load-balancer source ranges, podCIDRs. Strict checks run in Go's
 * order (leading 0s, then IPv4-mapped, then host bits) and report only the first.
 */
export function validateCIDR(path: FieldPath, text: string, mode: IPValidation): FieldError[] {
  const p = parseCIDR(text);
  if (!p) return [invalid(path, text, INVALID_CIDR)];
  const acceptedAs = cidrAcceptedAs(p.cidr);
  if (cidrHasLeadingZeros(text)) {
    return [strictnessError(path, text, 'must not have leading 0s in IP or prefix length', acceptedAs, hasLeadingZeroOctet(text.slice(0, text.indexOf('/'))), mode)];
  }
  if (isV4MappedBytes(p.cidr.ip)) return [strictnessError(path, text, 'must not have an IPv4-mapped IPv6 address', acceptedAs, false, mode)];
  if (p.sloppy === 'host-bits') return [strictnessError(path, text, 'must not have bits set beyond the prefix length', acceptedAs, false, mode)];
  if (p.sloppy === 'non-canonical') {
    return [fieldWarning(path, `IPv6 CIDR value ${goQuote(text)} should be in RFC 5952 canonical format (${goQuote(formatCIDR(p.cidr))})`)];
  }
  return [];
}

/**
 * ValidateEndpointIP (formerly ValidateNonSpecialIP): endpoint addresses and externalIPs may
 * not be unspecified, loopback or link-local. Multicast outside 224.0.0.0/24 is allowed (the
 * source calls that "probably a bug").
 */
export function validateEndpointIP(path: FieldPath, text: string): FieldError[] {
  const ip = parsedIP(text);
  if (!ip) return [invalid(path, text, 'must be a valid IP address')];
  const errs: FieldError[] = [];
  if (isUnspecified(ip)) errs.push(invalid(path, text, `may not be unspecified (${text})`));
  if (isLoopback(ip)) errs.push(invalid(path, text, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (isLinkLocalUnicast(ip)) errs.push(invalid(path, text, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (isLinkLocalMulticast(ip)) errs.push(invalid(path, text, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}


/**
 * True for the everyday endpoint address no rule objects to: a canonical dotted quad (four
 * decimal octets 0-255, no leading zeros) whose first octet is none of 0, 127, 169 and 224.
 * Such a text reads the same to every parser (nothing to warn about in either mode), and only
 * those first octets can make an address unspecified, loopback, link-local or link-local
 * multicast. So for it validateIP and validateEndpointIP report nothing,
 * and the EndpointSlice validator skips them: a large cluster has one such address per Pod,
 * and parsing each into bytes was a tenth of its decoding time.
 */
export function isPlainUnicastIPv4(text: string): boolean {
  if (!isCanonicalIPv4(text)) return false;
  let first = 0;
  for (let i = 0; text.charCodeAt(i) !== 0x2e /* . */; i++) first = first * 10 + (text.charCodeAt(i) - 0x30);
  return first !== 0 && first !== 127 && first !== 169 && first !== 224;
}

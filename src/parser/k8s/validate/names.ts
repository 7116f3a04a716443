/**
 * Name and label formats, as apimachinery checks them (pkg/util/validation/validation.go and
 * pkg/api/validate/content/kube.go). Each `is*` returns the list of messages Go returns, so an
 * empty list means valid. These are the gate that keeps quotes, spaces, newlines, control and
 * non-ASCII characters out of the names kpc writes into iptables comments.
 *
 * Lengths are UTF-8 byte counts, because Go's len() on a string counts bytes.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { invalid, required } from '../field-errors.js';
import { byteLength } from '../go-format.js';

/** RegexError, including the upstream double space before "or" (`'my-name',  or '123-abc'`). */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is not a valid label (length already checked) must have dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);

/** content.IsLabelKey (= IsQualifiedName): `[prefix/]name`. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  // strings.Split(value, "/") by index: every label key passes here, and most have no prefix.
  const slash = value.indexOf('/');
  let name: string;
  if (slash < 0) {
    name = value;
  } else if (value.indexOf('/', slash + 1) < 0) {
    const prefix = value.slice(0, slash);
    name = value.slice(slash + 1);
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** IANA service name (IsValidPortName): what a string targetPort must be. */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** IsFullyQualifiedDomainName: FQDN EndpointSlice addresses. */
export function validateFullyQualifiedDomainName(path: FieldPath, name: string): FieldError[] {
  if (name.length === 0) return [required(path)];
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  const sub = isDNS1123Subdomain(trimmed);
  if (sub.length > 0) return [invalid(path, trimmed, sub.join(','))];
  const labels = trimmed.split('.');
  if (labels.length < 2) return [invalid(path, trimmed, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return [invalid(path, label, errs.join(','))];
  }
  return [];
}

/** One Invalid error per message, as `for _, msg := range ...` loops do. */
export function messagesAt(path: FieldPath, value: string, messages: string[]): FieldError[] {
  // A loop, not messages.map(closure): this runs for every label and port name, and the list
  // is nearly always empty.
  const errs: FieldError[] = [];
  for (const m of messages) errs.push(invalid(path, value, m));
  return errs;
}

/** ValidateDNS1123Label / ValidateQualifiedName / ValidateDNS1123Subdomain wrappers. */
export function validateDNS1123Label(value: string, path: FieldPath): FieldError[] {
  return messagesAt(path, value, isDNS1123Label(value));
}

export function validateDNS1123Subdomain(value: string, path: FieldPath): FieldError[] {
  return messagesAt(path, value, isDNS1123Subdomain(value));
}

export function validateQualifiedName(value: string, path: FieldPath): FieldError[] {
  return messagesAt(path, value, isQualifiedName(value));
}

/** A ValidateNameFunc: `prefix` is true for generateName, whose trailing dash is masked. */
export type NameFunc = (name: string, prefix: boolean) => string[];

/**
 * maskTrailingDash, bug included: Go's `name[:len(name)-2] + "a"` drops two characters, so
 * `web-` is checked as `wea`.
 */
function maskTrailingDash(name: string): string {
  if (!name.endsWith('-')) return name;
  return name.length >= 2 ? `${name.slice(0, -2)}a` : 'a';
}

export const nameIsDNSSubdomain: NameFunc = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameFunc = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameFunc = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);

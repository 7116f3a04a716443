/** Shared builders and renderers for the k8s decoding tests. */

import { formatFieldPath, type FieldError } from '../../../src/diagnostics.js';
import { decodeObject, type DecodeOptions, type DecodeResult } from '../../../src/parser/k8s/decode.js';

export const LEGACY: DecodeOptions = { ipValidation: 'legacy', nodePortRange: { min: 30000, max: 32767 } };
export const STRICT: DecodeOptions = { ipValidation: 'strict', nodePortRange: { min: 30000, max: 32767 } };

/** `path: message`, the rendering users see (without the file position). */
export function render(errors: readonly FieldError[]): string[] {
  return errors.map((e) => (e.path.length === 0 ? e.message : `${formatFieldPath(e.path)}: ${e.message}`));
}

export function errorsOf(r: DecodeResult): string[] {
  return r.status === 'invalid' ? render(r.errors) : [];
}

export function warningsOf(r: DecodeResult): string[] {
  return r.status === 'skipped' ? [] : render(r.warnings);
}

// Plain JSON objects the tests mutate freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Raw = any;

export function service(): Raw {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      clusterIP: '10.96.0.10',
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      selector: { app: 'web' },
    },
  };
}

export function endpointSlice(): Raw {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc12', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.1.5'], conditions: { ready: true }, nodeName: 'node-a' }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

export function endpoints(): Raw {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'web', namespace: 'default' },
    subsets: [{ addresses: [{ ip: '10.0.1.5' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
  };
}

export function node(): Raw {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'zone-a' } },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
    status: { addresses: [{ type: 'InternalIP', address: '192.168.1.10' }, { type: 'Hostname', address: 'node-a' }] },
  };
}

/** Applies `change` to a fresh object and decodes it. */
export function decodeWith(make: () => Raw, change: (o: Raw) => void, opts: DecodeOptions = LEGACY): DecodeResult {
  const o = make();
  change(o);
  return decodeObject(o, opts);
}

/** The decoded object, failing loudly when decoding did not succeed. */
export function ok<T = Raw>(r: DecodeResult): T {
  if (r.status !== 'ok') throw new Error(`expected ok, got ${r.status}: ${r.status === 'invalid' ? render(r.errors).join('\n') : r.note}`);
  return r.object as T;
}

/** The API server's regex messages, to keep tables readable. */
export const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
export const DNS1123_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
export const DNS1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const QUALIFIED_NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
export const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
export const INVALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
export const INVALID_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/**
 * Names that reach iptables comments (namespace, Service name, port names) must be rejected
 * before any emitter sees them, with the API server's own message. Each hostile value below is
 * something that would break out of, or inject into, `--comment "ns/svc:port"` in
 * iptables-restore input (validation.md §11).
 */

import { describe, expect, it } from 'vitest';
import { DNS1035, DNS1123_LABEL, DNS1123_SUBDOMAIN, decodeWith, endpointSlice, endpoints, errorsOf, node, service } from './helpers.js';

/** [description, value, the value as Go's %q prints it] */
const HOSTILE: Array<[string, string, string]> = [
  ['a double quote', 'web"x', '"web\\"x"'],
  ['a newline', 'web\nx', '"web\\nx"'],
  ['a carriage return', 'web\rx', '"web\\rx"'],
  ['a line separator', 'web\u2028x', '"web\\u2028x"'],
  ['a NUL byte', 'web\u0000x', '"web\\x00x"'],
  ['command substitution', '$(reboot)', '"$(reboot)"'],
  ['a backslash', 'web\\x', '"web\\\\x"'],
  ['a space', 'web x', '"web x"'],
  ['a tab', 'web\tx', '"web\\tx"'],
  ['a non-ASCII letter', 'wéb', '"wéb"'],
  ['an iptables-restore command', 'x\nCOMMIT\n-A INPUT -j ACCEPT', '"x\\nCOMMIT\\n-A INPUT -j ACCEPT"'],
];

describe('hostile names are rejected with the API message', () => {
  for (const [what, value, quoted] of HOSTILE) {
    describe(what, () => {
      it('in a Service name', () => {
        expect(errorsOf(decodeWith(service, (s) => (s.metadata.name = value)))).toEqual([`metadata.name: Invalid value: ${quoted}: ${DNS1035}`]);
      });
      it('in a namespace', () => {
        expect(errorsOf(decodeWith(service, (s) => (s.metadata.namespace = value)))).toEqual([`metadata.namespace: Invalid value: ${quoted}: ${DNS1123_LABEL}`]);
      });
      it('in a Service port name', () => {
        expect(errorsOf(decodeWith(service, (s) => (s.spec.ports[0].name = value)))).toEqual([`spec.ports[0].name: Invalid value: ${quoted}: ${DNS1123_LABEL}`]);
      });
      it('in an EndpointSlice port name', () => {
        expect(errorsOf(decodeWith(endpointSlice, (s) => (s.ports[0].name = value)))).toEqual([`ports[0].name: Invalid value: ${quoted}: ${DNS1123_LABEL}`]);
      });
      it('in an Endpoints port name', () => {
        expect(errorsOf(decodeWith(endpoints, (e) => (e.subsets[0].ports[0].name = value)))).toEqual([`subsets[0].ports[0].name: Invalid value: ${quoted}: ${DNS1123_LABEL}`]);
      });
      it('in a Node name', () => {
        expect(errorsOf(decodeWith(node, (n) => (n.metadata.name = value)))).toEqual([`metadata.name: Invalid value: ${quoted}: ${DNS1123_SUBDOMAIN}`]);
      });
    });
  }

  it('a dot in a port name gets the shorter label message', () => {
    expect(errorsOf(decodeWith(service, (s) => (s.spec.ports[0].name = 'a.b')))).toEqual(['spec.ports[0].name: Invalid value: "a.b": must not contain dots']);
  });

  it('values of Go named types are printed as JSON, which escapes <, > and & (unlike %q)', () => {
    expect(errorsOf(decodeWith(service, (s) => (s.spec.ports[0].protocol = '<TCP>&\u0000')))).toEqual([
      'spec.ports[0].protocol: Unsupported value: "\\u003cTCP\\u003e\\u0026\\u0000": supported values: "SCTP", "TCP", "UDP"',
    ]);
  });

  it('a hostile selector value is rejected as a label value', () => {
    expect(errorsOf(decodeWith(service, (s) => (s.spec.selector = { app: 'web"\n' })))).toEqual([
      "spec.selector: Invalid value: \"web\\\"\\n\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '../../../src/parser/k8s/types.js';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, STRICT, decodeWith, endpointSlice, errorsOf, ok, warningsOf, type Raw } from './helpers.js';

interface Case {
  name: string;
  change: (s: Raw) => void;
  errors: string[];
  warnings?: string[];
}

function check(cases: Case[]) {
  for (const c of cases) {
    it(c.name, () => {
      const r = decodeWith(endpointSlice, c.change);
      expect(errorsOf(r)).toEqual(c.errors);
      if (c.warnings) expect(warningsOf(r)).toEqual(c.warnings);
    });
  }
}

const addr = (a: string) => (s: Raw) => (s.endpoints[0].addresses = [a]);

describe('EndpointSlice: happy path and defaults (validation.md §6.1)', () => {
  it('decodes, keeps conditions unset when unset, defaults port name and protocol', () => {
    const r = decodeWith(endpointSlice, (s) => {
      s.endpoints.push({ addresses: ['10.0.1.6'] });
      s.ports = [{ port: 8080 }];
    });
    expect(warningsOf(r)).toEqual([]);
    const slice = ok<EndpointSlice>(r);
    expect(slice.endpoints[1]).toEqual({ addresses: ['10.0.1.6'], conditions: {} });
    expect(slice.ports).toEqual([{ name: '', protocol: 'TCP', port: 8080 }]);
  });

  it('drops deprecatedTopology as the v1 API does', () => {
    const slice = ok<EndpointSlice>(decodeWith(endpointSlice, (s) => (s.endpoints[0].deprecatedTopology = { 'kubernetes.io/hostname': 'node-a' })));
    expect(slice.endpoints[0]).not.toHaveProperty('deprecatedTopology');
  });

  it('keeps hints for zones and nodes', () => {
    const slice = ok<EndpointSlice>(decodeWith(endpointSlice, (s) => (s.endpoints[0].hints = { forZones: [{ name: 'zone-a' }], forNodes: [{ name: 'node-a' }] })));
    expect(slice.endpoints[0]!.hints).toEqual({ forZones: ['zone-a'], forNodes: ['node-a'] });
  });
});

describe('EndpointSlice: validation (validation.md §6.2)', () => {
  check([
    { name: 'name is a DNS subdomain', change: (s) => (s.metadata.name = 'Web_1'), errors: [`metadata.name: Invalid value: "Web_1": ${DNS1123_SUBDOMAIN}`] },
    { name: 'namespace is required', change: (s) => delete s.metadata.namespace, errors: ['metadata.namespace: Required value'] },
    { name: 'addressType is required', change: (s) => delete s.addressType, errors: ['addressType: Required value'] },
    {
      name: 'addressType must be supported',
      change: (s) => (s.addressType = 'IP'),
      errors: ['addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"'],
    },
    {
      name: 'at most 1000 endpoints, checked before any endpoint',
      change: (s) => (s.endpoints = Array.from({ length: 1001 }, () => ({ addresses: ['bogus'] }))),
      errors: ['endpoints: Too many: 1001: must have at most 1000 items'],
    },
    { name: 'at least one address', change: (s) => (s.endpoints[0].addresses = []), errors: ['endpoints[0].addresses: Required value: must contain at least 1 address'] },
    {
      name: 'at most 100 addresses',
      change: (s) => (s.endpoints[0].addresses = Array.from({ length: 101 }, (_, i) => `10.0.${Math.floor(i / 200)}.${(i % 200) + 1}`)),
      errors: ['endpoints[0].addresses: Too many: 101: must have at most 100 items'],
    },
    // v1.34 validateEndpoints: a valid IP of the other family is reported at the list's path.
    { name: 'IPv4 slices hold IPv4 addresses', change: addr('fd00::1'), errors: ['endpoints[0].addresses: Invalid value: "fd00::1": must be an IPv4 address'] },
    {
      name: 'a non-IP is reported once, by IsValidIPForLegacyField (the kube-proxy oracle, seed 95)',
      change: addr('web-1'),
      errors: ['endpoints[0].addresses[0]: Invalid value: "web-1": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'],
    },
    { name: 'no loopback endpoints', change: addr('127.0.0.2'), errors: ['endpoints[0].addresses[0]: Invalid value: "127.0.0.2": may not be in the loopback range (127.0.0.0/8, ::1/128)'] },
    {
      name: 'no link-local multicast endpoints',
      change: addr('224.0.0.18'),
      errors: ['endpoints[0].addresses[0]: Invalid value: "224.0.0.18": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'],
    },
    {
      name: 'IPv6 slices are checked strictly: an IPv4-mapped address is refused',
      change: (s) => {
        s.addressType = 'IPv6';
        s.endpoints[0].addresses = ['::ffff:10.0.1.5'];
      },
      // IPv6 addresses are checked strictly (validation.IsValidIP).
      errors: ['endpoints[0].addresses[0]: Invalid value: "::ffff:10.0.1.5": must not be an IPv4-mapped IPv6 address'],
    },
    {
      name: 'IPv6 link-local endpoints',
      change: (s) => {
        s.addressType = 'IPv6';
        s.endpoints[0].addresses = ['fe80::1'];
      },
      errors: ['endpoints[0].addresses[0]: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)'],
    },
    {
      name: 'FQDN addresses need two labels',
      change: (s) => {
        s.addressType = 'FQDN';
        s.endpoints[0].addresses = ['db'];
      },
      errors: ['endpoints[0].addresses[0]: Invalid value: "db": should be a domain with at least two segments separated by dots'],
      warnings: ['addressType: kube-proxy ignores FQDN EndpointSlices ("No semantics are defined for the FQDN type")'],
    },
    {
      name: 'FQDN addresses are DNS subdomains (one trailing dot allowed)',
      change: (s) => {
        s.addressType = 'FQDN';
        s.endpoints[0].addresses = ['db.example.com.', 'DB.example.com'];
      },
      errors: [`endpoints[0].addresses[1]: Invalid value: "DB.example.com": ${DNS1123_SUBDOMAIN}`],
    },
    { name: 'nodeName is a DNS subdomain', change: (s) => (s.endpoints[0].nodeName = 'Node A'), errors: [`endpoints[0].nodeName: Invalid value: "Node A": ${DNS1123_SUBDOMAIN}`] },
    { name: 'hostname is a DNS-1123 label', change: (s) => (s.endpoints[0].hostname = 'web.1'), errors: ['endpoints[0].hostname: Invalid value: "web.1": must not contain dots'] },
    {
      name: 'at most 8 zone hints',
      change: (s) => (s.endpoints[0].hints = { forZones: Array.from({ length: 9 }, (_, i) => ({ name: `z${i}` })) }),
      errors: ['endpoints[0].hints.forZones: Too many: 9: must have at most 8 items'],
    },
    {
      name: 'zone hints are unique label values',
      change: (s) => (s.endpoints[0].hints = { forZones: [{ name: 'zone-a' }, { name: 'zone-a' }, { name: 'zone b' }] }),
      errors: ['endpoints[0].hints.forZones[1].name: Duplicate value: "zone-a"', `endpoints[0].hints.forZones[2].name: Invalid value: "zone b": ${LABEL_VALUE}`],
    },
    {
      name: 'at most 20000 ports (100 before v1.21)',
      change: (s) => (s.ports = Array.from({ length: 20001 }, (_, i) => ({ name: `p${i}`, port: 1 + (i % 65535) }))),
      errors: ['ports: Too many: 20001: must have at most 20000 items'],
    },
    { name: 'port names are DNS-1123 labels', change: (s) => (s.ports[0].name = 'Http'), errors: [`ports[0].name: Invalid value: "Http": ${DNS1123_LABEL}`] },
    {
      name: 'port names are unique, and "" counts',
      change: (s) => (s.ports = [{ port: 80 }, { name: '', port: 81 }]),
      errors: ['ports[1].name: Duplicate value: ""'],
    },
    {
      name: 'port protocols are supported values',
      change: (s) => (s.ports[0].protocol = 'HTTP'),
      errors: ['ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
    },
    {
      name: 'appProtocol is a qualified name',
      change: (s) => (s.ports[0].appProtocol = 'h2c!'),
      errors: [
        "ports[0].appProtocol: Invalid value: \"h2c!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    },
    {
      name: 'kpc rule: a port number is 1-65535',
      change: (s) => (s.ports[0].port = 0),
      errors: ['ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive'],
    },
    {
      name: 'kpc rule: a port without a number is a warning',
      change: (s) => delete s.ports[0].port,
      errors: [],
      warnings: ['ports[0].port: Required value: kube-proxy ignores an endpoint port without a number'],
    },
  ]);

  it('strict IP validation rejects a leading-zero address', () => {
    const r = decodeWith(endpointSlice, addr('010.0.1.5'), STRICT);
    expect(errorsOf(r)).toEqual(['endpoints[0].addresses[0]: Invalid value: "010.0.1.5": must not have leading 0s']);
  });

  it('legacy IP validation accepts it, saying so', () => {
    const r = decodeWith(endpointSlice, addr('010.0.1.5'));
    expect(r.status).toBe('ok');
    expect(warningsOf(r)).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "010.0.1.5": must not have leading 0s (accepted as 10.0.1.5, as clusters before v1.36 do; iptables would read it as octal)',
    ]);
  });
});

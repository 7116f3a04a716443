import { describe, expect, it } from 'vitest';
import type { Endpoints } from '../../../src/parser/k8s/types.js';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, INVALID_IP, decodeWith, endpoints, errorsOf, ok, warningsOf, type Raw } from './helpers.js';

const DEPRECATED = 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice';

interface Case {
  name: string;
  change: (e: Raw) => void;
  errors: string[];
}

describe('Endpoints: happy path and defaults (validation.md §7.1)', () => {
  it('decodes, defaults the port protocol to TCP, and warns that the API is deprecated', () => {
    const r = decodeWith(endpoints, (e) => {
      delete e.subsets[0].ports[0].protocol;
      e.subsets[0].notReadyAddresses = [{ ip: '10.0.1.6', hostname: 'web-1', nodeName: 'node-a' }];
    });
    expect(warningsOf(r)).toEqual([DEPRECATED]);
    expect(ok<Endpoints>(r).subsets).toEqual([
      {
        addresses: [{ ip: '10.0.1.5' }],
        notReadyAddresses: [{ ip: '10.0.1.6', hostname: 'web-1', nodeName: 'node-a' }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
  });

  it('a subset without ports is valid (headless)', () => {
    expect(decodeWith(endpoints, (e) => delete e.subsets[0].ports).status).toBe('ok');
  });
});

describe('Endpoints: validation (validation.md §7.2)', () => {
  const cases: Case[] = [
    { name: 'name is a DNS subdomain', change: (e) => (e.metadata.name = 'Web'), errors: [`metadata.name: Invalid value: "Web": ${DNS1123_SUBDOMAIN}`] },
    {
      name: 'a subset needs addresses or notReadyAddresses',
      change: (e) => (e.subsets[0].addresses = []),
      errors: ['subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`'],
    },
    {
      name: 'an invalid IP is reported twice, as upstream does',
      change: (e) => (e.subsets[0].addresses[0].ip = '10.0.1'),
      errors: [`subsets[0].addresses[0].ip: Invalid value: "10.0.1": ${INVALID_IP}`, 'subsets[0].addresses[0].ip: Invalid value: "10.0.1": must be a valid IP address'],
    },
    {
      name: 'not-ready addresses are checked too',
      change: (e) => (e.subsets[0].notReadyAddresses = [{ ip: '169.254.1.1' }]),
      errors: ['subsets[0].notReadyAddresses[0].ip: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)'],
    },
    { name: 'hostname is a DNS-1123 label', change: (e) => (e.subsets[0].addresses[0].hostname = 'Web'), errors: [`subsets[0].addresses[0].hostname: Invalid value: "Web": ${DNS1123_LABEL}`] },
    {
      name: 'nodeName is a DNS subdomain',
      change: (e) => (e.subsets[0].addresses[0].nodeName = 'node_a'),
      errors: [`subsets[0].addresses[0].nodeName: Invalid value: "node_a": ${DNS1123_SUBDOMAIN}`],
    },
    {
      name: 'port names are required with several ports',
      change: (e) => e.subsets[0].ports.push({ port: 8443 }),
      errors: ['subsets[0].ports[1].name: Required value'],
    },
    {
      name: 'port names are not checked for uniqueness',
      change: (e) => e.subsets[0].ports.push({ name: 'http', port: 8443 }),
      errors: [],
    },
    { name: 'port names are DNS-1123 labels', change: (e) => (e.subsets[0].ports[0].name = 'http_alt'), errors: [`subsets[0].ports[0].name: Invalid value: "http_alt": ${DNS1123_LABEL}`] },
    { name: 'port numbers are 1-65535', change: (e) => (e.subsets[0].ports[0].port = 0), errors: ['subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive'] },
    {
      name: 'port protocols are supported values',
      change: (e) => (e.subsets[0].ports[0].protocol = 'ICMP'),
      errors: ['subsets[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'],
    },
    {
      name: 'appProtocol is a qualified name',
      change: (e) => (e.subsets[0].ports[0].appProtocol = '/http'),
      errors: ['subsets[0].ports[0].appProtocol: Invalid value: "/http": prefix part must be non-empty'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => expect(errorsOf(decodeWith(endpoints, c.change))).toEqual(c.errors));
  }
});

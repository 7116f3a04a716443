import { describe, expect, it } from 'vitest';
import type { Node } from '../../../src/parser/k8s/types.js';
import { DNS1123_SUBDOMAIN, INVALID_CIDR, INVALID_IP, LABEL_VALUE, QUALIFIED_NAME_PART, decodeWith, errorsOf, node, ok, warningsOf, type Raw } from './helpers.js';

interface Case {
  name: string;
  change: (n: Raw) => void;
  errors: string[];
  warnings?: string[];
}

describe('Node: happy path (validation.md §8)', () => {
  it('decodes what kube-proxy reads', () => {
    const r = decodeWith(node, () => {});
    expect(warningsOf(r)).toEqual([]);
    expect(ok<Node>(r)).toEqual({
      kind: 'Node',
      metadata: { name: 'node-a', namespace: '', labels: { 'topology.kubernetes.io/zone': 'zone-a' }, annotations: {} },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
      status: { addresses: [{ type: 'InternalIP', address: '192.168.1.10' }, { type: 'Hostname', address: 'node-a' }] },
    });
  });

  it('fills podCIDRs from the singular podCIDR, as the v1 conversion does', () => {
    expect(ok<Node>(decodeWith(node, (n) => delete n.spec.podCIDRs)).spec.podCIDRs).toEqual(['10.244.1.0/24']);
  });

  it('accepts a dual-stack pair of pod CIDRs', () => {
    expect(decodeWith(node, (n) => (n.spec.podCIDRs = ['10.244.1.0/24', 'fd00:10:244:1::/64'])).status).toBe('ok');
  });
});

describe('Node: validation', () => {
  const cases: Case[] = [
    { name: 'name is required', change: (n) => delete n.metadata.name, errors: ['metadata.name: Required value: name or generateName is required'] },
    { name: 'name is a DNS subdomain', change: (n) => (n.metadata.name = 'Node-A'), errors: [`metadata.name: Invalid value: "Node-A": ${DNS1123_SUBDOMAIN}`] },
    {
      name: 'a namespace is cleared, as the API server does for cluster-scoped kinds',
      change: (n) => (n.metadata.namespace = 'default'),
      errors: [],
      warnings: ['metadata.namespace: ignored: Node is cluster-scoped, so the API server clears the namespace ("default")'],
    },
    {
      name: 'podCIDR that disagrees with podCIDRs[0] is ignored',
      change: (n) => (n.spec.podCIDR = '10.244.9.0/24'),
      errors: [],
      warnings: ['spec.podCIDR: ignored: does not match spec.podCIDRs[0] ("10.244.1.0/24"), which the API server keeps'],
    },
    { name: 'pod CIDRs are CIDRs', change: (n) => (n.spec.podCIDRs = ['10.244.1.0']), errors: [`spec.podCIDRs[0]: Invalid value: "10.244.1.0": ${INVALID_CIDR}`] },
    {
      name: 'at most one pod CIDR per family',
      change: (n) => (n.spec.podCIDRs = ['10.244.1.0/24', '10.245.1.0/24']),
      errors: ['spec.podCIDRs: Invalid value: ["10.244.1.0/24","10.245.1.0/24"]: may specify no more than one CIDR for each IP family'],
    },
    {
      name: 'no duplicate pod CIDRs',
      change: (n) => (n.spec.podCIDRs = ['10.244.1.0/24', '10.244.1.0/24']),
      errors: [
        'spec.podCIDRs: Invalid value: ["10.244.1.0/24","10.244.1.0/24"]: may specify no more than one CIDR for each IP family',
        'spec.podCIDRs[1]: Duplicate value: "10.244.1.0/24"',
      ],
    },
    {
      name: 'an unparseable pod CIDR in a pair is also an internal error of the dual-stack check',
      change: (n) => (n.spec.podCIDRs = ['10.244.1.0/24', 'bogus']),
      errors: [
        `spec.podCIDRs[1]: Invalid value: "bogus": ${INVALID_CIDR}`,
        'spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR address: bogus',
        'spec.podCIDRs: Invalid value: ["10.244.1.0/24","bogus"]: may specify no more than one CIDR for each IP family',
      ],
    },
    {
      name: 'taints: key, value and effect (reported under metadata.taints, as upstream does)',
      change: (n) => (n.spec.taints = [{ key: 'bad key', value: 'a b', effect: 'Evict' }, { key: 'k' }]),
      errors: [
        `metadata.taints[0].key: Invalid value: "bad key": ${QUALIFIED_NAME_PART}`,
        `metadata.taints[0].value: Invalid value: "a b": ${LABEL_VALUE}`,
        'metadata.taints[0].effect: Unsupported value: "Evict": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        'metadata.taints[1].effect: Required value',
      ],
    },
    {
      name: 'taints are unique by key and effect',
      change: (n) => (n.spec.taints = [{ key: 'k', effect: 'NoSchedule' }, { key: 'k', value: 'v', effect: 'NoSchedule' }]),
      errors: ['metadata.taints[1]: Duplicate value: {"Key":"k","Value":"v","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair'],
    },
    {
      name: 'kpc rule: InternalIP and ExternalIP addresses are IPs',
      change: (n) => (n.status.addresses = [{ type: 'InternalIP', address: 'node-a.local' }]),
      errors: [`status.addresses[0].address: Invalid value: "node-a.local": ${INVALID_IP}`],
    },
    {
      name: 'kpc rule: address types are the five the API knows',
      change: (n) => (n.status.addresses = [{ type: 'PodIP', address: '10.0.0.1' }]),
      errors: ['status.addresses[0].type: Unsupported value: "PodIP": supported values: "ExternalDNS", "ExternalIP", "Hostname", "InternalDNS", "InternalIP"'],
    },
    {
      name: 'status fields kpc does not read are not checked',
      change: (n) => (n.status.someFutureField = { anything: [1, 2] }),
      errors: [],
    },
    { name: 'spec fields are checked strictly', change: (n) => (n.spec.podCidr = 'x'), errors: ['spec.podCidr: unknown field "spec.podCidr" (did you mean "podCIDR"?)'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = decodeWith(node, c.change);
      expect(errorsOf(r)).toEqual(c.errors);
      if (c.warnings) expect(warningsOf(r)).toEqual(c.warnings);
    });
  }
});

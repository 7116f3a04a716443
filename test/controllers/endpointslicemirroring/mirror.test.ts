import { describe, expect, it } from 'vitest';
import { decodeObject } from '../../../src/parser/k8s/decode.js';
import { mirrorEndpoints } from '../../../src/controllers/endpointslicemirroring/index.js';
import type { Endpoints, Service } from '../../../src/parser/k8s/types.js';
import { endpoints, LEGACY, ok, render, service, type Raw } from '../../parser/k8s/helpers.js';

function ep(change: (e: Raw) => void = () => {}): Endpoints {
  const e = endpoints();
  change(e);
  return ok<Endpoints>(decodeObject(e, LEGACY));
}

const R = { release: '1.37' } as const;

function selectorless(change: (s: Raw) => void = () => {}): Service {
  const s = service();
  delete s.spec.selector;
  change(s);
  return ok<Service>(decodeObject(s, LEGACY));
}

describe('mirrorEndpoints: when the controller mirrors', () => {
  it('mirrors for a selectorless Service', () => {
    const r = mirrorEndpoints(ep(), selectorless(), R);
    expect(r.skipped).toBeUndefined();
    expect(r.warnings).toEqual([]);
    expect(r.slices).toHaveLength(1);
  });

  it('an empty selector counts as none (it does not survive storage)', () => {
    expect(mirrorEndpoints(ep(), selectorless((s) => (s.spec.selector = {})), R).slices).toHaveLength(1);
  });

  it.each([
    ['the Service has a selector', ep(), ok<Service>(decodeObject(service(), LEGACY)), 'Service default/web has a selector: its EndpointSlices come from the EndpointSlice controller, not from Endpoints'],
    ['there is no Service', ep(), undefined, 'no Service default/web: Endpoints are mirrored only for an existing Service'],
    [
      'the skip-mirror label is "true"',
      ep((e) => (e.metadata.labels = { 'endpointslice.kubernetes.io/skip-mirror': 'true' })),
      selectorless(),
      'Endpoints default/web has the endpointslice.kubernetes.io/skip-mirror: "true" label',
    ],
    [
      'it is a leader-election lock',
      ep((e) => (e.metadata.annotations = { 'control-plane.alpha.kubernetes.io/leader': '{}' })),
      selectorless(),
      'Endpoints default/web is a leader-election lock (control-plane.alpha.kubernetes.io/leader)',
    ],
  ])('skips when %s', (_why, endpointsObject, svc, reason) => {
    expect(mirrorEndpoints(endpointsObject, svc, R)).toEqual({ slices: [], warnings: [], skipped: reason });
  });

  it('a skip-mirror label other than "true" does not skip', () => {
    expect(mirrorEndpoints(ep((e) => (e.metadata.labels = { 'endpointslice.kubernetes.io/skip-mirror': 'false' })), selectorless(), R).slices).toHaveLength(1);
  });
});

describe('mirrorEndpoints: the slices it makes', () => {
  it('converts addresses, ports, labels and annotations like the controller', () => {
    const r = mirrorEndpoints(
      ep((e) => {
        e.metadata.labels = { team: 'a', 'kubernetes.io/service-name': 'other' };
        e.metadata.annotations = {
          note: 'x',
          'endpoints.kubernetes.io/last-change-trigger-time': '2025-05-01T10:00:00Z',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
        };
        e.subsets = [
          {
            addresses: [{ ip: '10.0.1.5', nodeName: 'node-a', hostname: 'web-0' }],
            notReadyAddresses: [{ ip: '10.0.1.6' }],
            ports: [{ name: 'https', port: 8443 }, { name: 'http', port: 8080, appProtocol: 'http' }],
          },
        ];
      }),
      selectorless(),
      R,
    );
    expect(r.slices).toHaveLength(1);
    const slice = r.slices[0]!;
    expect(slice.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(slice.metadata.namespace).toBe('default');
    expect(slice.metadata.labels).toEqual({
      team: 'a',
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
    });
    expect(slice.metadata.annotations).toEqual({ note: 'x' });
    expect(slice.addressType).toBe('IPv4');
    expect(slice.endpoints).toEqual([
      { addresses: ['10.0.1.5'], conditions: { ready: true }, hostname: 'web-0', nodeName: 'node-a' },
      { addresses: ['10.0.1.6'], conditions: { ready: false } },
    ]);
    expect(slice.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' },
      { name: 'https', protocol: 'TCP', port: 8443 },
    ]);
  });

  // The controller's order, from its own code: k8s.io/endpointslice/util NewPortMapKey (v0.34.4
  // and v0.37.2, the oracle's modules) run on the ports as epPortsToEpsPorts converts them
  // (pkg/controller/endpointslicemirroring initPorts); not name order.
  it.each([
    ['1.34', ['d/SCTP/4', 'b/TCP/2', 'e/TCP/5', 'a/TCP/1', 'c/UDP/3']],
    ['1.35', ['e/TCP/5', 'c/UDP/3', 'b/TCP/2', 'd/SCTP/4', 'a/TCP/1']],
    ['1.37', ['e/TCP/5', 'c/UDP/3', 'b/TCP/2', 'd/SCTP/4', 'a/TCP/1']],
  ] as const)('v%s: ports in the order NewPortMapKey sorts them (by the hash of each)', (release, order) => {
    const r = mirrorEndpoints(
      ep((e) => {
        e.subsets[0].ports = [
          { name: 'a', port: 1, protocol: 'TCP' },
          { name: 'b', port: 2, protocol: 'TCP' },
          { name: 'c', port: 3, protocol: 'UDP' },
          { name: 'd', port: 4, protocol: 'SCTP' },
          { name: 'e', port: 5, protocol: 'TCP', appProtocol: 'h2c' },
        ];
      }),
      selectorless(),
      { release },
    );
    expect(r.slices[0]!.ports.map((p) => `${p.name}/${p.protocol}/${p.port}`)).toEqual(order);
  });

  it('one slice per address family, addresses re-printed canonically', () => {
    const r = mirrorEndpoints(ep((e) => (e.subsets[0].addresses = [{ ip: '010.0.1.5' }, { ip: 'FD00::5' }, { ip: '::ffff:10.0.1.7' }])), selectorless(), R);
    expect(r.slices.map((s) => [s.addressType, s.endpoints.map((e) => e.addresses[0])])).toEqual([
      ['IPv4', ['10.0.1.5', '10.0.1.7']],
      ['IPv6', ['fd00::5']],
    ]);
  });

  it('subsets with the same ports share a slice; different ports get their own', () => {
    const r = mirrorEndpoints(
      ep((e) => {
        e.subsets = [
          { addresses: [{ ip: '10.0.1.5' }], ports: [{ name: 'http', port: 8080 }] },
          { addresses: [{ ip: '10.0.1.6' }], ports: [{ name: 'http', port: 8080 }] },
          { addresses: [{ ip: '10.0.1.7' }], ports: [{ name: 'http', port: 9090 }] },
        ];
      }),
      selectorless(),
      R,
    );
    expect(r.slices.map((s) => [s.ports[0]!.port, s.endpoints.length])).toEqual([
      [8080, 2],
      [9090, 1],
    ]);
    expect(new Set(r.slices.map((s) => s.metadata.name)).size).toBe(2);
  });

  it('an address both ready and not ready ends up not ready (the later insert wins)', () => {
    const r = mirrorEndpoints(ep((e) => (e.subsets[0].notReadyAddresses = [{ ip: '10.0.1.5' }])), selectorless(), R);
    expect(r.slices[0]!.endpoints).toEqual([{ addresses: ['10.0.1.5'], conditions: { ready: false } }]);
  });

  it('mirrors at most 1000 addresses per subset, with the TooManyAddressesToMirror text', () => {
    const addresses = Array.from({ length: 1003 }, (_, i) => ({ ip: `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}` }));
    const r = mirrorEndpoints(ep((e) => (e.subsets[0].addresses = addresses)), selectorless(), R);
    expect(r.slices[0]!.endpoints).toHaveLength(1000);
    expect(render(r.warnings)).toEqual(['subsets: A max of 1000 addresses can be mirrored to EndpointSlices per Endpoints subset. 3 addresses were skipped']);
  });

  it('the limit can be set like --mirroring-max-endpoints-per-subset', () => {
    const r = mirrorEndpoints(ep((e) => (e.subsets[0].addresses = [{ ip: '10.0.1.5' }, { ip: '10.0.1.6' }])), selectorless(), { ...R, maxEndpointsPerSubset: 1 });
    expect(r.slices[0]!.endpoints).toHaveLength(1);
    expect(render(r.warnings)).toEqual(['subsets: A max of 1 addresses can be mirrored to EndpointSlices per Endpoints subset. 1 addresses were skipped']);
  });

  it('is deterministic', () => {
    expect(mirrorEndpoints(ep(), selectorless(), R)).toEqual(mirrorEndpoints(ep(), selectorless(), R));
  });

  it('uses the name without a dash when "<name>-" would be too long', () => {
    const long = 'a'.repeat(253);
    const r = mirrorEndpoints(
      ep((e) => (e.metadata.name = long)),
      selectorless((s) => (s.metadata.name = 'a')),
      R,
    );
    // The Service lookup is the caller's; here only the naming matters.
    expect(r.slices[0]?.metadata.name ?? '').toMatch(/^a{58}[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});

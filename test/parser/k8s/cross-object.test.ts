import { describe, expect, it } from 'vitest';
import { formatFieldPath } from '../../../src/diagnostics.js';
import { checkAcrossObjects } from '../../../src/parser/k8s/cross-object.js';
import { decodeObject } from '../../../src/parser/k8s/decode.js';
import type { KubeObject } from '../../../src/parser/k8s/types.js';
import { endpointSlice, LEGACY, ok, service, type Raw } from './helpers.js';

function decoded(...raws: Raw[]): Array<{ object: KubeObject }> {
  return raws.map((r) => ({ object: ok<KubeObject>(decodeObject(r, LEGACY)) }));
}

function check(objects: Array<{ object: KubeObject }>): string[] {
  return checkAcrossObjects(objects).map(({ index, error }) => `${index} ${error.severity} ${formatFieldPath(error.path)}: ${error.message}`);
}

function svc(name: string, clusterIP: string, change: (s: Raw) => void = () => {}): Raw {
  const s = service();
  s.metadata.name = name;
  s.spec.clusterIP = clusterIP;
  change(s);
  return s;
}

const nodePort = (...ports: Array<[number, number, string?]>) => (s: Raw) => {
  s.spec.type = 'NodePort';
  s.spec.ports = ports.map(([port, np, protocol], i) => ({ name: `p${i}`, port, nodePort: np, protocol: protocol ?? 'TCP' }));
};

describe('checkAcrossObjects', () => {
  it('accepts a consistent set', () => {
    expect(check(decoded(svc('web', '10.96.0.10', nodePort([80, 30080])), svc('api', '10.96.0.11', nodePort([80, 30081])), endpointSlice()))).toEqual([]);
  });

  it('reports the second of two objects with the same kind, namespace and name', () => {
    expect(check(decoded(svc('web', '10.96.0.10'), svc('web', '10.96.0.11')))).toEqual(['1 error metadata.name: Duplicate value: "web"']);
  });

  it('same name in another namespace or of another kind is fine', () => {
    const other = svc('web', '10.96.0.11');
    other.metadata.namespace = 'prod';
    expect(check(decoded(svc('web', '10.96.0.10'), other))).toEqual([]);
  });

  it('a node port used by two Services', () => {
    expect(check(decoded(svc('web', '10.96.0.10', nodePort([80, 30080])), svc('api', '10.96.0.11', nodePort([81, 30080]))))).toEqual([
      '1 error spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
    ]);
  });

  it('the allocator holds port numbers, not (protocol, port): TCP and UDP conflict across Services', () => {
    expect(check(decoded(svc('web', '10.96.0.10', nodePort([53, 30053, 'TCP'])), svc('dns', '10.96.0.11', nodePort([53, 30053, 'UDP']))))).toEqual([
      '1 error spec.ports[0].nodePort: Invalid value: 30053: provided port is already allocated',
    ]);
  });

  it('one Service may use a node port for TCP and UDP of the same port', () => {
    expect(check(decoded(svc('dns', '10.96.0.10', nodePort([53, 30053, 'TCP'], [53, 30053, 'UDP']))))).toEqual([]);
  });

  it('a health-check node port taken by another Service', () => {
    const lbLocal = (s: Raw) => {
      s.spec.type = 'LoadBalancer';
      s.spec.externalTrafficPolicy = 'Local';
      s.spec.ports[0].nodePort = 30081;
      s.spec.healthCheckNodePort = 30080;
    };
    expect(check(decoded(svc('web', '10.96.0.10', nodePort([80, 30080])), svc('api', '10.96.0.11', lbLocal)))).toEqual([
      '1 error spec.healthCheckNodePort: Internal error: failed to allocate requested HealthCheck NodePort 30080: provided port is already allocated',
    ]);
  });

  it('a cluster IP used by two Services (compared as parsed addresses)', () => {
    expect(check(decoded(svc('web', '10.96.0.10'), svc('api', '010.096.000.010')))).toEqual([
      '1 error spec.clusterIPs: Invalid value: ["010.096.000.010"]: failed to allocate IP 010.096.000.010: provided IP is already allocated',
    ]);
  });

  it('headless Services share "None" without conflict', () => {
    expect(check(decoded(svc('a', 'None'), svc('b', 'None')))).toEqual([]);
  });

  it('a slice without the service-name label is ignored by kube-proxy', () => {
    const s = endpointSlice();
    s.metadata.labels = {};
    expect(check(decoded(s))).toEqual([
      '0 warning metadata.labels[kubernetes.io/service-name]: Required value: no kubernetes.io/service-name label set on endpoint slice; kube-proxy ignores this slice',
    ]);
  });

  it('a slice whose Service is not in the input', () => {
    expect(check(decoded(endpointSlice()))).toEqual([
      '0 warning metadata.labels[kubernetes.io/service-name]: Not found: "web": no Service default/web in the input; kube-proxy programs nothing for this slice',
    ]);
  });

  it('a slice of a family the Service does not have', () => {
    const s = endpointSlice();
    s.addressType = 'IPv6';
    s.endpoints[0].addresses = ['fd00::5'];
    expect(check(decoded(svc('web', '10.96.0.10'), s))).toEqual([
      '1 warning addressType: Invalid value: "IPv6": the Service has ipFamilies ["IPv4"]; kube-proxy ignores these endpoints',
    ]);
  });
});

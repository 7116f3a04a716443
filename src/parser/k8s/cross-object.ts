/**
 * Checks that need every decoded object at once: what the API server enforces through its
 * allocators and controllers rather than through validation of one object.
 *
 * - the same kind/namespace/name twice (the second create would fail with AlreadyExists);
 * - a node port, or a health-check node port, used by two Services: the port allocator is one
 *   cluster-wide bitmap of port numbers, so TCP 30080 in one Service and UDP 30080 in another
 *   conflict too (`provided port is already allocated`);
 * - a cluster IP used by two Services (`provided IP is already allocated`);
 * - EndpointSlices kube-proxy will ignore: no kubernetes.io/service-name label, no such
 *   Service, or an address family the Service does not have (warnings).
 *
 * The first object in input order keeps its port or IP, as the first create would.
 */

import type { FieldError, FieldPath } from '../../diagnostics.js';
import { fieldWarning } from '../../diagnostics.js';
import { canonicalIP } from '../../net/ip.js';
import { duplicate, internalError, invalid, notFound, required } from './field-errors.js';
import { asJSON } from './go-format.js';
import { SERVICE_NAME_LABEL } from './model/endpoint-slice.js';
import type { KubeObject, Service } from './types.js';
import { ALREADY_ALLOCATED } from './validate/service-allocation.js';

export interface CrossObjectError {
  index: number;
  error: FieldError;
}

function objectKey(o: KubeObject): string {
  return `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
}

/** The node ports a Service holds in the allocator: distinct numbers, first port index each. */
function heldNodePorts(svc: Service): Array<{ port: number; path: FieldPath }> {
  if (svc.spec.type !== 'NodePort' && svc.spec.type !== 'LoadBalancer') return [];
  const seen = new Set<number>();
  const out: Array<{ port: number; path: FieldPath }> = [];
  svc.spec.ports.forEach((p, i) => {
    if (p.nodePort === 0 || seen.has(p.nodePort)) return;
    seen.add(p.nodePort);
    out.push({ port: p.nodePort, path: ['spec', 'ports', i, 'nodePort'] });
  });
  return out;
}

function checkDuplicates(objects: ReadonlyArray<{ object: KubeObject }>, out: CrossObjectError[]): Set<number> {
  const seen = new Set<string>();
  const dups = new Set<number>();
  objects.forEach(({ object }, index) => {
    const key = objectKey(object);
    if (seen.has(key)) {
      dups.add(index);
      out.push({ index, error: duplicate(['metadata', 'name'], object.metadata.name) });
    }
    seen.add(key);
  });
  return dups;
}

function checkServiceAllocations(objects: ReadonlyArray<{ object: KubeObject }>, skip: Set<number>, out: CrossObjectError[]): void {
  const nodePorts = new Set<number>();
  const clusterIPs = new Set<string>();
  objects.forEach(({ object }, index) => {
    if (object.kind !== 'Service' || skip.has(index)) return;
    const svc = object;
    if (svc.spec.type !== 'ExternalName') {
      for (const ip of svc.spec.clusterIPs) {
        const key = canonicalIP(ip);
        if (key === undefined) continue; // "None"
        if (clusterIPs.has(key)) {
          out.push({ index, error: invalid(['spec', 'clusterIPs'], asJSON(svc.spec.clusterIPs), `failed to allocate IP ${ip}: provided IP is already allocated`) });
        }
        clusterIPs.add(key);
      }
    }
    for (const { port, path } of heldNodePorts(svc)) {
      if (nodePorts.has(port)) out.push({ index, error: invalid(path, port, ALREADY_ALLOCATED) });
      nodePorts.add(port);
    }
    const hc = svc.spec.healthCheckNodePort;
    if (svc.spec.type === 'LoadBalancer' && svc.spec.externalTrafficPolicy === 'Local' && hc !== 0) {
      // Its own node ports were checked against it when the Service was decoded.
      if (nodePorts.has(hc) && !heldNodePorts(svc).some((p) => p.port === hc)) {
        out.push({ index, error: internalError(['spec', 'healthCheckNodePort'], `failed to allocate requested HealthCheck NodePort ${hc}: ${ALREADY_ALLOCATED}`) });
      }
      nodePorts.add(hc);
    }
  });
}

const SERVICE_NAME_LABEL_PATH: FieldPath = ['metadata', 'labels', { key: SERVICE_NAME_LABEL }];

function checkSliceOwners(objects: ReadonlyArray<{ object: KubeObject }>, out: CrossObjectError[]): void {
  const services = new Map<string, Service>();
  for (const { object } of objects) if (object.kind === 'Service') services.set(`${object.metadata.namespace}/${object.metadata.name}`, object);
  objects.forEach(({ object }, index) => {
    if (object.kind !== 'EndpointSlice') return;
    const labelPath = SERVICE_NAME_LABEL_PATH;
    const serviceName = object.metadata.labels[SERVICE_NAME_LABEL];
    if (serviceName === undefined || serviceName === '') {
      const e = required(labelPath, `no ${SERVICE_NAME_LABEL} label set on endpoint slice; kube-proxy ignores this slice`);
      out.push({ index, error: { ...fieldWarning(e.path, e.message), group: 'EndpointSlice without a service-name label' } });
      return;
    }
    const svc = services.get(`${object.metadata.namespace}/${serviceName}`);
    if (svc === undefined) {
      const e = notFound(labelPath, serviceName, `no Service ${object.metadata.namespace}/${serviceName} in the input; kube-proxy programs nothing for this slice`);
      out.push({ index, error: { ...fieldWarning(e.path, e.message), group: 'EndpointSlice whose Service is not in the input' } });
      return;
    }
    const families = svc.spec.ipFamilies as string[];
    if (object.addressType !== 'FQDN' && families.length > 0 && !families.includes(object.addressType)) {
      const e = invalid(['addressType'], asJSON(object.addressType), `the Service has ipFamilies ${JSON.stringify(families)}; kube-proxy ignores these endpoints`);
      out.push({ index, error: { ...fieldWarning(e.path, e.message), group: 'EndpointSlice of a family its Service does not have' } });
    }
  });
}

export function checkAcrossObjects(objects: ReadonlyArray<{ object: KubeObject }>): CrossObjectError[] {
  const out: CrossObjectError[] = [];
  const dups = checkDuplicates(objects, out);
  checkServiceAllocations(objects, dups, out);
  checkSliceOwners(objects, out);
  return out;
}

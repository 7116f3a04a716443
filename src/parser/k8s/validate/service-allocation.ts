/**
 * What the registry would allocate for a new Service, checked offline (allocateCreate in
 * pkg/registry/core/service/storage/alloc.go). kpc cannot allocate: it needs the values a
 * cluster assigned, so it requires the cluster IP, checks requested node ports against the
 * node-port range and against each other as the port allocator would, and warns about node
 * ports and health-check ports that were never allocated (kube-proxy programs nothing for them).
 *
 * Conflicts between Services are in cross-object.ts: one Service is checked here.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { asWarning, internalError, invalid, required } from '../field-errors.js';
import { isHeadless, needsHealthCheck, type CoreService } from '../model/service.js';
import { asJSON } from '../go-format.js';
import { isUnspecified } from '../../../net/ip.js';
import { parsedIP } from './ips.js';

export interface NodePortRange {
  min: number;
  max: number;
}

export const ALREADY_ALLOCATED = 'provided port is already allocated';

/** portallocator.ErrNotInRange text; the range prints as PortRange.String() (`30000-32767`). */
export function notInRange(range: NodePortRange): string {
  return `provided port is not in the valid range. The range of valid ports is ${range.min}-${range.max}`;
}

const NOT_ALLOCATED = 'use a manifest read back from the cluster';

/** Offline tool rule: a Service that needs a cluster IP must carry the one the cluster assigned. */
export function requireClusterIP(svc: CoreService): FieldError[] {
  if (svc.spec.type === 'ExternalName') return [];
  if (svc.spec.clusterIP !== '' || svc.spec.clusterIPs.length !== 0) return [];
  return [required(['spec', 'clusterIP'], `not allocated; kpc needs the cluster IP a cluster assigned (${NOT_ALLOCATED})`)];
}

/** ipallocator.ErrMismatchedNetwork: no ServiceCIDR of the cluster holds the address. */
const MISMATCHED_NETWORK = 'the provided network does not match the current range';

/**
 * allocClusterIPs for the one address no cluster can have allocated: the unspecified address
 * (0.0.0.0, ::) is the network address of any range that contains it, and the allocator never
 * hands out a range's network address. Other addresses need the cluster's ServiceCIDRs to judge.
 * Called only when the cluster IP fields are valid, so every address parses.
 */
export function allocateClusterIPs(svc: CoreService): FieldError[] {
  if (svc.spec.type === 'ExternalName' || isHeadless(svc)) return [];
  for (const ip of svc.spec.clusterIPs) {
    const parsed = parsedIP(ip);
    if (parsed && isUnspecified(parsed)) {
      return [invalid(['spec', 'clusterIPs'], asJSON(svc.spec.clusterIPs), `failed to allocate IP ${ip}: ${MISMATCHED_NETWORK}`)];
    }
  }
  return [];
}

/** A port allocator for one Service: the cluster-wide bitmap, seen by one request. */
class PortAllocation {
  private readonly used = new Set<number>();
  constructor(private readonly range: NodePortRange) {}

  /** portallocator.Allocate: the range check first, then the bitmap. */
  allocate(port: number): string | undefined {
    if (port < this.range.min || port > this.range.max) return notInRange(this.range);
    if (this.used.has(port)) return ALREADY_ALLOCATED;
    this.used.add(port);
    return undefined;
  }
}

/** findRequestedNodePort: the first nodePort requested by any port with this port number. */
function findRequestedNodePort(port: number, svc: CoreService): number {
  return svc.spec.ports.find((sp) => sp.port === port && sp.nodePort !== 0)?.nodePort ?? 0;
}

/**
 * initNodePorts and allocHealthCheckNodePort for a create. Ports sharing a port number (TCP and
 * UDP 53) share one node port, and a port without one gets its sibling's, as upstream does;
 * this mutates spec.ports accordingly.
 */
export function allocateNodePorts(svc: CoreService, range: NodePortRange): FieldError[] {
  const spec = svc.spec;
  const errs: FieldError[] = [];
  const alloc = new PortAllocation(range);
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    const shouldAllocate = spec.type === 'NodePort' || spec.allocateLoadBalancerNodePorts !== false;
    const byPort = new Map<number, number>();
    // Port numbers whose node port the cluster would have picked: warned about once.
    const unallocated = new Set<number>();
    spec.ports.forEach((sp, i) => {
      const path: FieldPath = ['spec', 'ports', i, 'nodePort'];
      // Without allocation (allocateLoadBalancerNodePorts: false) only explicit requests count.
      if (sp.nodePort === 0 && !shouldAllocate) return;
      const allocated = byPort.get(sp.port) ?? 0;
      if (allocated === 0 && unallocated.has(sp.port)) return;
      if (allocated === 0) {
        const np = findRequestedNodePort(sp.port, svc);
        if (np !== 0) {
          const err = alloc.allocate(np);
          if (err !== undefined) errs.push(invalid(path, np, err));
          sp.nodePort = np;
          byPort.set(sp.port, np);
        } else {
          unallocated.add(sp.port);
          errs.push(asWarning(required(path, `not allocated; kube-proxy programs no node port for this port (${NOT_ALLOCATED})`)));
        }
      } else if (sp.nodePort !== allocated) {
        if (sp.nodePort === 0) sp.nodePort = allocated;
        else {
          const err = alloc.allocate(sp.nodePort);
          if (err !== undefined) errs.push(invalid(path, sp.nodePort, err));
        }
      }
    });
  }
  if (needsHealthCheck(svc)) {
    const hc = spec.healthCheckNodePort;
    if (hc === 0) {
      errs.push(asWarning(required(['spec', 'healthCheckNodePort'], `not allocated; kube-proxy serves no health check node port for this service (${NOT_ALLOCATED})`)));
    } else {
      // Upstream wraps this in an InternalError with no field path.
      const err = alloc.allocate(hc);
      if (err !== undefined) errs.push(internalError(['spec', 'healthCheckNodePort'], `failed to allocate requested HealthCheck NodePort ${hc}: ${err}`));
    }
  }
  return errs;
}

/**
 * Legacy Endpoints to EndpointSlices, as the EndpointSlice mirroring controller converts them
 * (pkg/controller/endpointslicemirroring: reconciler.go, reconciler_helpers.go, utils.go).
 *
 * The controller mirrors an Endpoints object only when its Service exists and has no selector,
 * the Endpoints has no `endpointslice.kubernetes.io/skip-mirror: "true"` label and is not a
 * leader-election lock. It makes one slice per address family and distinct set of ports; each
 * address becomes one endpoint whose only condition is `ready` (true for `addresses`, false for
 * `notReadyAddresses`; serving and terminating stay unset). At most 1000 addresses are mirrored
 * per subset (maxEndpointsPerSubset), with a TooManyAddressesToMirror event.
 *
 * Where the controller is random, kpc is deterministic: a mirrored slice is named like the
 * controller's generateName result, with a suffix derived from its content instead of a random
 * one. Ports are in the controller's order: initPorts passes them to newAddrTypePortMapKey,
 * whose NewPortMapKey sorts them in place by the hash of each (portsInOrder; MD5 in v1.34,
 * FNV-128a from v1.35), and the slices are written with them so.
 */

import type { FieldError } from '../../diagnostics.js';
import { fieldWarning } from '../../diagnostics.js';
import { formatIP, parseIP } from '../../net/ip.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../parser/k8s/model/endpoint-slice.js';
import type { Endpoint, EndpointAddress, EndpointPort, EndpointSlice, Endpoints, Service } from '../../parser/k8s/types.js';
import { portsInOrder } from '../endpointslice/hash.js';
import { endpointSlicePrefix, generatedName } from '../endpointslice/names.js';
import { RELEASES, type ControllerVersion } from '../endpointslice/releases.js';

export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
export const LEADER_ELECTION_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** The controller's --mirroring-max-endpoints-per-subset default. */
export const MAX_ENDPOINTS_PER_SUBSET = 1000;

/** Annotations the controller does not copy to the slices. */
const NOT_COPIED_ANNOTATIONS = new Set(['endpoints.kubernetes.io/last-change-trigger-time', 'kubectl.kubernetes.io/last-applied-configuration']);

export interface MirrorResult {
  slices: EndpointSlice[];
  /** Addresses the controller drops (with an event), as warnings on the Endpoints object. */
  warnings: FieldError[];
  /** Set when the controller would not mirror this object at all, saying why. */
  skipped?: string;
}

export interface MirrorOptions {
  /** The controller's release (kube-controller-manager's, taken to be --kube-proxy-version's): its port hash. */
  release: ControllerVersion;
  maxEndpointsPerSubset?: number;
}

/** Why the controller leaves these Endpoints alone, or undefined when it mirrors them. */
function skipReason(ep: Endpoints, service: Service | undefined): string | undefined {
  const id = `${ep.metadata.namespace}/${ep.metadata.name}`;
  if (ep.metadata.labels[SKIP_MIRROR_LABEL] === 'true') return `Endpoints ${id} has the ${SKIP_MIRROR_LABEL}: "true" label`;
  if (LEADER_ELECTION_ANNOTATION in ep.metadata.annotations) return `Endpoints ${id} is a leader-election lock (${LEADER_ELECTION_ANNOTATION})`;
  if (service === undefined) return `no Service ${id}: Endpoints are mirrored only for an existing Service`;
  // An empty selector does not survive the API server's storage round trip, so it counts as none.
  if (Object.keys(service.spec.selector ?? {}).length > 0) {
    return `Service ${id} has a selector: its EndpointSlices come from the EndpointSlice controller, not from Endpoints`;
  }
  return undefined;
}

/** epPortsToEpsPorts, then NewPortMapKey's sort. */
function sortedPorts(ports: Endpoints['subsets'][number]['ports'], release: ControllerVersion): EndpointPort[] {
  const converted = ports.map((p): EndpointPort => ({ name: p.name, protocol: p.protocol, port: p.port, ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}) }));
  return portsInOrder(converted, RELEASES[release].hash).map((k) => k.port);
}

interface Group {
  addressType: 'IPv4' | 'IPv6';
  ports: EndpointPort[];
  /** EndpointSet: keyed by address/hostname/nodeName; a later insert replaces an earlier one. */
  endpoints: Map<string, Endpoint>;
}

function toEndpoint(a: EndpointAddress, ready: boolean): { endpoint: Endpoint; addressType: 'IPv4' | 'IPv6' } | undefined {
  const p = parseIP(a.ip);
  if (!p) return undefined;
  return {
    // "We parse and restringify the Endpoints IP in case it is in an irregular format."
    endpoint: {
      addresses: [formatIP(p.ip)],
      conditions: { ready },
      ...(a.hostname !== undefined && a.hostname !== '' ? { hostname: a.hostname } : {}),
      ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}),
    },
    addressType: p.ip.family,
  };
}

export function mirrorEndpoints(ep: Endpoints, service: Service | undefined, opts: MirrorOptions): MirrorResult {
  const skipped = skipReason(ep, service);
  if (skipped !== undefined) return { slices: [], warnings: [], skipped };
  const max = opts.maxEndpointsPerSubset ?? MAX_ENDPOINTS_PER_SUBSET;

  const groups = new Map<string, Group>();
  let invalidCount = 0;
  let skippedCount = 0;
  for (const subset of ep.subsets) {
    const ports = sortedPorts(subset.ports, opts.release);
    const portsKey = JSON.stringify(ports);
    let added = 0;
    const total = subset.addresses.length + subset.notReadyAddresses.length;
    const candidates: Array<[EndpointAddress, boolean]> = [
      ...subset.addresses.map((a): [EndpointAddress, boolean] => [a, true]),
      ...subset.notReadyAddresses.map((a): [EndpointAddress, boolean] => [a, false]),
    ];
    for (const [address, ready] of candidates) {
      if (added >= max) break;
      const converted = toEndpoint(address, ready);
      if (!converted) {
        invalidCount++;
        continue;
      }
      const key = `${converted.addressType} ${portsKey}`;
      let group = groups.get(key);
      if (!group) {
        group = { addressType: converted.addressType, ports, endpoints: new Map() };
        groups.set(key, group);
      }
      const e = converted.endpoint;
      const id = `${e.addresses[0]} ${e.hostname ?? ''} ${e.nodeName ?? ''}`;
      group.endpoints.delete(id);
      group.endpoints.set(id, e);
      added++;
    }
    skippedCount += total - added;
  }

  const warnings: FieldError[] = [];
  if (invalidCount > 0) {
    warnings.push(fieldWarning(['subsets'], `Skipped ${invalidCount} invalid IP addresses when mirroring to EndpointSlices`));
  }
  if (skippedCount > invalidCount) {
    warnings.push(fieldWarning(['subsets'], `A max of ${max} addresses can be mirrored to EndpointSlices per Endpoints subset. ${skippedCount} addresses were skipped`));
  }

  const slices: EndpointSlice[] = [];
  for (const [key, group] of groups) {
    const endpoints = [...group.endpoints.values()];
    if (endpoints.length > max) {
      // Several subsets with the same ports share one slice, which the controller fills up to
      // the limit and silently stops.
      warnings.push(fieldWarning(['subsets'], `${endpoints.length - max} ${group.addressType} addresses sharing one set of ports were not mirrored: a mirrored EndpointSlice holds at most ${max} endpoints`));
    }
    const labels: Record<string, string> = { ...ep.metadata.labels, [SERVICE_NAME_LABEL]: ep.metadata.name, [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME };
    const annotations: Record<string, string> = {};
    for (const [k, v] of Object.entries(ep.metadata.annotations)) if (!NOT_COPIED_ANNOTATIONS.has(k)) annotations[k] = v;
    slices.push({
      kind: 'EndpointSlice',
      metadata: {
        // getEndpointSlicePrefix (mirroring's is the EndpointSlice controller's) and generateName.
        name: generatedName(endpointSlicePrefix(ep.metadata.name), `${ep.metadata.namespace}/${ep.metadata.name} ${key}`),
        namespace: ep.metadata.namespace,
        labels,
        annotations,
      },
      addressType: group.addressType,
      endpoints: endpoints.slice(0, max),
      ports: group.ports.map((p) => ({ ...p })),
    });
  }
  return { slices, warnings };
}

/** discovery.k8s.io/v1 EndpointSlice on the wire, and its conversion to the internal form. */

import { z } from 'zod';
import type { CoreEndpoint, CoreEndpointPort, CoreEndpointSlice } from '../model/endpoint-slice.js';
import { objectMetaSchema, toCoreObjectMeta } from './meta.js';
import { bool, int32, list, str, stringList, stringMap, struct } from './primitives.js';

/** corev1.ObjectReference, used by targetRef. */
export const objectReferenceSchema = struct({
  kind: str(),
  namespace: str(),
  name: str(),
  uid: str(),
  apiVersion: str(),
  resourceVersion: str(),
  fieldPath: str(),
});

const endpoint = z.strictObject({
  addresses: stringList(),
  conditions: struct({ ready: bool(), serving: bool(), terminating: bool() }),
  hostname: str(),
  targetRef: objectReferenceSchema,
  // Accepted for compatibility; the v1 strategy drops it on write.
  deprecatedTopology: stringMap(),
  nodeName: str(),
  zone: str(),
  hints: struct({
    forZones: list(z.strictObject({ name: str() })),
    forNodes: list(z.strictObject({ name: str() })),
  }),
});

const endpointPort = z.strictObject({ name: str(), protocol: str(), port: int32(), appProtocol: str() });

export const endpointSliceSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  addressType: str(),
  endpoints: list(endpoint),
  ports: list(endpointPort),
});

export type WireEndpointSlice = z.infer<typeof endpointSliceSchema>;

type WireEndpoint = NonNullable<WireEndpointSlice['endpoints']>[number];
type WireEndpointPort = NonNullable<WireEndpointSlice['ports']>[number];

// The conversions below set optional fields one by one, in declaration order, instead of
// spreading `{ key: v }` pieces: an EndpointSlice has one endpoint per Pod, so this runs a few
// hundred thousand times on a large cluster, and the spreads were its main cost.

function toCoreConditions(c: WireEndpoint['conditions']): CoreEndpoint['conditions'] {
  // Usually all three are set, and then the decoded value (which holds no other key) is Go's
  // value as it is: taken, not copied, like the address list below.
  if (c?.ready != null && c.serving != null && c.terminating != null) return c as CoreEndpoint['conditions'];
  const conditions: CoreEndpoint['conditions'] = {};
  if (c?.ready != null) conditions.ready = c.ready;
  if (c?.serving != null) conditions.serving = c.serving;
  if (c?.terminating != null) conditions.terminating = c.terminating;
  return conditions;
}

function toCoreEndpoint(e: WireEndpoint): CoreEndpoint {
  const conditions = toCoreConditions(e.conditions);
  // The address list is taken as it is, not copied: it holds only strings, and nothing after
  // decoding changes it (the defaults touch ports only).
  const out: CoreEndpoint = { addresses: e.addresses ?? [], conditions };
  if (e.hostname != null) out.hostname = e.hostname;
  if (e.nodeName != null) out.nodeName = e.nodeName;
  if (e.zone != null) out.zone = e.zone;
  if (e.hints != null) {
    out.hints = {
      forZones: (e.hints.forZones ?? []).map((z) => ({ name: z.name ?? '' })),
      forNodes: (e.hints.forNodes ?? []).map((n) => ({ name: n.name ?? '' })),
    };
  }
  return out;
}

function toCoreEndpointPort(p: WireEndpointPort): CoreEndpointPort {
  const out: CoreEndpointPort = {};
  if (p.name != null) out.name = p.name;
  if (p.protocol != null) out.protocol = p.protocol;
  if (p.port != null) out.port = p.port;
  if (p.appProtocol != null) out.appProtocol = p.appProtocol;
  return out;
}

export function toCoreEndpointSlice(w: WireEndpointSlice): CoreEndpointSlice {
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    addressType: w.addressType ?? '',
    endpoints: (w.endpoints ?? []).map(toCoreEndpoint),
    ports: (w.ports ?? []).map(toCoreEndpointPort),
  };
}

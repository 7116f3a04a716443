/** discovery.k8s.io/v1 EndpointSlice on the wire, and its conversion to the internal form. */

import { z } from 'zod';
import type { CoreEndpointSlice } from '../model/endpoint-slice.js';
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

function present<K extends string, V>(key: K, v: V | null | undefined): { [P in K]?: V } {
  return (v != null ? { [key]: v } : {}) as { [P in K]?: V };
}

export function toCoreEndpointSlice(w: WireEndpointSlice): CoreEndpointSlice {
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    addressType: w.addressType ?? '',
    endpoints: (w.endpoints ?? []).map((e) => ({
      addresses: [...(e.addresses ?? [])],
      conditions: {
        ...present('ready', e.conditions?.ready),
        ...present('serving', e.conditions?.serving),
        ...present('terminating', e.conditions?.terminating),
      },
      ...present('hostname', e.hostname),
      ...present('nodeName', e.nodeName),
      ...present('zone', e.zone),
      ...(e.hints != null
        ? {
            hints: {
              forZones: (e.hints.forZones ?? []).map((z) => ({ name: z.name ?? '' })),
              forNodes: (e.hints.forNodes ?? []).map((n) => ({ name: n.name ?? '' })),
            },
          }
        : {}),
    })),
    ports: (w.ports ?? []).map((p) => ({
      ...present('name', p.name),
      ...present('protocol', p.protocol),
      ...present('port', p.port),
      ...present('appProtocol', p.appProtocol),
    })),
  };
}

/** v1 Endpoints on the wire, and its conversion to the internal form. */

import { z } from 'zod';
import type { CoreEndpointAddress, CoreEndpoints } from '../model/endpoints.js';
import { objectReferenceSchema } from './endpoint-slice.js';
import { objectMetaSchema, toCoreObjectMeta } from './meta.js';
import { int32, list, str } from './primitives.js';

const address = z.strictObject({ ip: str(), hostname: str(), nodeName: str(), targetRef: objectReferenceSchema });
const port = z.strictObject({ name: str(), port: int32(), protocol: str(), appProtocol: str() });

export const endpointsSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  subsets: list(z.strictObject({ addresses: list(address), notReadyAddresses: list(address), ports: list(port) })),
});

export type WireEndpoints = z.infer<typeof endpointsSchema>;

type WireAddress = z.infer<typeof address>;

function toAddress(a: WireAddress): CoreEndpointAddress {
  return { ip: a.ip ?? '', hostname: a.hostname ?? '', ...(a.nodeName != null ? { nodeName: a.nodeName } : {}) };
}

export function toCoreEndpoints(w: WireEndpoints): CoreEndpoints {
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    subsets: (w.subsets ?? []).map((s) => ({
      addresses: (s.addresses ?? []).map(toAddress),
      notReadyAddresses: (s.notReadyAddresses ?? []).map(toAddress),
      ports: (s.ports ?? []).map((p) => ({
        name: p.name ?? '',
        port: p.port ?? 0,
        protocol: p.protocol ?? '',
        ...(p.appProtocol != null ? { appProtocol: p.appProtocol } : {}),
      })),
    })),
  };
}

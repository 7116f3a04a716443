/**
 * v1 Node on the wire. Node status grows every release (nodeInfo, runtimeHandlers, features...)
 * and kube-proxy reads only status.addresses, so other status fields are accepted unchecked:
 * a newer cluster's `kubectl get node -o yaml` must still decode.
 */

import { z } from 'zod';
import type { CoreNode } from '../model/node.js';
import { objectMetaSchema, toCoreObjectMeta } from './meta.js';
import { anything, bool, list, str, stringList, struct } from './primitives.js';

export const nodeSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  spec: struct({
    podCIDR: str(),
    podCIDRs: stringList(),
    providerID: str(),
    unschedulable: bool(),
    taints: list(z.strictObject({ key: str(), value: str(), effect: str(), timeAdded: str() })),
    configSource: anything(),
    externalID: str(),
  }),
  status: z
    .looseObject({
      addresses: list(z.strictObject({ type: str(), address: str() })),
      // Read by the EndpointSlice controller's topology cache only (a quantity is a JSON string
      // or number; conditions grow fields, so their other fields are not checked).
      allocatable: z.record(z.string(), z.union([z.string(), z.number()])).nullish(),
      conditions: list(z.looseObject({ type: str(), status: str() })),
    })
    .nullish(),
});

export type WireNode = z.infer<typeof nodeSchema>;

export function toCoreNode(w: WireNode): CoreNode {
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    spec: {
      podCIDR: w.spec?.podCIDR ?? '',
      podCIDRs: [...(w.spec?.podCIDRs ?? [])],
      taints: (w.spec?.taints ?? []).map((t) => ({ key: t.key ?? '', value: t.value ?? '', effect: t.effect ?? '' })),
    },
    status: {
      addresses: (w.status?.addresses ?? []).map((a) => ({ type: a.type ?? '', address: a.address ?? '' })),
      allocatable: Object.fromEntries(Object.entries(w.status?.allocatable ?? {}).map(([k, v]) => [k, String(v)])),
      conditions: (w.status?.conditions ?? []).map((c) => ({ type: c.type ?? '', status: c.status ?? '' })),
    },
  };
}

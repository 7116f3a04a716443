/**
 * metav1.ObjectMeta on the wire. Every field the real schema has is accepted, including those
 * kube-proxy never reads (uid, resourceVersion, managedFields, ownerReferences...), so that
 * `kubectl get -o yaml` output decodes; only fields unknown to the API are rejected.
 */

import { z } from 'zod';
import type { CoreObjectMeta } from '../model/meta.js';
import { anything, bool, int64, list, str, stringList, stringMap } from './primitives.js';

const ownerReference = z.strictObject({
  apiVersion: str(),
  kind: str(),
  name: str(),
  uid: str(),
  controller: bool(),
  blockOwnerDeletion: bool(),
});

const managedFieldsEntry = z.strictObject({
  manager: str(),
  operation: str(),
  apiVersion: str(),
  time: str(),
  fieldsType: str(),
  fieldsV1: anything(),
  subresource: str(),
});

export const objectMetaSchema = z
  .strictObject({
    name: str(),
    generateName: str(),
    namespace: str(),
    selfLink: str(),
    uid: str(),
    resourceVersion: str(),
    generation: int64(),
    creationTimestamp: str(),
    deletionTimestamp: str(),
    deletionGracePeriodSeconds: int64(),
    labels: stringMap(),
    annotations: stringMap(),
    ownerReferences: list(ownerReference),
    finalizers: stringList(),
    managedFields: list(managedFieldsEntry),
  })
  .nullish();

export type WireObjectMeta = z.infer<typeof objectMetaSchema>;

/** Go's view of decoded metadata: absent and null become zero values. */
export function toCoreObjectMeta(m: WireObjectMeta): CoreObjectMeta {
  return {
    name: m?.name ?? '',
    generateName: m?.generateName ?? '',
    namespace: m?.namespace ?? '',
    generation: m?.generation ?? 0,
    labels: { ...(m?.labels ?? {}) },
    annotations: { ...(m?.annotations ?? {}) },
    ownerReferences: (m?.ownerReferences ?? []).map((r) => ({
      apiVersion: r.apiVersion ?? '',
      kind: r.kind ?? '',
      name: r.name ?? '',
      uid: r.uid ?? '',
      ...(r.controller != null ? { controller: r.controller } : {}),
    })),
    finalizers: [...(m?.finalizers ?? [])],
    managedFields: (m?.managedFields ?? []).map((f) => ({
      manager: f.manager ?? '',
      operation: f.operation ?? '',
      fieldsType: f.fieldsType ?? '',
      subresource: f.subresource ?? '',
    })),
  };
}

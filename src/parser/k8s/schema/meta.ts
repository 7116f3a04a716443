/**
 * metav1.ObjectMeta on the wire. Every field the real schema has is accepted, including those
 * kube-proxy never reads (uid, resourceVersion, managedFields, ownerReferences...), so that
 * `kubectl get -o yaml` output decodes; only fields unknown to the API are rejected.
 */

import { z } from 'zod';
import type { CoreObjectMeta, ManagedFieldsEntry, OwnerReference } from '../model/meta.js';
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

type WireMeta = NonNullable<WireObjectMeta>;

function toCoreOwnerReference(r: NonNullable<WireMeta['ownerReferences']>[number]): OwnerReference {
  const out: OwnerReference = { apiVersion: r.apiVersion ?? '', kind: r.kind ?? '', name: r.name ?? '', uid: r.uid ?? '' };
  if (r.controller != null) out.controller = r.controller;
  return out;
}

function toCoreManagedFieldsEntry(f: NonNullable<WireMeta['managedFields']>[number]): ManagedFieldsEntry {
  return { manager: f.manager ?? '', operation: f.operation ?? '', fieldsType: f.fieldsType ?? '', subresource: f.subresource ?? '' };
}

/**
 * Go's view of decoded metadata: absent and null become zero values. Runs once per object, so
 * absent lists and maps become fresh empty ones directly, without copying a throwaway `?? []`.
 */
export function toCoreObjectMeta(m: WireObjectMeta): CoreObjectMeta {
  const out: CoreObjectMeta = {
    name: m?.name ?? '',
    generateName: m?.generateName ?? '',
    namespace: m?.namespace ?? '',
    generation: m?.generation ?? 0,
    labels: m?.labels != null ? { ...m.labels } : {},
    annotations: m?.annotations != null ? { ...m.annotations } : {},
    ownerReferences: m?.ownerReferences != null ? m.ownerReferences.map(toCoreOwnerReference) : [],
    finalizers: m?.finalizers != null ? [...m.finalizers] : [],
    managedFields: m?.managedFields != null ? m.managedFields.map(toCoreManagedFieldsEntry) : [],
  };
  if (m?.uid != null && m.uid !== '') out.uid = m.uid;
  if (m?.deletionTimestamp != null && m.deletionTimestamp !== '') out.deletionTimestamp = m.deletionTimestamp;
  return out;
}

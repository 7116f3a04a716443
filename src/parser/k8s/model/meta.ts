/**
 * ObjectMeta as the API server's validators see it: Go zero values instead of absent fields
 * ('' for an unset string, [] for a nil list), so validation code reads like its Go original.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  fieldsType: string;
  subresource: string;
}

export interface CoreObjectMeta {
  name: string;
  generateName: string;
  namespace: string;
  generation: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
  finalizers: string[];
  managedFields: ManagedFieldsEntry[];
  /** Set when the object carries one (read back from a cluster); the controllers use them. */
  uid?: string;
  /** Set on an object being deleted (a terminating Pod). */
  deletionTimestamp?: string;
}

/** The typed-object header every kind carries. */
export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

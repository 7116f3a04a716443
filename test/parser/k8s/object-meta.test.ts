import { describe, expect, it } from 'vitest';
import type { CoreObjectMeta } from '../../../src/parser/k8s/model/meta.js';
import { nameIsDNSSubdomain } from '../../../src/parser/k8s/validate/names.js';
import { validateObjectMeta } from '../../../src/parser/k8s/validate/object-meta.js';
import { render } from './helpers.js';

function meta(change: Partial<CoreObjectMeta> = {}): CoreObjectMeta {
  return {
    name: 'x',
    generateName: '',
    namespace: '',
    generation: 0,
    labels: {},
    annotations: {},
    ownerReferences: [],
    finalizers: [],
    managedFields: [],
    ...change,
  };
}

describe('validateObjectMeta (rules decodeObject cannot reach)', () => {
  it('a namespace on a cluster-scoped object is forbidden (the API server clears it first)', () => {
    expect(render(validateObjectMeta(meta({ namespace: 'default' }), false, nameIsDNSSubdomain))).toEqual(['metadata.namespace: Forbidden: not allowed on this type']);
  });

  it('only one owner reference may be the controller', () => {
    const refs = [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
    ];
    expect(render(validateObjectMeta(meta({ ownerReferences: refs }), false, nameIsDNSSubdomain))).toEqual([
      'metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b',
    ]);
  });

  it('orphan and foregroundDeletion finalizers exclude each other', () => {
    expect(render(validateObjectMeta(meta({ finalizers: ['orphan', 'foregroundDeletion'] }), false, nameIsDNSSubdomain))).toEqual([
      'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
  });

  it('managed-field managers are printable', () => {
    expect(render(validateObjectMeta(meta({ managedFields: [{ manager: 'a\tb', operation: 'Update', fieldsType: 'FieldsV1', subresource: '' }] }), false, nameIsDNSSubdomain))).toEqual([
      'metadata.managedFields[0].manager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)',
    ]);
  });
});

/**
 * ValidateObjectMeta for a create (apimachinery api/validation/objectmeta.go plus core's
 * finalizer check): name and generateName through the kind's name rule, namespace presence,
 * labels, annotations, owner references, finalizers and managed fields.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { forbidden, invalid, required, tooLong } from '../field-errors.js';
import { asJSON, byteLength, GoStruct } from '../go-format.js';
import type { CoreObjectMeta, OwnerReference } from '../model/meta.js';
import { validateAnnotations, validateLabels } from './labels.js';
import { isQualifiedName, nameIsDNSLabel, type NameFunc } from './names.js';

const META: FieldPath = ['metadata'];
const at = (...p: Array<string | number>): FieldPath => [...META, ...p];
// Paths every object's checks pass down, made once (at() spreads a new array per call, which
// is fine for an error but not for every object).
const LABELS = at('labels');
const ANNOTATIONS = at('annotations');
const OWNER_REFERENCES = at('ownerReferences');

/** Finalizers core treats as standard although they have no domain prefix. */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** schema.FromAPIVersionAndKind's version: "" when the apiVersion does not parse. */
function versionOf(apiVersion: string): string {
  if (apiVersion === '') return '';
  const parts = apiVersion.split('/');
  if (parts.length === 1) return parts[0]!;
  if (parts.length === 2) return parts[1]!;
  return '';
}

/** metav1.OwnerReference as json.Marshal prints it: declaration order, nil pointers omitted. */
function ownerReferenceJSON(ref: OwnerReference): GoStruct {
  return new GoStruct([
    ['apiVersion', ref.apiVersion],
    ['kind', ref.kind],
    ['name', ref.name],
    ['uid', ref.uid],
    ...(ref.controller !== undefined ? [['controller', ref.controller] as const] : []),
  ]);
}

function validateOwnerReferences(refs: OwnerReference[]): FieldError[] {
  const path = OWNER_REFERENCES;
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    if (versionOf(ref.apiVersion) === '') errs.push(invalid([...path, 'apiVersion'], ref.apiVersion, 'version must not be empty'));
    if (ref.kind === '') errs.push(invalid([...path, 'kind'], ref.kind, 'must not be empty'));
    if (ref.name === '') errs.push(invalid([...path, 'name'], ref.name, 'must not be empty'));
    if (ref.uid === '') errs.push(invalid([...path, 'uid'], asJSON(ref.uid), 'must not be empty'));
    if (ref.controller === true) {
      const name = `${ref.kind}/${ref.name}`;
      if (firstController !== '') {
        errs.push(invalid(path, asJSON(refs.map(ownerReferenceJSON)), `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${name}`));
      } else {
        firstController = name;
      }
    }
  }
  return errs;
}

function validateFinalizers(finalizers: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of finalizers) for (const msg of isQualifiedName(f)) errs.push(invalid(at('finalizers'), f, msg));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(at('finalizers'), asJSON(finalizers), 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/** core's validateKubeFinalizerName, appended after apimachinery's checks. */
function validateKubeFinalizerNames(finalizers: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (let i = 0; i < finalizers.length; i++) {
    const f = finalizers[i]!;
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      errs.push(invalid(at('finalizers', i), f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  }
  return errs;
}

/** `%#U`: `U+0009`, or `U+0078 'x'` for a printable rune. */
function goRuneU(r: number): string {
  const code = `U+${r.toString(16).toUpperCase().padStart(4, '0')}`;
  const ch = String.fromCodePoint(r);
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch) ? `${code} '${ch}'` : code;
}

function validateManagedFields(meta: CoreObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  for (let i = 0; i < meta.managedFields.length; i++) {
    const f = meta.managedFields[i]!;
    const p = at('managedFields', i);
    if (f.operation !== 'Apply' && f.operation !== 'Update') errs.push(invalid([...p, 'operation'], asJSON(f.operation), 'must be `Apply` or `Update`'));
    if (f.fieldsType !== '' && f.fieldsType !== 'FieldsV1') errs.push(invalid([...p, 'fieldsType'], f.fieldsType, 'must be `FieldsV1`'));
    if (byteLength(f.manager) > 128) errs.push(tooLong([...p, 'manager'], 128));
    let pos = 0;
    for (const ch of f.manager) {
      const r = ch.codePointAt(0)!;
      if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) {
        errs.push(invalid([...p, 'manager'], f.manager, `invalid character ${goRuneU(r)} (at position ${pos})`));
      }
      pos += byteLength(ch);
    }
    if (byteLength(f.subresource) > 256) errs.push(tooLong([...p, 'subresource'], 256));
  }
  return errs;
}

/**
 * ValidateObjectMeta(meta, requiresNamespace, nameFn). For a cluster-scoped kind the namespace
 * has already been cleared, as the API server's BeforeCreate does before validation.
 */
export function validateObjectMeta(meta: CoreObjectMeta, requiresNamespace: boolean, nameFn: NameFunc): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName !== '') {
    for (const msg of nameFn(meta.generateName, true)) errs.push(invalid(at('generateName'), meta.generateName, msg));
  }
  if (meta.name === '' && meta.generateName !== '') {
    // The API server generates the name before validating; kpc cannot, and needs the name the
    // cluster generated (a kpc rule in place of the unreachable "Required value").
    errs.push(forbidden(at('generateName'), 'kpc cannot generate a name offline; set metadata.name (use a manifest read back from the cluster)'));
  } else if (meta.name === '') {
    errs.push(required(at('name'), 'name or generateName is required'));
  } else {
    for (const msg of nameFn(meta.name, false)) errs.push(invalid(at('name'), meta.name, msg));
  }
  if (requiresNamespace) {
    if (meta.namespace === '') errs.push(required(at('namespace')));
    else for (const msg of nameIsDNSLabel(meta.namespace, false)) errs.push(invalid(at('namespace'), meta.namespace, msg));
  } else if (meta.namespace !== '') {
    errs.push(forbidden(at('namespace'), 'not allowed on this type'));
  }
  if (meta.generation < 0) errs.push(invalid(at('generation'), meta.generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(meta.labels, LABELS));
  errs.push(...validateAnnotations(meta.annotations, ANNOTATIONS));
  errs.push(...validateOwnerReferences(meta.ownerReferences));
  errs.push(...validateFinalizers(meta.finalizers));
  errs.push(...validateManagedFields(meta));
  errs.push(...validateKubeFinalizerNames(meta.finalizers));
  return errs;
}

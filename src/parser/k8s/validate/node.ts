/**
 * ValidateNode for a create (pkg/apis/core/validation/validation.go), plus kpc's checks on
 * status.addresses, which kube-proxy uses as the node's IPs (ValidateNode skips status).
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { duplicate, internalError, invalid, notSupported, required } from '../field-errors.js';
import { asJSON, GoStruct } from '../go-format.js';
import type { CoreNode } from '../model/node.js';
import type { ValidationContext } from './context.js';
import { validateCIDR, validateIP } from './ips.js';
import { validateLabelName } from './labels.js';
import { isValidLabelValue, nameIsDNSSubdomain } from './names.js';
import { validateObjectMeta } from './object-meta.js';
import { parseCIDR } from '../../../net/ip.js';
import { parseQuantity, QUANTITY_FORMAT_ERROR } from '../quantity.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
export const NODE_ADDRESS_TYPES = ['ExternalDNS', 'ExternalIP', 'Hostname', 'InternalDNS', 'InternalIP'];

/** validateNodeTaints. The path really is metadata.taints: ValidateNode passes the metadata path. */
function validateTaints(node: CoreNode): FieldError[] {
  const path: FieldPath = ['metadata', 'taints'];
  const errs: FieldError[] = [];
  const seen = new Map<string, Set<string>>();
  node.spec.taints.forEach((t, i) => {
    const idx: FieldPath = [...path, i];
    errs.push(...validateLabelName(t.key, [...idx, 'key']));
    const valueErrs = isValidLabelValue(t.value);
    if (valueErrs.length > 0) errs.push(invalid([...idx, 'value'], t.value, valueErrs.join(';')));
    if (t.effect === '') errs.push(required([...idx, 'effect']));
    else if (!TAINT_EFFECTS.includes(t.effect)) errs.push(notSupported([...idx, 'effect'], asJSON(t.effect), TAINT_EFFECTS));
    const keys = seen.get(t.effect) ?? new Set<string>();
    if (keys.has(t.key)) {
      // The internal core.Taint, json.Marshal'ed with its Go field names.
      const taint = new GoStruct([['Key', t.key], ['Value', t.value], ['Effect', t.effect], ['TimeAdded', null]]);
      const e = duplicate(idx, asJSON(taint));
      errs.push({ ...e, message: `${e.message}: taints must be unique by key and effect pair` });
      return;
    }
    keys.add(t.key);
    seen.set(t.effect, keys);
  });
  return errs;
}

function validatePodCIDRs(node: CoreNode, ctx: ValidationContext): FieldError[] {
  const cidrs = node.spec.podCIDRs;
  if (cidrs.length === 0) return [];
  const path: FieldPath = ['spec', 'podCIDRs'];
  const errs: FieldError[] = [];
  cidrs.forEach((c, i) => errs.push(...validateCIDR([...path, i], c, ctx.ipValidation)));
  if (cidrs.length > 1) {
    // netutils.IsDualStackCIDRStrings parses every entry; a parse error is reported as an
    // internal error and also counts as "not dual-stack".
    const bad = cidrs.find((c) => parseCIDR(c) === undefined);
    if (bad !== undefined) errs.push(internalError(path, `invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR address: ${bad}`));
    const families = new Set(cidrs.map((c) => parseCIDR(c)?.cidr.ip.family));
    const dualStack = bad === undefined && families.has('IPv4') && families.has('IPv6');
    if (!dualStack || cidrs.length > 2) errs.push(invalid(path, asJSON(cidrs), 'may specify no more than one CIDR for each IP family'));
    const seen = new Set<string>();
    cidrs.forEach((c, i) => {
      if (seen.has(c)) errs.push(duplicate([...path, i], c));
      seen.add(c);
    });
  }
  return errs;
}

/** kpc rule: kube-proxy takes node IPs from here, so IP-typed entries must be IPs. */
function validateAddresses(node: CoreNode, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  node.status.addresses.forEach((a, i) => {
    const idx: FieldPath = ['status', 'addresses', i];
    if (!NODE_ADDRESS_TYPES.includes(a.type)) errs.push(notSupported([...idx, 'type'], asJSON(a.type), NODE_ADDRESS_TYPES));
    if (a.type === 'InternalIP' || a.type === 'ExternalIP') errs.push(...validateIP([...idx, 'address'], a.address, ctx.ipValidation));
  });
  return errs;
}

/**
 * A quantity the API server cannot parse fails the Node's JSON decoding (Quantity.UnmarshalJSON);
 * kpc reads allocatable CPU (the EndpointSlice controller's topology hints).
 */
function validateAllocatable(node: CoreNode): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(node.status.allocatable)) {
    if (parseQuantity(v) === undefined) errs.push(invalid(['status', 'allocatable', { key: k }], v, QUANTITY_FORMAT_ERROR));
  }
  return errs;
}

export function validateNode(node: CoreNode, ctx: ValidationContext): FieldError[] {
  return [
    ...validateObjectMeta(node.metadata, false, nameIsDNSSubdomain),
    ...validateTaints(node),
    ...validatePodCIDRs(node, ctx),
    ...validateAddresses(node, ctx),
    ...validateAllocatable(node),
  ];
}


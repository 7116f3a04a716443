/**
 * ValidateEndpointSlice (pkg/apis/discovery/validation/validation.go), plus the kpc rule for
 * port numbers: the API does not validate them (the field is a nullable pointer), kube-proxy
 * ignores a nil or 0 port, and kpc rejects numbers outside 1-65535 and warns about nil.
 */

import type { FieldError, FieldPath } from '../../diagnostics.js';
import { fieldWarning } from '../../diagnostics.js';
import { asWarning, duplicate, invalid, notSupported, required, tooMany } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import type { CoreEndpoint, CoreEndpointSlice } from '../model/endpoint-slice.js';
import type { ValidationContext } from './context.js';
import { isPlainUnicastIPv4, validateEndpointIP, validateIPOfFamily } from './ips.js';
import {
  isValidLabelValue,
  isValidPortNum,
  nameIsDNSSubdomain,
  validateDNS1123Label,
  validateFullyQualifiedDomainName,
  validateQualifiedName,
} from './names.js';
import { validateObjectMeta } from './object-meta.js';
import { SUPPORTED_PROTOCOLS } from './service-ports.js';

export const SUPPORTED_ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
export const MAX_ENDPOINTS = 1000;
export const MAX_ADDRESSES = 100;
/** 100 until kubernetes/kubernetes#99795 (v1.21); the API doc comment still says 100. */
export const MAX_PORTS = 20000;
export const MAX_ZONE_HINTS = 8;

function validateAddressType(slice: CoreEndpointSlice): FieldError[] {
  if (slice.addressType === '') return [required(['addressType'])];
  if (!SUPPORTED_ADDRESS_TYPES.includes(slice.addressType)) return [notSupported(['addressType'], asJSON(slice.addressType), SUPPORTED_ADDRESS_TYPES)];
  return [];
}

function validateHints(hints: NonNullable<CoreEndpoint['hints']>, path: FieldPath): FieldError[] {
  const fz: FieldPath = [...path, 'forZones'];
  if (hints.forZones.length > MAX_ZONE_HINTS) return [tooMany(fz, hints.forZones.length, MAX_ZONE_HINTS)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  hints.forZones.forEach((zone, i) => {
    const zp: FieldPath = [...fz, i, 'name'];
    if (names.has(zone.name)) errs.push(duplicate(zp, zone.name));
    else names.add(zone.name);
    for (const m of isValidLabelValue(zone.name)) errs.push(invalid(zp, zone.name, m));
  });
  // forNodes (v1.33+) has no validation in the code read.
  return errs;
}

function validateEndpoints(slice: CoreEndpointSlice, ctx: ValidationContext): FieldError[] {
  const path: FieldPath = ['endpoints'];
  // Over the limit, the whole list is rejected without per-item checks.
  if (slice.endpoints.length > MAX_ENDPOINTS) return [tooMany(path, slice.endpoints.length, MAX_ENDPOINTS)];
  const errs: FieldError[] = [];
  slice.endpoints.forEach((ep, i) => {
    const idx: FieldPath = [...path, i];
    const addrPath: FieldPath = [...idx, 'addresses'];
    if (ep.addresses.length === 0) errs.push(required(addrPath, 'must contain at least 1 address'));
    else if (ep.addresses.length > MAX_ADDRESSES) errs.push(tooMany(addrPath, ep.addresses.length, MAX_ADDRESSES));
    ep.addresses.forEach((address, j) => {
      // The everyday address, which the rules below would not report (see isPlainUnicastIPv4).
      if (slice.addressType === 'IPv4' && isPlainUnicastIPv4(address)) return;
      const p: FieldPath = [...addrPath, j];
      switch (slice.addressType) {
        case 'IPv4':
        case 'IPv6':
          errs.push(...validateIPOfFamily(p, address, slice.addressType, ctx.ipValidation));
          errs.push(...validateEndpointIP(p, address));
          break;
        case 'FQDN':
          errs.push(...validateFullyQualifiedDomainName(p, address));
          break;
      }
    });
    if (ep.nodeName !== undefined) {
      for (const m of nameIsDNSSubdomain(ep.nodeName, false)) errs.push(invalid([...idx, 'nodeName'], ep.nodeName, m));
    }
    if (ep.hostname !== undefined) errs.push(...validateDNS1123Label(ep.hostname, [...idx, 'hostname']));
    if (ep.hints !== undefined) errs.push(...validateHints(ep.hints, [...idx, 'hints']));
  });
  return errs;
}

function validatePorts(slice: CoreEndpointSlice): FieldError[] {
  const path: FieldPath = ['ports'];
  if (slice.ports.length > MAX_PORTS) return [tooMany(path, slice.ports.length, MAX_PORTS)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  slice.ports.forEach((p, i) => {
    const idx: FieldPath = [...path, i];
    const name = p.name ?? '';
    if (name.length > 0) errs.push(...validateDNS1123Label(name, [...idx, 'name']));
    // "" counts too: only one unnamed port per slice.
    if (names.has(name)) errs.push(duplicate([...idx, 'name'], asJSON(name)));
    else names.add(name);
    if (p.protocol === undefined) errs.push(required([...idx, 'protocol']));
    else if (!SUPPORTED_PROTOCOLS.includes(p.protocol)) errs.push(notSupported([...idx, 'protocol'], asJSON(p.protocol), SUPPORTED_PROTOCOLS));
    if (p.appProtocol !== undefined) errs.push(...validateQualifiedName(p.appProtocol, [...idx, 'appProtocol']));
    // kpc rule (see the file comment).
    if (p.port === undefined) {
      errs.push(asWarning(required([...idx, 'port'], 'kube-proxy ignores an endpoint port without a number')));
    } else {
      for (const m of isValidPortNum(p.port)) errs.push(invalid([...idx, 'port'], p.port, m));
    }
  });
  return errs;
}

export function validateEndpointSlice(slice: CoreEndpointSlice, ctx: ValidationContext): FieldError[] {
  return [
    ...validateObjectMeta(slice.metadata, true, nameIsDNSSubdomain),
    ...validateAddressType(slice),
    ...validateEndpoints(slice, ctx),
    ...validatePorts(slice),
  ];
}

/** Things the API accepts that kube-proxy ignores, said out loud. */
export function endpointSliceWarnings(slice: CoreEndpointSlice): FieldError[] {
  if (slice.addressType === 'FQDN') {
    return [fieldWarning(['addressType'], 'kube-proxy ignores FQDN EndpointSlices ("No semantics are defined for the FQDN type")')];
  }
  return [];
}

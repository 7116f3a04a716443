/**
 * ValidateEndpointSlice (pkg/apis/discovery/validation/validation.go), plus the kpc rule for
 * port numbers: the API does not validate them (the field is a nullable pointer), kube-proxy
 * ignores a nil or 0 port, and kpc rejects numbers outside 1-65535 and warns about nil.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { fieldWarning } from '../../../diagnostics.js';
import { asWarning, duplicate, invalid, notSupported, required, tooMany } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import type { CoreEndpoint, CoreEndpointPort, CoreEndpointSlice } from '../model/endpoint-slice.js';
import type { ValidationContext } from './context.js';
import { ipFamilyOf, isPlainUnicastIPv4, validateEndpointIP, validateIP, validateIPStrictly } from './ips.js';
import { hasErrors } from './context.js';
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

// The checks below run once per endpoint (one per Pod) and nearly always find nothing, so they
// build a field path only when they report something, as an array literal at the report; the
// eagerly spread paths (`[...path, i]`) and per-endpoint closures were most of what validating
// a large cluster allocated.

function validateHints(hints: NonNullable<CoreEndpoint['hints']>, i: number, errs: FieldError[]): void {
  if (hints.forZones.length > MAX_ZONE_HINTS) {
    errs.push(tooMany(['endpoints', i, 'hints', 'forZones'], hints.forZones.length, MAX_ZONE_HINTS));
    return;
  }
  const names = new Set<string>();
  for (let j = 0; j < hints.forZones.length; j++) {
    const zone = hints.forZones[j]!;
    if (names.has(zone.name)) errs.push(duplicate(['endpoints', i, 'hints', 'forZones', j, 'name'], zone.name));
    else names.add(zone.name);
    for (const m of isValidLabelValue(zone.name)) errs.push(invalid(['endpoints', i, 'hints', 'forZones', j, 'name'], zone.name, m));
  }
  // forNodes (v1.33+) has no validation in the code read.
}

function validateEndpointAddresses(addresses: string[], addressType: string, i: number, ctx: ValidationContext, errs: FieldError[]): void {
  if (addresses.length === 0) errs.push(required(['endpoints', i, 'addresses'], 'must contain at least 1 address'));
  else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(['endpoints', i, 'addresses'], addresses.length, MAX_ADDRESSES));
  for (let j = 0; j < addresses.length; j++) {
    const address = addresses[j]!;
    // The everyday address, which the rules below would not report (see isPlainUnicastIPv4).
    if (addressType === 'IPv4' && isPlainUnicastIPv4(address)) continue;
    const p: FieldPath = ['endpoints', i, 'addresses', j];
    switch (addressType) {
      case 'IPv4':
      case 'IPv6': {
        // validateEndpoints: IPv4 is checked as a legacy field, IPv6 strictly; an address that
        // is not one stops there, one of the other family is "must be an IPv4 address" at the
        // list's path (the API server's own, without the index).
        const ipErrs = addressType === 'IPv4' ? validateIP(p, address, ctx.ipValidation) : validateIPStrictly(p, address);
        errs.push(...ipErrs);
        if (hasErrors(ipErrs)) break;
        if (ipFamilyOf(address) !== addressType) errs.push(invalid(['endpoints', i, 'addresses'], address, `must be an ${addressType} address`));
        errs.push(...validateEndpointIP(p, address));
        break;
      }
      case 'FQDN':
        errs.push(...validateFullyQualifiedDomainName(p, address));
        break;
    }
  }
}

function validateEndpoint(ep: CoreEndpoint, i: number, addressType: string, ctx: ValidationContext, errs: FieldError[]): void {
  validateEndpointAddresses(ep.addresses, addressType, i, ctx, errs);
  if (ep.nodeName !== undefined) {
    for (const m of nameIsDNSSubdomain(ep.nodeName, false)) errs.push(invalid(['endpoints', i, 'nodeName'], ep.nodeName, m));
  }
  if (ep.hostname !== undefined) errs.push(...validateDNS1123Label(ep.hostname, ['endpoints', i, 'hostname']));
  if (ep.hints !== undefined) validateHints(ep.hints, i, errs);
}

function validateEndpoints(slice: CoreEndpointSlice, ctx: ValidationContext, errs: FieldError[]): void {
  // Over the limit, the whole list is rejected without per-item checks.
  if (slice.endpoints.length > MAX_ENDPOINTS) {
    errs.push(tooMany(['endpoints'], slice.endpoints.length, MAX_ENDPOINTS));
    return;
  }
  for (let i = 0; i < slice.endpoints.length; i++) validateEndpoint(slice.endpoints[i]!, i, slice.addressType, ctx, errs);
}

function validatePort(p: CoreEndpointPort, i: number, names: Set<string>, errs: FieldError[]): void {
  const name = p.name ?? '';
  if (name.length > 0) errs.push(...validateDNS1123Label(name, ['ports', i, 'name']));
  // "" counts too: only one unnamed port per slice.
  if (names.has(name)) errs.push(duplicate(['ports', i, 'name'], asJSON(name)));
  else names.add(name);
  if (p.protocol === undefined) errs.push(required(['ports', i, 'protocol']));
  else if (!SUPPORTED_PROTOCOLS.includes(p.protocol)) errs.push(notSupported(['ports', i, 'protocol'], asJSON(p.protocol), SUPPORTED_PROTOCOLS));
  if (p.appProtocol !== undefined) errs.push(...validateQualifiedName(p.appProtocol, ['ports', i, 'appProtocol']));
  // kpc rule (see the file comment).
  if (p.port === undefined) {
    errs.push(asWarning(required(['ports', i, 'port'], 'kube-proxy ignores an endpoint port without a number')));
  } else {
    for (const m of isValidPortNum(p.port)) errs.push(invalid(['ports', i, 'port'], p.port, m));
  }
}

function validatePorts(slice: CoreEndpointSlice, errs: FieldError[]): void {
  if (slice.ports.length > MAX_PORTS) {
    errs.push(tooMany(['ports'], slice.ports.length, MAX_PORTS));
    return;
  }
  const names = new Set<string>();
  for (let i = 0; i < slice.ports.length; i++) validatePort(slice.ports[i]!, i, names, errs);
}

export function validateEndpointSlice(slice: CoreEndpointSlice, ctx: ValidationContext): FieldError[] {
  const errs = validateObjectMeta(slice.metadata, true, nameIsDNSSubdomain);
  errs.push(...validateAddressType(slice));
  validateEndpoints(slice, ctx, errs);
  validatePorts(slice, errs);
  return errs;
}

/** Things the API accepts that kube-proxy ignores, said out loud. */
export function endpointSliceWarnings(slice: CoreEndpointSlice): FieldError[] {
  if (slice.addressType === 'FQDN') {
    return [fieldWarning(['addressType'], 'kube-proxy ignores FQDN EndpointSlices ("No semantics are defined for the FQDN type")')];
  }
  return [];
}

/**
 * ValidateEndpoints (pkg/apis/core/validation/validation.go). An invalid IP is reported twice,
 * once by IsValidIP and once by ValidateEndpointIP, exactly as upstream does.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { fieldWarning } from '../../../diagnostics.js';
import { invalid, notSupported, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import type { CoreEndpointAddress, CoreEndpoints, CoreEndpointsPort } from '../model/endpoints.js';
import type { ValidationContext } from './context.js';
import { validateEndpointIP, validateIP } from './ips.js';
import { isValidPortNum, nameIsDNSSubdomain, validateDNS1123Label, validateQualifiedName } from './names.js';
import { validateObjectMeta } from './object-meta.js';
import { SUPPORTED_PROTOCOLS } from './service-ports.js';

function validateEndpointAddress(a: CoreEndpointAddress, path: FieldPath, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [...validateIP([...path, 'ip'], a.ip, ctx.ipValidation)];
  if (a.hostname.length > 0) errs.push(...validateDNS1123Label(a.hostname, [...path, 'hostname']));
  if (a.nodeName !== undefined) {
    for (const m of nameIsDNSSubdomain(a.nodeName, false)) errs.push(invalid([...path, 'nodeName'], a.nodeName, m));
  }
  errs.push(...validateEndpointIP([...path, 'ip'], a.ip));
  return errs;
}

function validateEndpointPort(p: CoreEndpointsPort, requireName: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  // Names are required with several ports but, unlike a Service's, not checked for uniqueness.
  if (requireName && p.name.length === 0) errs.push(required([...path, 'name']));
  else if (p.name.length !== 0) errs.push(...validateDNS1123Label(p.name, [...path, 'name']));
  for (const m of isValidPortNum(p.port)) errs.push(invalid([...path, 'port'], p.port, m));
  if (p.protocol.length === 0) errs.push(required([...path, 'protocol']));
  else if (!SUPPORTED_PROTOCOLS.includes(p.protocol)) errs.push(notSupported([...path, 'protocol'], asJSON(p.protocol), SUPPORTED_PROTOCOLS));
  if (p.appProtocol !== undefined) errs.push(...validateQualifiedName(p.appProtocol, [...path, 'appProtocol']));
  return errs;
}

export function validateEndpoints(ep: CoreEndpoints, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [...validateObjectMeta(ep.metadata, true, nameIsDNSSubdomain)];
  ep.subsets.forEach((ss, i) => {
    const idx: FieldPath = ['subsets', i];
    // Ports may be empty (headless), addresses may not.
    if (ss.addresses.length === 0 && ss.notReadyAddresses.length === 0) {
      errs.push(required(idx, 'must specify `addresses` or `notReadyAddresses`'));
    }
    ss.addresses.forEach((a, j) => errs.push(...validateEndpointAddress(a, [...idx, 'addresses', j], ctx)));
    ss.notReadyAddresses.forEach((a, j) => errs.push(...validateEndpointAddress(a, [...idx, 'notReadyAddresses', j], ctx)));
    ss.ports.forEach((p, j) => errs.push(...validateEndpointPort(p, ss.ports.length > 1, [...idx, 'ports', j])));
  });
  return errs;
}

/** The API server's deprecation warning, sent with every v1 Endpoints request since v1.33. */
export function endpointsWarnings(): FieldError[] {
  return [fieldWarning([], 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice')];
}

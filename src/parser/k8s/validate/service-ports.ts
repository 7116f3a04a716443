/**
 * spec.ports of a Service: validateServicePort, the ClusterIP nodePort rule and the two
 * duplicate checks of ValidateService (pkg/apis/core/validation/validation.go).
 */

import type { FieldError, FieldPath } from '../../diagnostics.js';
import { duplicate, forbidden, invalid, notSupported, required } from '../field-errors.js';
import { asJSON, GoStruct } from '../go-format.js';
import type { CoreService, CoreServicePort } from '../model/service.js';
import { isValidPortName, isValidPortNum, validateDNS1123Label, validateQualifiedName } from './names.js';

/** sets.List(supportedPortProtocols): sorted. */
export const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

const PORTS: FieldPath = ['spec', 'ports'];

/** ValidatePortNumOrName: an int is a port number, a string an IANA port name. */
export function validatePortNumOrName(port: number | string, path: FieldPath): FieldError[] {
  if (typeof port === 'number') return isValidPortNum(port).map((m) => invalid(path, asJSON(port), m));
  return isValidPortName(port).map((m) => invalid(path, port, m));
}

function validateServicePort(sp: CoreServicePort, requireName: boolean, allNames: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && sp.name === '') {
    errs.push(required([...path, 'name']));
  } else if (sp.name !== '') {
    errs.push(...validateDNS1123Label(sp.name, [...path, 'name']));
    if (allNames.has(sp.name)) errs.push(duplicate([...path, 'name'], sp.name));
    else allNames.add(sp.name);
  }
  for (const m of isValidPortNum(sp.port)) errs.push(invalid([...path, 'port'], sp.port, m));
  if (sp.protocol === '') errs.push(required([...path, 'protocol']));
  else if (!SUPPORTED_PROTOCOLS.includes(sp.protocol)) errs.push(notSupported([...path, 'protocol'], asJSON(sp.protocol), SUPPORTED_PROTOCOLS));
  // Headless services may have any targetPort: upstream keeps that check commented out
  // because v1 always tolerated it.
  errs.push(...validatePortNumOrName(sp.targetPort, [...path, 'targetPort']));
  if (sp.appProtocol !== undefined) errs.push(...validateQualifiedName(sp.appProtocol, [...path, 'appProtocol']));
  return errs;
}

/** The per-port loop of ValidateService. */
export function validateServicePorts(svc: CoreService): FieldError[] {
  const allNames = new Set<string>();
  const ports = svc.spec.ports;
  return ports.flatMap((sp, i) => validateServicePort(sp, ports.length > 1, allNames, [...PORTS, i]));
}

/** NodePorts are forbidden on ClusterIP services. */
export function validateClusterIPNodePorts(svc: CoreService): FieldError[] {
  if (svc.spec.type !== 'ClusterIP') return [];
  return svc.spec.ports.flatMap((sp, i) => (sp.nodePort !== 0 ? [forbidden([...PORTS, i, 'nodePort'], "may not be used when `type` is 'ClusterIP'")] : []));
}

/** Duplicate (protocol, nodePort) pairs, then duplicate (protocol, port) pairs. */
export function validateDuplicatePorts(svc: CoreService): FieldError[] {
  const errs: FieldError[] = [];
  const nodePorts = new Set<string>();
  svc.spec.ports.forEach((sp, i) => {
    if (sp.nodePort === 0) return;
    const key = `${sp.protocol}/${sp.nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate([...PORTS, i, 'nodePort'], sp.nodePort));
    nodePorts.add(key);
  });
  const ports = new Set<string>();
  svc.spec.ports.forEach((sp, i) => {
    const key = `${sp.protocol}/${sp.port}`;
    // The bad value is an internal core.ServicePort holding only the key, rendered by
    // json.Marshal (v1.34+; older servers print it with %#v).
    if (ports.has(key)) errs.push(duplicate([...PORTS, i], asJSON(servicePortKey(sp))));
    ports.add(key);
  });
  return errs;
}

function servicePortKey(sp: CoreServicePort): GoStruct {
  return new GoStruct([
    ['Name', ''],
    ['Protocol', sp.protocol],
    ['AppProtocol', null],
    ['Port', sp.port],
    ['TargetPort', 0],
    ['NodePort', 0],
  ]);
}

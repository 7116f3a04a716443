/**
 * spec.ports of a Service: validateServicePort, the ClusterIP nodePort rule and the two
 * duplicate checks of ValidateService (pkg/apis/core/validation/validation.go).
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { duplicate, forbidden, invalid, notSupported, required } from '../field-errors.js';
import { asJSON, GoStruct } from '../go-format.js';
import type { CoreService, CoreServicePort } from '../model/service.js';
import { isValidPortName, isValidPortNum, validateDNS1123Label, validateQualifiedName } from './names.js';

/** sets.List(supportedPortProtocols): sorted. */
export const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

const PORTS: FieldPath = ['spec', 'ports'];

/** ValidatePortNumOrName: an int is a port number, a string an IANA port name. */
export function validatePortNumOrName(port: number | string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof port === 'number') for (const m of isValidPortNum(port)) errs.push(invalid(path, asJSON(port), m));
  else for (const m of isValidPortName(port)) errs.push(invalid(path, port, m));
  return errs;
}

// validateServicePort runs for every port of every Service and nearly always finds nothing:
// it takes the port's index and spells each field path out where it is used, rather than
// spreading a new path for each field up front.

function validateServicePort(sp: CoreServicePort, requireName: boolean, allNames: Set<string>, i: number, errs: FieldError[]): void {
  if (requireName && sp.name === '') {
    errs.push(required(['spec', 'ports', i, 'name']));
  } else if (sp.name !== '') {
    errs.push(...validateDNS1123Label(sp.name, ['spec', 'ports', i, 'name']));
    if (allNames.has(sp.name)) errs.push(duplicate(['spec', 'ports', i, 'name'], sp.name));
    else allNames.add(sp.name);
  }
  for (const m of isValidPortNum(sp.port)) errs.push(invalid(['spec', 'ports', i, 'port'], sp.port, m));
  if (sp.protocol === '') errs.push(required(['spec', 'ports', i, 'protocol']));
  else if (!SUPPORTED_PROTOCOLS.includes(sp.protocol)) errs.push(notSupported(['spec', 'ports', i, 'protocol'], asJSON(sp.protocol), SUPPORTED_PROTOCOLS));
  // Headless services may have any targetPort: upstream keeps that check commented out
  // because v1 always tolerated it.
  errs.push(...validatePortNumOrName(sp.targetPort, ['spec', 'ports', i, 'targetPort']));
  if (sp.appProtocol !== undefined) errs.push(...validateQualifiedName(sp.appProtocol, ['spec', 'ports', i, 'appProtocol']));
}

/** The per-port loop of ValidateService. */
export function validateServicePorts(svc: CoreService): FieldError[] {
  const errs: FieldError[] = [];
  const allNames = new Set<string>();
  const ports = svc.spec.ports;
  for (let i = 0; i < ports.length; i++) validateServicePort(ports[i]!, ports.length > 1, allNames, i, errs);
  return errs;
}

/** NodePorts are forbidden on ClusterIP services. */
export function validateClusterIPNodePorts(svc: CoreService): FieldError[] {
  const errs: FieldError[] = [];
  if (svc.spec.type !== 'ClusterIP') return errs;
  const ports = svc.spec.ports;
  for (let i = 0; i < ports.length; i++) {
    if (ports[i]!.nodePort !== 0) errs.push(forbidden([...PORTS, i, 'nodePort'], "may not be used when `type` is 'ClusterIP'"));
  }
  return errs;
}

/** Duplicate (protocol, nodePort) pairs, then duplicate (protocol, port) pairs. */
export function validateDuplicatePorts(svc: CoreService): FieldError[] {
  const errs: FieldError[] = [];
  const ports = svc.spec.ports;
  // A duplicate takes two ports; the sets and keys below are not worth making for one.
  if (ports.length < 2) return errs;
  const nodePortKeys = new Set<string>();
  for (let i = 0; i < ports.length; i++) {
    const sp = ports[i]!;
    if (sp.nodePort === 0) continue;
    const key = `${sp.protocol}/${sp.nodePort}`;
    if (nodePortKeys.has(key)) errs.push(duplicate([...PORTS, i, 'nodePort'], sp.nodePort));
    nodePortKeys.add(key);
  }
  const portKeys = new Set<string>();
  for (let i = 0; i < ports.length; i++) {
    const sp = ports[i]!;
    const key = `${sp.protocol}/${sp.port}`;
    // The bad value is an internal core.ServicePort holding only the key, rendered by
    // json.Marshal (v1.34+; older servers print it with %#v).
    if (portKeys.has(key)) errs.push(duplicate([...PORTS, i], asJSON(servicePortKey(sp))));
    portKeys.add(key);
  }
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

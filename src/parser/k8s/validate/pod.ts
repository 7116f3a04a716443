/**
 * Pod validation (pkg/apis/core/validation/validation.go), for the fields the EndpointSlice
 * controller reads: ValidatePodCreate's metadata, container names and ports
 * (validateContainerCommon, validateContainerPorts, the duplicate-name checks of
 * validateContainers and validateInitContainers), spec.nodeName, spec.hostname and
 * spec.subdomain; then, as for a Pod read back from a cluster (its status was written through
 * the status subresource), ValidatePodStatusUpdate's conditions and validatePodIPs. A status is
 * judged only when the rest passes: the create fails first.
 *
 * Not checked (kpc never reads them): images, volumes, probes, resources, security contexts,
 * scheduling fields and the rest of PodSpec, which kpc accepts as any JSON value.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { duplicate, internalError, invalid, notSupported, required } from '../field-errors.js';
import { asJSON, GoStruct } from '../go-format.js';
import type { CoreContainer, CorePod } from '../model/pod.js';
import type { ValidationContext } from './context.js';
import { hasErrors } from './context.js';
import { parsedIP, validateIP } from './ips.js';
import { isValidPortName, isValidPortNum, messagesAt, nameIsDNSSubdomain, validateDNS1123Label, validateQualifiedName } from './names.js';
import { validateObjectMeta } from './object-meta.js';
import { SUPPORTED_PROTOCOLS } from './service-ports.js';

/** validateContainerPorts: names are unique within one container. */
function validateContainerPorts(c: CoreContainer, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  c.ports.forEach((p, i) => {
    const idx: FieldPath = [...path, i];
    if (p.name.length > 0) {
      const msgs = isValidPortName(p.name);
      if (msgs.length > 0) errs.push(...messagesAt([...idx, 'name'], p.name, msgs));
      else if (names.has(p.name)) errs.push(duplicate([...idx, 'name'], p.name));
      else names.add(p.name);
    }
    if (p.containerPort === 0) errs.push(required([...idx, 'containerPort']));
    else for (const m of isValidPortNum(p.containerPort)) errs.push(invalid([...idx, 'containerPort'], p.containerPort, m));
    if (p.hostPort !== 0) for (const m of isValidPortNum(p.hostPort)) errs.push(invalid([...idx, 'hostPort'], p.hostPort, m));
    if (p.protocol.length === 0) errs.push(required([...idx, 'protocol']));
    else if (!SUPPORTED_PROTOCOLS.includes(p.protocol)) errs.push(notSupported([...idx, 'protocol'], asJSON(p.protocol), SUPPORTED_PROTOCOLS));
  });
  return errs;
}

/** The name and ports of validateContainerCommon. */
function validateContainer(c: CoreContainer, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (c.name.length === 0) errs.push(required([...path, 'name']));
  else errs.push(...validateDNS1123Label(c.name, [...path, 'name']));
  errs.push(...validateContainerPorts(c, [...path, 'ports']));
  return errs;
}

function validateContainers(pod: CorePod): FieldError[] {
  const path: FieldPath = ['spec', 'containers'];
  if (pod.spec.containers.length === 0) return [required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  pod.spec.containers.forEach((c, i) => {
    errs.push(...validateContainer(c, [...path, i]));
    if (names.has(c.name)) errs.push(duplicate([...path, i, 'name'], c.name));
    else names.add(c.name);
  });
  return errs;
}

/** validateInitContainers: names are unique across regular and init containers. */
function validateInitContainers(pod: CorePod): FieldError[] {
  const path: FieldPath = ['spec', 'initContainers'];
  const errs: FieldError[] = [];
  const names = new Set(pod.spec.containers.map((c) => c.name));
  pod.spec.initContainers.forEach((c, i) => {
    errs.push(...validateContainer(c, [...path, i]));
    if (names.has(c.name)) errs.push(duplicate([...path, i, 'name'], c.name));
    else if (c.name.length > 0) names.add(c.name);
  });
  return errs;
}

/** The part of ValidatePodSpec on spec.nodeName, hostname and subdomain. */
function validateNames(pod: CorePod): FieldError[] {
  const errs: FieldError[] = [];
  const { nodeName, hostname, subdomain } = pod.spec;
  if (nodeName.length > 0) for (const m of nameIsDNSSubdomain(nodeName, false)) errs.push(invalid(['spec', 'nodeName'], nodeName, m));
  if (hostname.length > 0) errs.push(...validateDNS1123Label(hostname, ['spec', 'hostname']));
  if (subdomain.length > 0) errs.push(...validateDNS1123Label(subdomain, ['spec', 'subdomain']));
  return errs;
}

const SYSTEM_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized']);

/** validatePodConditions. The path's `Type` is capitalised upstream. */
function validateConditions(pod: CorePod): FieldError[] {
  const errs: FieldError[] = [];
  pod.status.conditions.forEach((c, i) => {
    const idx: FieldPath = ['status', 'conditions', i];
    if (c.observedGeneration < 0) errs.push(invalid([...idx, 'observedGeneration'], c.observedGeneration, 'must be a non-negative integer'));
    if (SYSTEM_CONDITIONS.has(c.type)) return;
    errs.push(...validateQualifiedName(c.type, [...idx, 'Type']));
  });
  return errs;
}

/** validatePodIPs: each a valid IP (IsValidIPForLegacyField), at most one per family. */
function validatePodIPs(pod: CorePod, ctx: ValidationContext): FieldError[] {
  const path: FieldPath = ['status', 'podIPs'];
  const ips = pod.status.podIPs;
  const errs: FieldError[] = [];
  ips.forEach((ip, i) => errs.push(...validateIP([...path, i], ip, ctx.ipValidation)));
  if (ips.length > 1) {
    // netutils.IsDualStackIPStrings: an IP that does not parse is an error of its own.
    const bad = ips.findIndex((ip) => parsedIP(ip) === undefined);
    if (bad >= 0) errs.push(internalError(path, `failed to check for dual stack with error:invalid IP[${bad}]: ${ips[bad]}`));
    const families = new Set(ips.map((ip) => parsedIP(ip)?.family));
    const dualStack = bad < 0 && families.has('IPv4') && families.has('IPv6');
    if (!dualStack || ips.length > 2) {
      // The internal []core.PodIP, json.Marshal'ed with its Go field name.
      errs.push(invalid(path, asJSON(ips.map((ip) => new GoStruct([['IP', ip]]))), 'may specify no more than one IP for each IP family'));
    }
  }
  return errs;
}

export function validatePod(pod: CorePod, ctx: ValidationContext): FieldError[] {
  const create = [
    ...validateObjectMeta(pod.metadata, true, nameIsDNSSubdomain),
    ...validateContainers(pod),
    ...validateInitContainers(pod),
    ...validateNames(pod),
  ];
  if (hasErrors(create)) return create;
  return [...create, ...validateConditions(pod), ...validatePodIPs(pod, ctx)];
}

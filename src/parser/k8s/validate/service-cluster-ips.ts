/**
 * ValidateServiceClusterIPsRelatedFields (clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy)
 * and the spec.externalIPs loop of ValidateService.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { duplicate, invalid, notSupported, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import { CLUSTER_IP_NONE, isHeadless, type CoreService } from '../model/service.js';
import { hasErrors, type ValidationContext } from './context.js';
import { ipFamilyOf, validateEndpointIP, validateIP } from './ips.js';

const CLUSTER_IPS: FieldPath = ['spec', 'clusterIPs'];
const IP_FAMILIES: FieldPath = ['spec', 'ipFamilies'];

export const SUPPORTED_IP_FAMILIES = ['IPv4', 'IPv6'];
export const SUPPORTED_IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];

export function validateServiceClusterIPsRelatedFields(svc: CoreService, ctx: ValidationContext): FieldError[] {
  const spec = svc.spec;
  // ExternalName has its own checks (all of these must be unset).
  if (spec.type === 'ExternalName') return [];
  const errs: FieldError[] = [];
  let hasInvalidIPs = false;

  if (spec.clusterIP !== '') {
    if (spec.clusterIPs.length === 0) errs.push(required(CLUSTER_IPS));
    else if (spec.clusterIPs[0] !== spec.clusterIP) errs.push(invalid(CLUSTER_IPS, asJSON(spec.clusterIPs), 'first value must match `clusterIP`'));
  } else if (spec.clusterIPs.length !== 0) {
    errs.push(invalid(CLUSTER_IPS, asJSON(spec.clusterIPs), 'must be empty when `clusterIP` is not specified'));
  }

  // Runs twice per Service (see decode/service.ts), so plain loops, without a closure or a
  // spread path per item. A duplicate family is one seen earlier in the list (of two, usually one).
  for (let i = 0; i < spec.ipFamilies.length; i++) {
    const family = spec.ipFamilies[i]!;
    if (!SUPPORTED_IP_FAMILIES.includes(family)) errs.push(notSupported([...IP_FAMILIES, i], asJSON(family), SUPPORTED_IP_FAMILIES));
    if (spec.ipFamilies.indexOf(family) < i) errs.push(duplicate([...IP_FAMILIES, i], asJSON(family)));
  }

  if (spec.ipFamilyPolicy !== undefined && !SUPPORTED_IP_FAMILY_POLICIES.includes(spec.ipFamilyPolicy)) {
    errs.push(notSupported(['spec', 'ipFamilyPolicy'], asJSON(spec.ipFamilyPolicy), SUPPORTED_IP_FAMILY_POLICIES));
  }

  for (let i = 0; i < spec.clusterIPs.length; i++) {
    const ip = spec.clusterIPs[i]!;
    if (i === 0 && ip === CLUSTER_IP_NONE) {
      if (spec.clusterIPs.length > 1) {
        hasInvalidIPs = true;
        errs.push(invalid(CLUSTER_IPS, asJSON(spec.clusterIPs), "'None' must be the first and only value"));
      }
      continue;
    }
    const ipErrs = validateIP(['spec', 'clusterIPs', i], ip, ctx.ipValidation);
    hasInvalidIPs = hasErrors(ipErrs) || hasInvalidIPs;
    errs.push(...ipErrs);
  }

  if (spec.clusterIPs.length > 2) errs.push(invalid(CLUSTER_IPS, asJSON(spec.clusterIPs), 'may only hold up to 2 values'));

  // A bad IP or a misplaced None would skew the remaining messages, so upstream stops here.
  if (hasInvalidIPs) return errs;

  if (spec.clusterIPs.length > 1) {
    // netutils.IsDualStackIPStrings: at least one IP of each family (all IPs parse by now).
    const families = spec.clusterIPs.map(ipFamilyOf);
    if (!(families.includes('IPv4') && families.includes('IPv6'))) {
      errs.push(invalid(CLUSTER_IPS, asJSON(spec.clusterIPs), 'may specify no more than one IP for each IP family'));
    }
  }

  if (!isHeadless(svc) && spec.clusterIPs.length > 0 && spec.ipFamilies.length > 0) {
    // An IP without a family at its index is not checked against one.
    for (let i = 0; i < spec.clusterIPs.length && i < spec.ipFamilies.length; i++) {
      const ip = spec.clusterIPs[i]!;
      const isV6 = ipFamilyOf(ip) === 'IPv6';
      if (spec.ipFamilies[i] === 'IPv4' && isV6) errs.push(invalid([...CLUSTER_IPS, i], ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (spec.ipFamilies[i] === 'IPv6' && !isV6) errs.push(invalid([...CLUSTER_IPS, i], ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    }
  }
  return errs;
}

/** Each externalIP must be an IP, and then not a special address. */
export function validateExternalIPs(svc: CoreService, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  for (let i = 0; i < svc.spec.externalIPs.length; i++) {
    const ip = svc.spec.externalIPs[i]!;
    const path: FieldPath = ['spec', 'externalIPs', i];
    const ipErrs = validateIP(path, ip, ctx.ipValidation);
    errs.push(...ipErrs);
    if (!hasErrors(ipErrs)) errs.push(...validateEndpointIP(path, ip));
  }
  return errs;
}

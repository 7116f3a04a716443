/**
 * Traffic-steering fields of ValidateService: externalTrafficPolicy with healthCheckNodePort
 * (validateServiceExternalTrafficPolicy), internalTrafficPolicy, trafficDistribution, and the
 * topology annotations.
 */

import type { FieldError } from '../../../diagnostics.js';
import { invalid, notSupported, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import { isExternallyAccessible, needsHealthCheck, TOPOLOGY_HINTS_ANNOTATION, TOPOLOGY_MODE_ANNOTATION, type CoreService } from '../model/service.js';
import type { ValidationContext } from './context.js';
import { isValidPortNum } from './names.js';

export const TRAFFIC_POLICIES = ['Cluster', 'Local'];
/**
 * PreferSameZone and PreferSameNode came with PreferSameTrafficDistribution (beta, on by default
 * from v1.34); the v1.33 code read accepted only PreferClose. In validateServiceTrafficDistribution's
 * order, not sorted.
 */
export const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameZone', 'PreferSameNode'];


export function validateTopologyAnnotations(svc: CoreService): FieldError[] {
  const a = svc.metadata.annotations;
  if (TOPOLOGY_MODE_ANNOTATION in a && TOPOLOGY_HINTS_ANNOTATION in a && a[TOPOLOGY_MODE_ANNOTATION] !== a[TOPOLOGY_HINTS_ANNOTATION]) {
    return [
      invalid(['metadata', 'annotations', { key: TOPOLOGY_MODE_ANNOTATION }], a[TOPOLOGY_MODE_ANNOTATION]!, `must match annotations[${TOPOLOGY_HINTS_ANNOTATION}] when both are specified`),
    ];
  }
  return [];
}

export function validateExternalTrafficPolicy(svc: CoreService, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  const etp = svc.spec.externalTrafficPolicy;
  if (!isExternallyAccessible(svc)) {
    if (etp !== '') errs.push(invalid(['spec', 'externalTrafficPolicy'], asJSON(etp), 'may only be set for externally-accessible services'));
  } else if (etp === '') {
    errs.push(required(['spec', 'externalTrafficPolicy']));
  } else if (!TRAFFIC_POLICIES.includes(etp)) {
    errs.push(notSupported(['spec', 'externalTrafficPolicy'], asJSON(etp), TRAFFIC_POLICIES));
  }

  const hc = svc.spec.healthCheckNodePort;
  if (!needsHealthCheck(svc)) {
    if (hc !== 0) errs.push(invalid(['spec', 'healthCheckNodePort'], hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (hc === 0) {
    // The registry allocates it before validation; offline the allocation step has warned.
    if (!ctx.offlineAllocation) errs.push(required(['spec', 'healthCheckNodePort']));
  } else {
    for (const m of isValidPortNum(hc)) errs.push(invalid(['spec', 'healthCheckNodePort'], hc, m));
  }
  return errs;
}

export function validateInternalTrafficPolicy(svc: CoreService): FieldError[] {
  const itp = svc.spec.internalTrafficPolicy;
  if (itp === undefined) {
    // Not forbidden for ExternalName "because of historical reasons".
    return ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(svc.spec.type) ? [required(['spec', 'internalTrafficPolicy'])] : [];
  }
  return TRAFFIC_POLICIES.includes(itp) ? [] : [notSupported(['spec', 'internalTrafficPolicy'], asJSON(itp), TRAFFIC_POLICIES)];
}

export function validateTrafficDistribution(svc: CoreService): FieldError[] {
  const td = svc.spec.trafficDistribution;
  if (td === undefined || TRAFFIC_DISTRIBUTIONS.includes(td)) return [];
  return [notSupported(['spec', 'trafficDistribution'], td, TRAFFIC_DISTRIBUTIONS)];
}

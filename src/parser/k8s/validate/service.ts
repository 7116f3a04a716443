/**
 * ValidateService (pkg/apis/core/validation/validation.go), rule group by rule group in the
 * upstream order, so errors come out in the order the API server lists them.
 */

import type { FieldError } from '../../../diagnostics.js';
import { forbidden, invalid, notSupported, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import { isHeadless, type CoreService } from '../model/service.js';
import { hasErrors, type ValidationContext } from './context.js';
import { validateLabels } from './labels.js';
import { nameIsDNS1035Label, nameIsDNSLabel, validateDNS1123Subdomain } from './names.js';
import { validateObjectMeta } from './object-meta.js';
import { validateExternalIPs, validateServiceClusterIPsRelatedFields } from './service-cluster-ips.js';
import { validateAllocateLoadBalancerNodePorts, validateLoadBalancerClass, validateLoadBalancerStatus, validateSourceRanges } from './service-load-balancer.js';
import { validateClusterIPNodePorts, validateDuplicatePorts, validateServicePorts } from './service-ports.js';
import { validateSessionAffinity } from './service-session-affinity.js';
import {
  validateExternalTrafficPolicy,
  validateInternalTrafficPolicy,
  validateTopologyAnnotations,
  validateTrafficDistribution,
} from './service-traffic.js';

/** sets.List(supportedServiceType). */
export const SUPPORTED_SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

/** The `switch service.Spec.Type` block: headless NodePort/LoadBalancer, ExternalName fields. */
function validateTypeSpecificFields(svc: CoreService): FieldError[] {
  const spec = svc.spec;
  const errs: FieldError[] = [];
  switch (spec.type) {
    case 'LoadBalancer':
    case 'NodePort':
      if (isHeadless(svc)) {
        errs.push(invalid(['spec', 'clusterIPs', 0], spec.clusterIPs[0]!, `may not be set to 'None' for ${spec.type} services`));
      }
      break;
    case 'ExternalName': {
      if (spec.clusterIPs.length > 0) errs.push(forbidden(['spec', 'clusterIPs'], 'may not be set for ExternalName services'));
      if (spec.ipFamilies.length > 0) errs.push(forbidden(['spec', 'ipFamilies'], 'may not be set for ExternalName services'));
      if (spec.ipFamilyPolicy !== undefined) errs.push(forbidden(['spec', 'ipFamilyPolicy'], 'may not be set for ExternalName services'));
      // A CNAME may end in a dot to mark it fully qualified.
      const cname = spec.externalName.endsWith('.') ? spec.externalName.slice(0, -1) : spec.externalName;
      if (cname.length > 0) errs.push(...validateDNS1123Subdomain(cname, ['spec', 'externalName']));
      else errs.push(required(['spec', 'externalName']));
      break;
    }
  }
  return errs;
}

function validateType(svc: CoreService): FieldError[] {
  if (svc.spec.type === '') return [required(['spec', 'type'])];
  if (!SUPPORTED_SERVICE_TYPES.includes(svc.spec.type)) return [notSupported(['spec', 'type'], asJSON(svc.spec.type), SUPPORTED_SERVICE_TYPES)];
  return [];
}

/** ValidateService on the defaulted object, then (when it passes) ValidateLoadBalancerStatus on its status. */
export function validateService(svc: CoreService, ctx: ValidationContext): FieldError[] {
  const spec = svc.spec;
  const errs: FieldError[] = [];
  // ValidateServiceCreate: KEP-5311's relaxed names (apimachinery NameIsDNSLabel) when the gate is on.
  errs.push(...validateObjectMeta(svc.metadata, true, ctx.relaxedServiceNames ? nameIsDNSLabel : nameIsDNS1035Label));
  errs.push(...validateTopologyAnnotations(svc));
  if (spec.ports.length === 0 && !isHeadless(svc) && spec.type !== 'ExternalName') errs.push(required(['spec', 'ports']));
  errs.push(...validateTypeSpecificFields(svc));
  errs.push(...validateServicePorts(svc));
  if (spec.selector !== undefined) errs.push(...validateLabels(spec.selector, ['spec', 'selector']));
  errs.push(...validateSessionAffinity(svc));
  errs.push(...validateServiceClusterIPsRelatedFields(svc, ctx));
  errs.push(...validateExternalIPs(svc, ctx));
  errs.push(...validateType(svc));
  errs.push(...validateClusterIPNodePorts(svc));
  errs.push(...validateDuplicatePorts(svc));
  errs.push(...validateSourceRanges(svc, ctx));
  errs.push(...validateAllocateLoadBalancerNodePorts(svc));
  errs.push(...validateLoadBalancerClass(svc));
  errs.push(...validateExternalTrafficPolicy(svc, ctx));
  errs.push(...validateInternalTrafficPolicy(svc));
  errs.push(...validateTrafficDistribution(svc));
  // The status is written through its own subresource once the create succeeded: a Service
  // whose spec fails never has its status judged.
  if (!hasErrors(errs)) errs.push(...validateLoadBalancerStatus(svc, ctx));
  return errs;
}

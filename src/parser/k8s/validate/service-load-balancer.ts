/**
 * LoadBalancer-only fields: spec.loadBalancerSourceRanges (or its annotation),
 * spec.allocateLoadBalancerNodePorts, spec.loadBalancerClass, and status.loadBalancer
 * (ValidateLoadBalancerStatus, the status path kube-proxy reads from).
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { forbidden, invalid, notSupported, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import type { CoreService } from '../model/service.js';
import type { ValidationContext } from './context.js';
import { parsedIP, validateCIDR, validateIP } from './ips.js';
import { isDNS1123Subdomain, validateQualifiedName } from './names.js';
import { goTrimSpace } from '../../../go/strings.js';

export const LB_SOURCE_RANGES_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-source-ranges';
export const SUPPORTED_IP_MODES = ['Proxy', 'VIP'];

const LB_ONLY = "may only be used when `type` is 'LoadBalancer'";


export function validateSourceRanges(svc: CoreService, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  const isLB = svc.spec.type === 'LoadBalancer';
  if (svc.spec.loadBalancerSourceRanges.length > 0) {
    // Capitalised: a historical bug in ValidateService that clients may match on.
    const path: FieldPath = ['spec', 'LoadBalancerSourceRanges'];
    if (!isLB) errs.push(forbidden(path, LB_ONLY));
    svc.spec.loadBalancerSourceRanges.forEach((value, i) => {
      // Space padding is allowed, "due to a historical accident around transition from the annotation".
      errs.push(...validateCIDR([...path, i], goTrimSpace(value), ctx.ipValidation));
    });
  } else if (LB_SOURCE_RANGES_ANNOTATION in svc.metadata.annotations) {
    const path: FieldPath = ['metadata', 'annotations', { key: LB_SOURCE_RANGES_ANNOTATION }];
    if (!isLB) errs.push(forbidden(path, LB_ONLY));
    const val = goTrimSpace(svc.metadata.annotations[LB_SOURCE_RANGES_ANNOTATION]!);
    if (val !== '') for (const cidr of val.split(',')) errs.push(...validateCIDR(path, goTrimSpace(cidr), ctx.ipValidation));
  }
  return errs;
}

export function validateAllocateLoadBalancerNodePorts(svc: CoreService): FieldError[] {
  const errs: FieldError[] = [];
  const isLB = svc.spec.type === 'LoadBalancer';
  if (svc.spec.allocateLoadBalancerNodePorts !== undefined && !isLB) {
    errs.push(forbidden(['spec', 'allocateLoadBalancerNodePorts'], LB_ONLY));
  }
  // No `spec.` prefix: upstream builds this path with field.NewPath("allocateLoadBalancerNodePorts").
  // Unreachable through v1, where defaulting sets it to true.
  if (isLB && svc.spec.allocateLoadBalancerNodePorts === undefined) errs.push(required(['allocateLoadBalancerNodePorts']));
  return errs;
}

export function validateLoadBalancerClass(svc: CoreService): FieldError[] {
  const cls = svc.spec.loadBalancerClass;
  if (cls === undefined) return [];
  if (svc.spec.type === 'LoadBalancer') return validateQualifiedName(cls, ['spec', 'loadBalancerClass']);
  return [forbidden(['spec', 'loadBalancerClass'], LB_ONLY)];
}

/** ValidateLoadBalancerStatus, with AllowServiceLBStatusOnNonLB off (its default). */
export function validateLoadBalancerStatus(svc: CoreService, ctx: ValidationContext): FieldError[] {
  const ingressPath: FieldPath = ['status', 'loadBalancer', 'ingress'];
  const ingress = svc.status.loadBalancer.ingress;
  if (svc.spec.type !== 'LoadBalancer' && ingress.length !== 0) {
    return [forbidden(ingressPath, "may only be used when `spec.type` is 'LoadBalancer'")];
  }
  const errs: FieldError[] = [];
  ingress.forEach((ing, i) => {
    const p: FieldPath = [...ingressPath, i];
    if (ing.ip !== '') errs.push(...validateIP([...p, 'ip'], ing.ip, ctx.ipValidation));
    if (ing.ipMode === undefined) {
      if (ing.ip !== '') errs.push(required([...p, 'ipMode'], 'must be specified when `ip` is set'));
    } else if (ing.ip === '') {
      errs.push(forbidden([...p, 'ipMode'], 'may not be specified when `ip` is not set'));
    } else if (!SUPPORTED_IP_MODES.includes(ing.ipMode)) {
      errs.push(notSupported([...p, 'ipMode'], asJSON(ing.ipMode), SUPPORTED_IP_MODES));
    }
    if (ing.hostname !== '') {
      for (const msg of isDNS1123Subdomain(ing.hostname)) errs.push(invalid([...p, 'hostname'], ing.hostname, msg));
      if (parsedIP(ing.hostname) !== undefined) errs.push(invalid([...p, 'hostname'], ing.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

/**
 * The registry's initIPFamilyFields (pkg/registry/core/service/storage/alloc.go), as far as it
 * can run without the cluster: the ipFamilyPolicy default, the SingleStack consistency checks,
 * and ipFamilies inferred from clusterIPs. What needs the cluster's --service-cluster-ip-range
 * (the default family, "not configured on this cluster", dual-stack support) is skipped: kpc
 * never invents a family.
 */

import type { FieldError } from '../../../diagnostics.js';
import { invalid } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import { CLUSTER_IP_NONE, type CoreService } from '../model/service.js';
import { ipFamilyOf } from '../validate/ips.js';

const POLICY_PATH = ['spec', 'ipFamilyPolicy'];

/**
 * Runs after defaults. `clusterIPFieldsValid` is the outcome of the loose pre-validation
 * (ValidateServiceClusterIPsRelatedFields): upstream stops here when it fails, and the main
 * validation reports those errors.
 */
export function initIPFamilyFields(svc: CoreService, clusterIPFieldsValid: boolean): FieldError[] {
  const spec = svc.spec;
  if (spec.type === 'ExternalName') return [];
  const headlessSelectorless = spec.clusterIP === CLUSTER_IP_NONE && Object.keys(spec.selector ?? {}).length === 0;
  if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = headlessSelectorless ? 'RequireDualStack' : 'SingleStack';
  if (!clusterIPFieldsValid) return [];

  const errs: FieldError[] = [];
  if (spec.ipFamilyPolicy === 'SingleStack') {
    if (spec.clusterIPs.length === 2) {
      errs.push(invalid(POLICY_PATH, asJSON(spec.ipFamilyPolicy), "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
    }
    if (spec.ipFamilies.length === 2) {
      errs.push(invalid(POLICY_PATH, asJSON(spec.ipFamilyPolicy), "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
  }
  spec.clusterIPs.forEach((ip, i) => {
    if (ip === CLUSTER_IP_NONE) return;
    const family = ipFamilyOf(ip);
    if (family !== undefined && i >= spec.ipFamilies.length) spec.ipFamilies.push(family);
  });
  if (errs.length > 0) return errs;

  // Headless and selectorless: a dual-stack policy gets the other family, even on a
  // single-stack cluster (the one case that needs no cluster configuration).
  if (headlessSelectorless && spec.ipFamilies.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') {
    spec.ipFamilies.push(spec.ipFamilies[0] === 'IPv4' ? 'IPv6' : 'IPv4');
  }
  return [];
}

/**
 * A v1 Service through the API server's create pipeline: strict decode, SetDefaults_Service,
 * the registry's normalizeClusterIPs and initIPFamilyFields, allocation (offline: checked, not
 * performed), ValidateService, and the warnings of GetWarningsForService.
 */

import { defaultsAndValidation } from './steps.js';
import { normalizeClusterIPs, setServiceDefaults } from '../defaults/service.js';
import { initIPFamilyFields } from '../defaults/service-ip-families.js';
import { Report } from '../field-errors.js';
import { toKubeService } from '../kube-objects.js';
import { serviceSchema, toCoreService } from '../schema/service.js';
import { hasErrors, type ValidationContext } from '../validate/context.js';
import { validateService } from '../validate/service.js';
import { allocateClusterIPs, allocateNodePorts, requireClusterIP } from '../validate/service-allocation.js';
import { validateServiceClusterIPsRelatedFields } from '../validate/service-cluster-ips.js';
import { serviceWarnings } from '../validate/service-warnings.js';
import type { DecodeOptions } from './options.js';
import { fromReport, type DecodeResult } from './result.js';

export function decodeService(raw: unknown, opts: DecodeOptions): DecodeResult {
  return defaultsAndValidation(serviceSchema, raw, (wire) => {
    const svc = toCoreService(wire);
    setServiceDefaults(svc);
    normalizeClusterIPs(svc);
    const ctx: ValidationContext = { ipValidation: opts.ipValidation, offlineAllocation: true, relaxedServiceNames: opts.relaxedServiceNames === true };
    const report = new Report();
    // initIPFamilyFields stops when the loose pre-validation fails; the same errors are
    // reported once, by ValidateService below.
    const clusterIPFieldsValid = !hasErrors(validateServiceClusterIPsRelatedFields(svc, ctx));
    report.add(...initIPFamilyFields(svc, clusterIPFieldsValid));
    if (clusterIPFieldsValid) report.add(...allocateClusterIPs(svc));
    report.add(...allocateNodePorts(svc, opts.nodePortRange));
    report.add(...requireClusterIP(svc));
    report.add(...validateService(svc, ctx));
    report.add(...serviceWarnings(svc));
    return fromReport(report, () => toKubeService(svc));
  });
}

/** A legacy v1 Endpoints: strict decode, SetDefaults_Endpoints, ValidateEndpoints. */

import { setEndpointsDefaults } from '../defaults/endpoints.js';
import { Report } from '../field-errors.js';
import { toKubeEndpoints } from '../kube-objects.js';
import { endpointsSchema, toCoreEndpoints } from '../schema/endpoints.js';
import { endpointsWarnings, validateEndpoints } from '../validate/endpoints.js';
import type { DecodeOptions } from './options.js';
import { fromReport, type DecodeResult } from './result.js';
import { defaultsAndValidation } from './steps.js';

export function decodeEndpoints(raw: unknown, opts: DecodeOptions): DecodeResult {
  return defaultsAndValidation(endpointsSchema, raw, (wire) => {
    const ep = toCoreEndpoints(wire);
    setEndpointsDefaults(ep);
    const report = new Report();
    report.add(...validateEndpoints(ep, { ipValidation: opts.ipValidation, offlineAllocation: true }));
    report.add(...endpointsWarnings());
    return fromReport(report, () => toKubeEndpoints(ep));
  });
}

/** A discovery.k8s.io/v1 EndpointSlice: strict decode, defaults, ValidateEndpointSlice. */

import { setEndpointSliceDefaults } from '../defaults/endpoint-slice.js';
import { Report } from '../field-errors.js';
import { toKubeEndpointSlice } from '../kube-objects.js';
import { endpointSliceSchema, toCoreEndpointSlice } from '../schema/endpoint-slice.js';
import { endpointSliceWarnings, validateEndpointSlice } from '../validate/endpoint-slice.js';
import type { DecodeOptions } from './options.js';
import { fromReport, type DecodeResult } from './result.js';
import { defaultsAndValidation } from './steps.js';

export function decodeEndpointSlice(raw: unknown, opts: DecodeOptions): DecodeResult {
  return defaultsAndValidation(endpointSliceSchema, raw, (wire) => {
    const slice = toCoreEndpointSlice(wire);
    setEndpointSliceDefaults(slice);
    const report = new Report();
    report.add(...validateEndpointSlice(slice, { ipValidation: opts.ipValidation, offlineAllocation: true }));
    report.add(...endpointSliceWarnings(slice));
    return fromReport(report, () => toKubeEndpointSlice(slice));
  });
}

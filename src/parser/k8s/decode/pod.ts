/** A v1 Pod: strict decode, the v1 defaults and pod-IP conversion, Pod validation (validate/pod.ts). */

import { setPodDefaults } from '../defaults/pod.js';
import { Report } from '../field-errors.js';
import { toKubePod } from '../kube-objects.js';
import { podSchema, toCorePod } from '../schema/pod.js';
import { validatePod } from '../validate/pod.js';
import type { DecodeOptions } from './options.js';
import { fromReport, type DecodeResult } from './result.js';
import { defaultsAndValidation } from './steps.js';

export function decodePod(raw: unknown, opts: DecodeOptions): DecodeResult {
  return defaultsAndValidation(podSchema, raw, (wire) => {
    const pod = setPodDefaults(toCorePod(wire));
    const report = new Report();
    report.add(...validatePod(pod, { ipValidation: opts.ipValidation, offlineAllocation: true }));
    return fromReport(report, () => toKubePod(pod));
  });
}

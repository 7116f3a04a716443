/** A v1 Node: strict decode, the v1 podCIDR conversion, ValidateNode and kpc's address checks. */

import { setNodeDefaults } from '../defaults/node.js';
import { Report } from '../field-errors.js';
import { toKubeNode } from '../kube-objects.js';
import { nodeSchema, toCoreNode } from '../schema/node.js';
import { validateNode } from '../validate/node.js';
import type { DecodeOptions } from './options.js';
import { fromReport, type DecodeResult } from './result.js';
import { defaultsAndValidation } from './steps.js';

export function decodeNode(raw: unknown, opts: DecodeOptions): DecodeResult {
  return defaultsAndValidation(nodeSchema, raw, (wire) => {
    const node = toCoreNode(wire);
    const report = new Report();
    report.add(...setNodeDefaults(node));
    report.add(...validateNode(node, { ipValidation: opts.ipValidation, offlineAllocation: true }));
    return fromReport(report, () => toKubeNode(node));
  });
}

/**
 * A networking.k8s.io/v1 ServiceCIDR: the cluster's Service ranges. kube-proxy's nftables mode
 * reads spec.cidrs (ServiceCIDRConfig, OnServiceCIDRsChanged) to drop traffic to unallocated
 * ClusterIPs. Strict decode, and ValidateServiceCIDR (pkg/apis/networking/validation): the
 * name a DNS subdomain, 1 or 2 CIDRs, valid, at most one of each family. Cluster-scoped: a
 * namespace is cleared, as BeforeCreate does.
 */

import { z } from 'zod';
import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { fieldWarning } from '../../../diagnostics.js';
import { parseCIDR } from '../../../net/ip.js';
import { invalid, Report, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import { meta } from '../kube-objects.js';
import type { CoreObjectMeta } from '../model/meta.js';
import { objectMetaSchema, toCoreObjectMeta } from '../schema/meta.js';
import { anything, stringList, struct } from '../schema/primitives.js';
import type { ServiceCIDR } from '../types.js';
import type { ValidationContext } from '../validate/context.js';
import { validateCIDR } from '../validate/ips.js';
import { nameIsDNSSubdomain } from '../validate/names.js';
import { validateObjectMeta } from '../validate/object-meta.js';
import type { DecodeOptions } from './options.js';
import { fromReport, type DecodeResult } from './result.js';
import { defaultsAndValidation } from './steps.js';

const serviceCIDRSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  spec: struct({ cidrs: stringList() }),
  status: anything(),
});

interface CoreServiceCIDR {
  metadata: CoreObjectMeta;
  cidrs: string[];
}

function validateServiceCIDR(s: CoreServiceCIDR, ctx: ValidationContext): FieldError[] {
  const errs = validateObjectMeta(s.metadata, false, nameIsDNSSubdomain);
  const path: FieldPath = ['spec', 'cidrs'];
  if (s.cidrs.length === 0) return [...errs, { ...required(path), message: `${required(path).message}: at least one CIDR required` }];
  if (s.cidrs.length > 2) return [...errs, invalid(path, asJSON({ cidrs: s.cidrs }), 'may only hold up to 2 values')];
  s.cidrs.forEach((c, i) => errs.push(...validateCIDR([...path, i], c, ctx.ipValidation)));
  if (s.cidrs.length === 2) {
    const [a, b] = s.cidrs.map((c) => parseCIDR(c)?.cidr.ip.family);
    if (a !== undefined && a === b) errs.push(invalid(path, asJSON(s.cidrs), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'));
  }
  return errs;
}

export function decodeServiceCIDR(raw: unknown, opts: DecodeOptions): DecodeResult {
  return defaultsAndValidation(serviceCIDRSchema, raw, (wire) => {
    const s: CoreServiceCIDR = { metadata: toCoreObjectMeta(wire.metadata), cidrs: [...(wire.spec?.cidrs ?? [])] };
    const report = new Report();
    if (s.metadata.namespace !== '') {
      report.add(fieldWarning(['metadata', 'namespace'], `ignored: ServiceCIDR is cluster-scoped, so the API server clears the namespace (${JSON.stringify(s.metadata.namespace)})`));
      s.metadata.namespace = '';
    }
    report.add(...validateServiceCIDR(s, { ipValidation: opts.ipValidation, offlineAllocation: true }));
    return fromReport(report, (): ServiceCIDR => ({ kind: 'ServiceCIDR', metadata: meta(s.metadata), spec: { cidrs: s.cidrs } }));
  });
}


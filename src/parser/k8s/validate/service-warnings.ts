/**
 * GetWarningsForService (pkg/api/service/warnings.go): things the API server accepts but warns
 * about. Each warning points at its field so it can be located; the text is upstream's sentence.
 * IP and CIDR format warnings come from ips.ts with the field checks themselves.
 */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { fieldWarning } from '../../../diagnostics.js';
import { formatIP, parseIP } from '../../../net/ip.js';
import { goQuote } from '../go-format.js';
import type { CoreService } from '../model/service.js';
import { ipStrictness } from './ips.js';
import { TOPOLOGY_HINTS_ANNOTATION, TOPOLOGY_MODE_ANNOTATION } from '../model/service.js';

/** warnings.go's own isHeadlessService: type ClusterIP and clusterIP None. */
function isHeadlessForWarnings(svc: CoreService): boolean {
  return svc.spec.type === 'ClusterIP' && svc.spec.clusterIP === 'None';
}

/**
 * GetWarningsForIP, for spec.loadBalancerIP (no validation rule reads that field, so its
 * format problems only ever show up as warnings).
 */
function ipFormatWarnings(path: FieldPath, value: string): FieldError[] {
  const p = parseIP(value);
  if (!p) return [];
  if (ipStrictness(value) !== undefined) {
    return [fieldWarning(path, `non-standard IP address ${goQuote(value)} will be considered invalid in a future Kubernetes release: use ${goQuote(formatIP(p.ip))}`)];
  }
  if (p.sloppy === 'non-canonical') {
    return [fieldWarning(path, `IPv6 address ${goQuote(value)} should be in RFC 5952 canonical format (${goQuote(formatIP(p.ip))})`)];
  }
  return [];
}

export function serviceWarnings(svc: CoreService): FieldError[] {
  const spec = svc.spec;
  const w: FieldError[] = [];
  if (TOPOLOGY_HINTS_ANNOTATION in svc.metadata.annotations) {
    w.push(fieldWarning(['metadata', 'annotations', { key: TOPOLOGY_HINTS_ANNOTATION }], `annotation ${TOPOLOGY_HINTS_ANNOTATION} is deprecated, please use ${TOPOLOGY_MODE_ANNOTATION} instead`));
  }
  const headless = isHeadlessForWarnings(svc);
  if (headless) {
    if (spec.loadBalancerIP !== '') w.push(fieldWarning(['spec', 'loadBalancerIP'], 'spec.loadBalancerIP is ignored for headless services'));
    if (spec.externalIPs.length > 0) w.push(fieldWarning(['spec', 'externalIPs'], 'spec.externalIPs is ignored for headless services'));
    if (spec.sessionAffinity !== 'None') w.push(fieldWarning(['spec', 'sessionAffinity'], 'spec.SessionAffinity is ignored for headless services'));
  }
  if (spec.externalIPs.length > 0 && !headless && spec.type !== 'ExternalName') {
    w.push(fieldWarning(['spec', 'externalIPs'], 'spec.externalIPs is deprecated and may no longer be implemented in some clusters'));
  }
  if (spec.loadBalancerIP !== '') w.push(...ipFormatWarnings(['spec', 'loadBalancerIP'], spec.loadBalancerIP));
  if (spec.type === 'ExternalName' && spec.externalIPs.length > 0) {
    w.push(fieldWarning(['spec', 'externalIPs'], 'spec.externalIPs is ignored when spec.type is "ExternalName"'));
  }
  if (spec.type !== 'ExternalName' && spec.externalName !== '') {
    w.push(fieldWarning(['spec', 'externalName'], 'spec.externalName is ignored when spec.type is not "ExternalName"'));
  }
  if (spec.trafficDistribution === 'PreferClose') {
    w.push(fieldWarning(['spec', 'trafficDistribution'], '"PreferClose" is deprecated; use "PreferSameZone"'));
  }
  return w;
}

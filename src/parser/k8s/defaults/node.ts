/**
 * What the API server does to a Node before validating it: the v1 conversion fills podCIDRs
 * from the singular podCIDR when podCIDRs is empty (the internal type has only the list), and
 * BeforeCreate clears the namespace of a cluster-scoped object instead of rejecting it.
 */

import type { FieldError } from '../../../diagnostics.js';
import { fieldWarning } from '../../../diagnostics.js';
import type { CoreNode } from '../model/node.js';

export function setNodeDefaults(node: CoreNode): FieldError[] {
  const warnings: FieldError[] = [];
  if (node.metadata.namespace !== '') {
    warnings.push(fieldWarning(['metadata', 'namespace'], `ignored: Node is cluster-scoped, so the API server clears the namespace (${JSON.stringify(node.metadata.namespace)})`));
    node.metadata.namespace = '';
  }
  if (node.spec.podCIDRs.length === 0 && node.spec.podCIDR !== '') node.spec.podCIDRs = [node.spec.podCIDR];
  else if (node.spec.podCIDR !== '' && node.spec.podCIDR !== node.spec.podCIDRs[0]) {
    warnings.push(fieldWarning(['spec', 'podCIDR'], `ignored: does not match spec.podCIDRs[0] (${JSON.stringify(node.spec.podCIDRs[0])}), which the API server keeps`));
  }
  return warnings;
}

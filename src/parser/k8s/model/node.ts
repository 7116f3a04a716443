/** core.Node as the API server's validation sees it (only what kpc checks or reads). */

import type { CoreObjectMeta, TypeMeta } from './meta.js';

/** v1.LabelTopologyZone: a Node's zone (topology hints, kube-proxy's own zone). */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

export interface CoreTaint {
  key: string;
  value: string;
  effect: string;
}

export interface CoreNode extends TypeMeta {
  metadata: CoreObjectMeta;
  spec: {
    /** The v1 singular field as written; the internal type keeps only podCIDRs. */
    podCIDR: string;
    podCIDRs: string[];
    taints: CoreTaint[];
  };
  status: {
    addresses: Array<{ type: string; address: string }>;
    /** Quantities as written (a JSON number as its text). */
    allocatable: Record<string, string>;
    conditions: Array<{ type: string; status: string }>;
  };
}


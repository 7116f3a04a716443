/**
 * core.Pod as the API server's validation sees it: only what kpc checks or what the
 * EndpointSlice controller reads (labels, deletionTimestamp, nodeName, hostname, subdomain,
 * container ports, phase, the Ready condition, podIPs). Go zero values for absent fields.
 */

import type { CoreObjectMeta, TypeMeta } from './meta.js';

export interface CoreContainerPort {
  name: string;
  /** 0 when not set. */
  hostPort: number;
  /** 0 when not set (an error: Required). */
  containerPort: number;
  /** '' until defaulted to TCP. */
  protocol: string;
}

export interface CoreContainer {
  name: string;
  ports: CoreContainerPort[];
  /** Init containers only: `Always` makes a sidecar, whose ports a named targetPort also finds. */
  restartPolicy?: string;
}

export interface CorePodCondition {
  type: string;
  status: string;
  /** 0 when not set. */
  observedGeneration: number;
}

export interface CorePod extends TypeMeta {
  metadata: CoreObjectMeta;
  spec: {
    nodeName: string;
    hostname: string;
    subdomain: string;
    containers: CoreContainer[];
    initContainers: CoreContainer[];
  };
  status: {
    phase: string;
    conditions: CorePodCondition[];
    /** The internal type has only podIPs; the v1 podIP is reconciled into it (defaults/pod.ts). */
    podIPs: string[];
  };
}

/** What decoding needs to know about the cluster kpc compiles for. */

import type { IPValidation } from '../validate/ips.js';

export interface DecodeOptions {
  /** legacy (the kpc default, as clusters up to v1.35): sloppy IPs/CIDRs accepted with a warning. */
  ipValidation: IPValidation;
  /** The cluster's --service-node-port-range (kube-apiserver default 30000-32767). */
  nodePortRange: { min: number; max: number };
}

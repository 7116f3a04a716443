/** What decoding needs to know about the cluster kpc compiles for. */

import type { IPValidation } from '../validate/ips.js';

export interface DecodeOptions {
  /** legacy (the kpc default, as clusters up to v1.35): sloppy IPs/CIDRs accepted with a warning. */
  ipValidation: IPValidation;
  /** The cluster's --service-node-port-range (kube-apiserver default 30000-32767). */
  nodePortRange: { min: number; max: number };
  /**
   * The API server's RelaxedServiceNameValidation (KEP-5311; beta and on from v1.36): a Service's
   * name is a DNS-1123 label, not a DNS-1035 one (it may start with a digit). Off when absent.
   */
  relaxedServiceNames?: boolean;
}

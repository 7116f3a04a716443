/** Settings every validator may need. */

import type { IPValidation } from './ips.js';

export interface ValidationContext {
  /** legacy (clusters up to v1.35): sloppy IPs and CIDRs are accepted with a warning; strict: errors. */
  ipValidation: IPValidation;
  /**
   * True when the object went through kpc's offline allocation step, which cannot allocate:
   * fields the registry would have filled in (healthCheckNodePort) are then not required here,
   * because the allocation step already reported them.
   */
  offlineAllocation: boolean;
  /** RelaxedServiceNameValidation: a Service name is a DNS-1123 label (v1.36+), else DNS-1035. */
  relaxedServiceNames?: boolean;
}

/** True when any item is an error (not a warning): Go's `len(errs) != 0` for kpc's mixed lists. */
export function hasErrors(items: ReadonlyArray<{ severity: string }>): boolean {
  return items.some((e) => e.severity === 'error');
}

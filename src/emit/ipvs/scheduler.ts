/**
 * IPVS schedulers: which names kpc accepts and the scheduler flags kube-proxy sets.
 *
 * Current kube-proxy validates no scheduler list any more (validateKubeProxyIPVSConfiguration
 * checks only the timeouts and excludeCIDRs); "" becomes rr (NewProxier), and at start-up
 * CanUseIPVSProxier creates a dummy virtual server with the scheduler, so any scheduler the
 * kernel's ip_vs has works. kpc accepts those kernel schedulers (the same list as the
 * KubeProxyConfiguration reader, src/parser/k8s/proxy-config/validate.ts). syncProxyRules sets
 * the flag 0x10 (IP_VS_SVC_F_SCHED2, "mh-port") when the scheduler is `mh`.
 */

export const DEFAULT_SCHEDULER = 'rr';

/** The schedulers of Linux's ip_vs (ip_vs_<name>.ko). */
export const IPVS_SCHEDULERS: readonly string[] = ['dh', 'fo', 'lblc', 'lblcr', 'lc', 'mh', 'nq', 'ovf', 'rr', 'sed', 'sh', 'twos', 'wlc', 'wrr'];

export function isKnownScheduler(name: string): boolean {
  return IPVS_SCHEDULERS.includes(name);
}

/** The scheduler kube-proxy programs: its default for "". */
export function effectiveScheduler(name: string): string {
  return name === '' ? DEFAULT_SCHEDULER : name;
}

/**
 * `ipvsadm -S`'s `-b` text for kube-proxy's flags: only `mh` gets one, 0x10, which ipvsadm
 * 1.30+ prints as `mh-port` (print_sched_flags). undefined = no `-b`.
 */
export function schedulerFlags(scheduler: string): string | undefined {
  return scheduler === 'mh' ? 'mh-port' : undefined;
}

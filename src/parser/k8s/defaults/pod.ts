/**
 * What the API server does to a Pod before validating it: the declarative default of a container
 * port's protocol (`+default="TCP"`), and the v1 → internal conversion of the pod IPs
 * (pkg/apis/core/v1/conversion.go Convert_v1_PodStatus_To_core_PodStatus): the internal type has
 * only podIPs; a v1 podIP alone becomes podIPs [podIP], and a podIP that differs from podIPs[0]
 * wins ("PodIP is authoritative for compatibility with older kubelets") and replaces the list.
 */

import type { CorePod } from '../model/pod.js';

export function setPodDefaults(pod: CorePod & { status: { podIP: string } }): CorePod {
  for (const c of [...pod.spec.containers, ...pod.spec.initContainers]) {
    for (const p of c.ports) if (p.protocol === '') p.protocol = 'TCP';
  }
  const { podIP, ...status } = pod.status;
  if (podIP !== '' && (status.podIPs.length === 0 || status.podIPs[0] !== podIP)) status.podIPs = [podIP];
  return { ...pod, status };
}

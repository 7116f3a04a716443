/**
 * Which service ports' own rules a connection can reach: kpc trace compiles only those, plus
 * the shared chains (modes' traceRules `focus`), instead of building and reading every rule.
 *
 * kube-proxy's rules enter a service port's own chains (KUBE-SVC/SVL/EXT/FW/SEP) only from
 * the shared chains, by a rule that matches the port's cluster IP, external IPs or
 * load-balancer IPs (with its port), or its node port or health-check node port; from there
 * they go only to that port's own chains. So a connection to `ip:port` reaches the own chains
 * of a service port only when one of those equals `ip` or `port`. This keeps more than that
 * (any of those addresses, whatever the port; node ports whatever the address; and ports with
 * an endpoint at `ip`): a port kept in vain costs only its rules, one left out would change
 * the trace.
 */

import type { ServicePort } from '../ir/model.js';
import { canonicalIP } from '../net/ip.js';

export function reachableServicePorts(destination: { ip: string; port: number }): (sp: ServicePort) => boolean {
  const { ip, port } = destination;
  const same = (a: string) => a === ip || canonicalIP(a) === ip;
  return (sp) =>
    sp.nodePort === port ||
    sp.healthCheckNodePort === port ||
    same(sp.clusterIP) ||
    sp.externalIPs.some(same) ||
    sp.loadBalancerVIPs.some(same) ||
    sp.endpoints.some((ep) => ep.ip === ip);
}

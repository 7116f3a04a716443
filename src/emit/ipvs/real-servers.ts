/**
 * Which endpoints become a virtual server's real servers (proxier.go syncEndpoint).
 *
 * The shared CategorizeEndpoints (src/ir/topology.ts) decides the Cluster and Local endpoint
 * lists; IPVS then picks per virtual server:
 *   - onlyLocal false (cluster IP with ITP Cluster; external IP, LB and node port with ETP
 *     Cluster): the Cluster endpoints;
 *   - onlyLocal true: the Local endpoints, or, when there are none, the Cluster endpoints
 *     (kubernetes PR 97081: IPVS keeps forwarding to remote endpoints rather than dropping).
 * For ITP Local on a Service that is not externally accessible the Cluster list is empty, so a
 * node without local endpoints gets no real servers at all.
 */

import type { Endpoint } from '../../ir/model.js';
import type { EndpointCategories } from '../../ir/topology.js';

export function realServerEndpoints(cat: EndpointCategories, onlyLocal: boolean): Endpoint[] {
  if (onlyLocal && cat.localEndpoints.length > 0) return cat.localEndpoints;
  return cat.clusterEndpoints;
}

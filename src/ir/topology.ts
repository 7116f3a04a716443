/**
 * Which endpoints a service port uses on this node: kube-proxy's CategorizeEndpoints
 * (pkg/proxy/topology.go), shared by the iptables and IPVS emitters.
 *
 * "Usable" means ready, falling back to serving-and-terminating (separately for the
 * Cluster and the Local policy) when nothing is ready. Topology hints narrow the
 * Cluster endpoints only, and only when every ready endpoint carries a hint.
 */

import { compareStrings } from '../go/strings.js';
import type { Endpoint, NodeFacts, ServicePort } from './model.js';
import { usesClusterEndpoints, usesLocalEndpoints } from './service-port.js';

export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode';

export interface EndpointCategories {
  /** Endpoints for the Cluster policy; empty when the port never uses it. */
  clusterEndpoints: Endpoint[];
  /** Endpoints for the Local policy; empty when the port never uses it. */
  localEndpoints: Endpoint[];
  /** Every endpoint reachable from this node (the KUBE-SEP chains), sorted by address. */
  allReachableEndpoints: Endpoint[];
  /** Some usable endpoint exists somewhere in the cluster (maybe not on this node). */
  hasAnyEndpoints: boolean;
  /** The topology mode chosen for the Cluster endpoints. */
  topologyMode: TopologyMode;
  /** The Local endpoints are the serving-and-terminating fallback. */
  localUsesTerminating: boolean;
}

const isServingTerminating = (ep: Endpoint): boolean => ep.serving && ep.terminating;

export function topologyModeFromHints(endpoints: readonly Endpoint[], node: NodeFacts, nodeHintsEnabled: boolean): TopologyMode {
  let hasEndpointForNode = false;
  let allHaveNodeHints = true;
  let hasEndpointForZone = false;
  let allHaveZoneHints = true;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    if (!ep.nodeHints || ep.nodeHints.size === 0) allHaveNodeHints = false;
    else if (ep.nodeHints.has(node.name)) hasEndpointForNode = true;
    if (!ep.zoneHints || ep.zoneHints.size === 0) allHaveZoneHints = false;
    else if (ep.zoneHints.has(node.zone)) hasEndpointForZone = true;
  }
  if (nodeHintsEnabled && allHaveNodeHints && hasEndpointForNode) return 'PreferSameNode';
  if (allHaveZoneHints && hasEndpointForZone) return 'PreferSameZone';
  return '';
}

function availableForTopology(ep: Endpoint, mode: TopologyMode, node: NodeFacts): boolean {
  switch (mode) {
    case '':
      return true;
    case 'PreferSameNode':
      return ep.nodeHints?.has(node.name) ?? false;
    case 'PreferSameZone':
      return ep.zoneHints?.has(node.zone) ?? false;
  }
}

export function categorizeEndpoints(sp: ServicePort, node: NodeFacts, nodeHintsEnabled: boolean): EndpointCategories {
  const endpoints = sp.endpoints;
  let clusterEndpoints: Endpoint[] = [];
  let topologyMode: TopologyMode = '';
  let hasAnyEndpoints = false;

  if (usesClusterEndpoints(sp)) {
    topologyMode = topologyModeFromHints(endpoints, node, nodeHintsEnabled);
    clusterEndpoints = endpoints.filter((ep) => ep.ready && availableForTopology(ep, topologyMode, node));
    // No ready endpoint anywhere (topology already fell back when none matched):
    // use the serving-and-terminating ones.
    if (clusterEndpoints.length === 0) clusterEndpoints = endpoints.filter(isServingTerminating);
    hasAnyEndpoints = clusterEndpoints.length > 0;
  }

  if (!usesLocalEndpoints(sp)) {
    return { clusterEndpoints, localEndpoints: [], allReachableEndpoints: clusterEndpoints, hasAnyEndpoints, topologyMode, localUsesTerminating: false };
  }

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of endpoints) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (isServingTerminating(ep)) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }

  let localEndpoints: Endpoint[] = [];
  let localUsesTerminating = false;
  if (hasLocalReady) {
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.ready);
  } else if (hasLocalServingTerminating) {
    localUsesTerminating = true;
    localEndpoints = endpoints.filter((ep) => ep.isLocal && isServingTerminating(ep));
  }

  let allReachableEndpoints: Endpoint[];
  if (!usesClusterEndpoints(sp)) {
    allReachableEndpoints = localEndpoints;
  } else if (topologyMode === '' && !localUsesTerminating) {
    // Every ready endpoint is a Cluster endpoint, so they include the (ready) Local ones.
    allReachableEndpoints = clusterEndpoints;
  } else {
    // kube-proxy merges through a Go map (random order); kpc sorts by address.
    const union = new Map<string, Endpoint>();
    for (const ep of clusterEndpoints) union.set(ep.address, ep);
    for (const ep of localEndpoints) union.set(ep.address, ep);
    allReachableEndpoints = [...union.values()].sort((a, b) => compareStrings(a.address, b.address));
  }
  return { clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints, topologyMode, localUsesTerminating };
}

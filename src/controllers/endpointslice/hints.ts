/**
 * Hints on the slices the controller creates (k8s.io/endpointslice reconciler.go
 * reconcileByAddressType, trafficdist/trafficdist.go):
 *
 * - a Service with the topology-mode annotation (`service.kubernetes.io/topology-mode: Auto`,
 *   or the older `service.kubernetes.io/topology-aware-hints`, which wins when both are set)
 *   gets the topology cache's hints (topology.ts); its trafficDistribution is then ignored;
 * - otherwise a valid trafficDistribution (PreferClose, and PreferSameZone / PreferSameNode
 *   when the PreferSameTrafficDistribution gate is on) gives every ready endpoint a hint for its
 *   own zone (when it has one) and, for PreferSameNode, for its own node;
 * - otherwise no hints.
 */

import { TOPOLOGY_HINTS_ANNOTATION, TOPOLOGY_MODE_ANNOTATION } from '../../parser/k8s/model/service.js';
import type { Service } from '../../parser/k8s/types.js';
import type { DerivedEndpointSlice } from './model.js';
import type { ControllerRelease } from './releases.js';


/** hintsEnabled: the deprecated annotation has precedence; "Auto" or "auto". */
export function hintsEnabled(annotations: Readonly<Record<string, string>>): boolean {
  const val = Object.hasOwn(annotations, TOPOLOGY_HINTS_ANNOTATION) ? annotations[TOPOLOGY_HINTS_ANNOTATION] : annotations[TOPOLOGY_MODE_ANNOTATION];
  return val === 'Auto' || val === 'auto';
}

/** Reconciler.validTrafficDistribution. */
export function validTrafficDistribution(td: string | undefined, release: ControllerRelease): boolean {
  if (td === undefined) return false;
  if (td === 'PreferClose') return true;
  if (!release.preferSameTrafficDistribution) return false;
  return td === 'PreferSameZone' || td === 'PreferSameNode';
}

/** The hints path a Service's slices take. */
export function hintsMode(svc: Service, release: ControllerRelease): 'topology' | 'traffic-distribution' | 'none' {
  if (hintsEnabled(svc.metadata.annotations)) return 'topology';
  return validTrafficDistribution(svc.spec.trafficDistribution, release) ? 'traffic-distribution' : 'none';
}

/**
 * trafficdist.ReconcileHints on slices being created: preferCloseHeuristic.update for the
 * "close" values (all three pass validTrafficDistribution), which leaves not-ready endpoints
 * alone (from scratch: no hints).
 */
export function addTrafficDistributionHints(slices: DerivedEndpointSlice[], td: string): void {
  const close = td === 'PreferClose' || td === 'PreferSameZone' || td === 'PreferSameNode';
  const nodeHints = td === 'PreferSameNode';
  for (const slice of slices) {
    for (const ep of slice.endpoints) {
      if (!close) {
        delete ep.hints;
        continue;
      }
      if (!ep.conditions.ready) continue;
      const forZones = ep.zone !== undefined ? [ep.zone] : [];
      const forNodes = ep.nodeName !== undefined && nodeHints ? [ep.nodeName] : [];
      if (ep.zone !== undefined || forNodes.length > 0) ep.hints = { forZones, forNodes };
      else delete ep.hints;
    }
  }
}

/**
 * What differs between the EndpointSlice controller's releases, as data. Read from
 * k8s.io/endpointslice v0.34.4, v0.35.4, v0.36.3, v0.37.2 and
 * k8s.io/kubernetes pkg/controller/endpointslice at v1.34.4, v1.35.4, v1.36.3, v1.37.2
 * (reconciler.go, utils.go, util/controller_utils.go, util/endpointset.go, trafficdist/,
 * topologycache/, pkg/features/kube_features.go):
 *
 * - util.deepHashObjectToString hashes spew's dump with MD5 in v1.34 and with FNV-128a from
 *   v1.35. NewPortMapKey sorts a slice's ports by the hash of each (portsInOrder), so the order
 *   of `ports` in a slice differs between releases (the set does not).
 * - v1.36: NewPortMapKey reads nil ports as empty ones. From scratch the controller always
 *   passes a non-nil list, so what it writes does not change.
 * - ServiceTrafficDistribution: GA and locked on in v1.34 and v1.35, removed in v1.36 (the
 *   reconciler's `trafficDistributionEnabled` option is gone; always on). No change in output.
 * - PreferSameTrafficDistribution (PreferSameZone, PreferSameNode): beta, on by default in
 *   v1.34; GA and locked on from v1.35. With the default gates every release gives hints for
 *   PreferClose, PreferSameZone and PreferSameNode the same way.
 * - TopologyAwareHints (the topology-mode annotation): GA and locked on in v1.34 and v1.35,
 *   always on from v1.36 (the controller no longer reads the gate). No change in output.
 * - v1.35: Pod events go through a pod queue (PodProjectionKey) before the Service queue;
 *   timing only.
 * Everything else (podToEndpoint, getEndpointPorts, FindPort, ShouldPodBeInEndpoints, labels,
 * owner references, address types, placeholders, 100 endpoints per slice, trafficdist,
 * topologycache) is the same code in all four releases.
 */

export const CONTROLLER_RELEASES = ['1.34', '1.35', '1.36', '1.37'] as const;
export type ControllerVersion = (typeof CONTROLLER_RELEASES)[number];

export interface ControllerRelease {
  version: ControllerVersion;
  /** The hash of util.deepHashObjectToString. */
  hash: 'md5' | 'fnv128a';
  /** The PreferSameTrafficDistribution gate's default. */
  preferSameTrafficDistribution: boolean;
}

export const RELEASES: Readonly<Record<ControllerVersion, ControllerRelease>> = {
  '1.34': { version: '1.34', hash: 'md5', preferSameTrafficDistribution: true },
  '1.35': { version: '1.35', hash: 'fnv128a', preferSameTrafficDistribution: true },
  '1.36': { version: '1.36', hash: 'fnv128a', preferSameTrafficDistribution: true },
  '1.37': { version: '1.37', hash: 'fnv128a', preferSameTrafficDistribution: true },
};

/** The controller's --max-endpoints-per-slice default (kube-controller-manager). */
export const MAX_ENDPOINTS_PER_SLICE = 100;

export function isControllerVersion(v: string): v is ControllerVersion {
  return (CONTROLLER_RELEASES as readonly string[]).includes(v);
}

/**
 * What differs between the kube-proxy releases kpc reproduces, apart from the feature gates
 * (feature-gates.ts). Each entry names the code it comes from; the oracle (test/oracle) runs
 * every release's own code on the same inputs.
 */

import { atLeast, type KubeProxyRelease } from './release.js';

const SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';
const HEADLESS = 'service.kubernetes.io/headless';

export interface ReleaseBehaviour {
  release: KubeProxyRelease;
  /**
   * MASQUERADE always carries --random-fully: v1.37 dropped the HasRandomFully() check
   * (pkg/proxy/iptables and ipvs proxier.go), so the host's iptables no longer matters.
   */
  randomFullyAlways: boolean;
  /**
   * A Service carrying any of these labels is invisible to kube-proxy (its Service informer's
   * label selector, cmd/kube-proxy/app/server.go). Up to v1.35 one selector (no proxy name,
   * not headless) served both informers; from v1.36 each has its own.
   */
  serviceSkipLabels: readonly string[];
  /** The same for EndpointSlices. */
  sliceSkipLabels: readonly string[];
  /**
   * One address twice among a service port's endpoints (EndpointSliceCache.addEndpoints): up to
   * v1.35 a later endpoint replaces an earlier one when it is local; from v1.36 when it is not
   * terminating (prefer the running pod when a pod IP was reused).
   */
  duplicateEndpointWins: 'local' | 'running';
  /**
   * The words nodePortAddresses accepts (pkg/proxy/apis/config/validation): `primary` alone up
   * to v1.36; v1.37 adds `localhost` and `all`, freely mixed with CIDRs
   * (cmd/kube-proxy/app/server.go expandNodePortAddressKeywords).
   */
  nodePortAddressKeywords: readonly string[];
  /** The API server's default for StrictIPCIDRValidation: beta and on from v1.36. */
  strictIPValidation: boolean;
}

export function behaviourOf(release: KubeProxyRelease): ReleaseBehaviour {
  const split = atLeast(release, '1.36');
  return {
    release,
    randomFullyAlways: atLeast(release, '1.37'),
    serviceSkipLabels: split ? [SERVICE_PROXY_NAME] : [SERVICE_PROXY_NAME, HEADLESS],
    sliceSkipLabels: split ? [HEADLESS] : [SERVICE_PROXY_NAME, HEADLESS],
    duplicateEndpointWins: split ? 'running' : 'local',
    nodePortAddressKeywords: atLeast(release, '1.37') ? ['primary', 'localhost', 'all'] : ['primary'],
    strictIPValidation: split,
  };
}

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
  /**
   * The API server's default for RelaxedServiceNameValidation (KEP-5311): beta and on from
   * v1.36 (GA in v1.37), so a Service's name is a DNS-1123 label (ValidateServiceCreate).
   */
  relaxedServiceNames: boolean;
  /** How the nftables proxier writes its table (pkg/proxy/nftables/proxier.go). */
  nftables: NftablesBehaviour;
}

/**
 * The nftables proxier's eras (shared/spec/nftables-mode.md; fixtures/kube-proxy/nftables
 * PROVENANCE.md §7): E2 = v1.34, v1.35 (identical output); E3 = v1.36; E4 = v1.37.
 */
export interface NftablesBehaviour {
  era: 'E2' | 'E3' | 'E4';
  /**
   * E2: a `mark-for-masquerade` chain every masquerade jumps to, the ClusterIP masquerade
   * rule in each internal traffic chain, an endpoint chain per endpoint (hairpin masquerade
   * + DNAT), and a three-rule `masquerading` chain. E3+: `mark set mark or MARK` inline, one
   * ClusterIP masquerade rule in `services` (on @cluster-ips), the `hairpin-connections` set
   * and a two-rule `masquerading` chain; endpoint chains only with ClientIP affinity,
   * otherwise one `dnat … numgen random mod N map { … }` rule in the service chain.
   */
  markChain: boolean;
  /** E4: a service chain with one endpoint DNATs with `dnat to IP:PORT` (no numgen map). */
  singleEndpointDNAT: boolean;
  /** E4: element comments are cut to 128 bytes (truncateNFTablesComment). */
  truncateComments: boolean;
  /**
   * E4: the localhost NodePort reject objects (map, per-protocol chains and counters) are
   * written (with the gate off: added and deleted in the same transaction).
   */
  localhostNodePortObjects: boolean;
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
    relaxedServiceNames: split,
    nftables: {
      era: atLeast(release, '1.37') ? 'E4' : split ? 'E3' : 'E2',
      markChain: !split,
      singleEndpointDNAT: atLeast(release, '1.37'),
      truncateComments: atLeast(release, '1.37'),
      localhostNodePortObjects: atLeast(release, '1.37'),
    },
  };
}

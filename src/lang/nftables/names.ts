/**
 * The fixed names of kube-proxy's nftables table (pkg/proxy/nftables/proxier.go constants,
 * identical in v1.34–v1.37 except where noted).
 */

export const KUBE_PROXY_TABLE = 'kube-proxy';

// base chains
export const FILTER_PREROUTING_PRE_DNAT = 'filter-prerouting-pre-dnat';
export const FILTER_OUTPUT_PRE_DNAT = 'filter-output-pre-dnat';
export const FILTER_INPUT = 'filter-input';
export const FILTER_FORWARD = 'filter-forward';
export const FILTER_OUTPUT = 'filter-output';
export const NAT_PREROUTING = 'nat-prerouting';
export const NAT_OUTPUT = 'nat-output';
export const NAT_POSTROUTING = 'nat-postrouting';

// service dispatch
export const SERVICES_CHAIN = 'services';
export const SERVICE_IPS_MAP = 'service-ips';
export const SERVICE_NODEPORTS_MAP = 'service-nodeports';
export const NODEPORT_IPS_SET = 'nodeport-ips';
export const CLUSTER_IPS_SET = 'cluster-ips';

// no endpoints
export const SERVICE_ENDPOINTS_CHECK = 'service-endpoints-check';
export const NODEPORT_ENDPOINTS_CHECK = 'nodeport-endpoints-check';
export const NO_ENDPOINT_SERVICES_MAP = 'no-endpoint-services';
export const NO_ENDPOINT_NODEPORTS_MAP = 'no-endpoint-nodeports';
export const REJECT_CHAIN = 'reject-chain';

// unallocated ClusterIPs and undefined ports of ClusterIPs
export const CLUSTER_IPS_CHECK = 'cluster-ips-check';

// loadBalancerSourceRanges
export const FIREWALL_IPS_MAP = 'firewall-ips';
export const FIREWALL_CHECK = 'firewall-check';

// masquerading
/** v1.34–v1.35 only. */
export const MARK_MASQ_CHAIN = 'mark-for-masquerade';
export const MASQUERADING_CHAIN = 'masquerading';
/** v1.36+. */
export const HAIRPIN_CONNECTIONS_SET = 'hairpin-connections';

/** v1.37+: localhost NodePorts kube-proxy rejects. */
export const LOCALHOST_NODEPORT_REJECT_MAP = 'localhost-nodeport-reject-ports';
export const localhostNodePortRejectChain = (protocol: string) => `localhost-nodeport-reject-${protocol.toLowerCase()}`;
/** pkg/proxy/metrics LocalhostNodePortRejectedCounterName. */
export const localhostNodePortRejectedCounter = (protocol: string) => `localhost-nodeport-rejected-${protocol.toLowerCase()}`;

// per service port and endpoint
export const SERVICE_CHAIN_PREFIX = 'service-';
export const LOCAL_CHAIN_PREFIX = 'local-';
export const EXTERNAL_CHAIN_PREFIX = 'external-';
export const ENDPOINT_CHAIN_PREFIX = 'endpoint-';
export const AFFINITY_SET_PREFIX = 'affinity-';
export const FIREWALL_CHAIN_PREFIX = 'firewall-';

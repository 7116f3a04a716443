/**
 * The IR: one node's view of the cluster for one IP family, normalised.
 *
 * This is the only contract between the parser and the emitters. Everything here is
 * already decided the way kube-proxy decides it when it builds its service map and
 * endpoints map (pkg/proxy/serviceport.go, endpointslicecache.go): addresses are
 * canonical text of this family only, service ports and endpoints are sorted, and
 * nothing refers to YAML or to iptables.
 */

import type { IPFamily } from '../net/ip.js';
import type { KubeProxyRelease } from '../releases/index.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** One backend of a service port, as kube-proxy's BaseEndpointInfo holds it. */
export interface Endpoint {
  /** Canonical IP text (no brackets). */
  ip: string;
  /** The EndpointSlice port number (the resolved target port). */
  port: number;
  /** `ip:port` or `[ip]:port`: kube-proxy's endpoint string, its identity and sort key. */
  address: string;
  /** conditions.ready nil or true. */
  ready: boolean;
  /** conditions.serving nil or true. */
  serving: boolean;
  /** conditions.terminating true. */
  terminating: boolean;
  /** nodeName equals this node's name. */
  isLocal: boolean;
  /** hints.forZones names; undefined when the endpoint has no zone hints. */
  zoneHints?: ReadonlySet<string>;
  /** hints.forNodes names (PreferSameTrafficDistribution); undefined when none. */
  nodeHints?: ReadonlySet<string>;
  /** For explanations only: the endpoint's node and zone as the slice says. */
  nodeName?: string;
  zone?: string;
}

/** One port of one Service, with everything kube-proxy derives for it. */
export interface ServicePort {
  namespace: string;
  name: string;
  /** '' when the Service port is unnamed. */
  portName: string;
  protocol: Protocol;
  /** kube-proxy's ServicePortName string: `ns/name` or `ns/name:portName`. */
  spn: string;
  /** Canonical cluster IP of this family. */
  clusterIP: string;
  port: number;
  /** 0 when none. */
  nodePort: number;
  /** Canonical, this family, spec order, duplicates kept (as kube-proxy does). */
  externalIPs: string[];
  /** Ingress IPs of this family with ipMode VIP or unset, in status order. */
  loadBalancerVIPs: string[];
  /** Canonical CIDRs (network address) of this family; empty when any is a /0 (v1.34+). */
  loadBalancerSourceRanges: string[];
  /** ClientIP affinity timeout in seconds; undefined when affinity is None. */
  stickySeconds?: number;
  /** externalTrafficPolicy Local on an externally accessible Service. */
  externalPolicyLocal: boolean;
  /** internalTrafficPolicy Local. */
  internalPolicyLocal: boolean;
  /** 0 when none (only LoadBalancer + externalTrafficPolicy Local has one). */
  healthCheckNodePort: number;
  /** All endpoints matched by (port name, protocol), deduplicated, sorted by address. */
  endpoints: Endpoint[];
}

/** How kube-proxy recognises traffic from local pods (pkg/proxy/util/localdetector.go). */
export type LocalDetector =
  | { mode: 'ClusterCIDR' | 'NodeCIDR'; cidr: string }
  | { mode: 'BridgeInterface'; interfaceName: string }
  | { mode: 'InterfaceNamePrefix'; interfacePrefix: string };

/** Facts about the node kube-proxy runs on. */
export interface NodeFacts {
  /** The node name endpoints' nodeName is compared with. */
  name: string;
  /** topology.kubernetes.io/zone label, '' when unknown. */
  zone: string;
  /** The node's addresses of this family, canonical, primary first. */
  ips: string[];
}

/**
 * What kube-proxy knows when it starts: configuration, feature gates and host capabilities.
 * A common part, then what only one mode reads.
 */
export interface ProxyKnobs {
  /** The kube-proxy release reproduced (modes whose output changed between releases read it). */
  release: KubeProxyRelease;
  masqueradeAll: boolean;
  /** 0..31; the mark is 1 << bit. */
  masqueradeBit: number;
  /**
   * Canonical CIDRs of this family that node ports are served on; empty = every local address.
   * The keywords (`primary`, …) have already been replaced.
   */
  nodePortAddresses: string[];
  /** undefined = no local-traffic detector for this family. */
  localDetector?: LocalDetector;
  /** PreferSameTrafficDistribution: node hints are honoured. */
  nodeHints: boolean;
  /** The modes that write iptables rules: iptables mode, and IPVS mode's helper rules. */
  iptables: IptablesKnobs;
  ipvs: IpvsKnobs;
  nftables: NftablesKnobs;
}

export interface NftablesKnobs {
  /**
   * The cluster's ServiceCIDRs of this family (ServiceCIDR objects' spec.cidrs, and
   * --service-cluster-ip-range), canonical, sorted (kube-proxy gets them in Go map order):
   * traffic to an unallocated address inside them is dropped.
   */
  serviceCIDRs: string[];
  /** v1.37's KubeProxyNFTablesLocalhostNodePorts gate. */
  localhostNodePorts: boolean;
  /**
   * The gate is on and nodePortAddresses names an explicit loopback CIDR: kube-proxy runs its
   * userspace localhost NodePort proxy (TCP), and rejects only UDP and SCTP.
   */
  localhostNodePortProxy: boolean;
}

export interface IptablesKnobs {
  /** Effective for this family (always false for IPv6). */
  localhostNodePorts: boolean;
  /** MASQUERADE gets --random-fully (the host supports it, or the release always writes it). */
  randomFully: boolean;
  /** nfacct counters can be created. */
  nfacct: boolean;
  /** net.netfilter.nf_conntrack_tcp_be_liberal is set. */
  tcpBeLiberal: boolean;
}

export interface IpvsKnobs {
  /** IPVS scheduler name. */
  scheduler: string;
  /** --ipvs-strict-arp (sysctls arp_ignore=1, arp_announce=2; only apply.sh shows it). */
  strictARP: boolean;
  /** `ipvsadm --set` timeouts in whole seconds; 0 keeps the kernel's value. */
  tcpTimeout: number;
  tcpFinTimeout: number;
  udpTimeout: number;
  /**
   * --ipvs-exclude-cidrs of this family, canonical. kube-proxy never deletes a virtual server
   * inside them (only apply.sh's clean-up of stale services depends on it).
   */
  excludeCIDRs: string[];
}

export interface ProxyIR {
  family: IPFamily;
  node: NodeFacts;
  knobs: ProxyKnobs;
  /** Sorted by (namespace/name string, port name, protocol). */
  servicePorts: ServicePort[];
}

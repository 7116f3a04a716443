/**
 * planServicePort (src/ir/plan.ts), one table row (or more) per decision branch of the top of
 * kube-proxy's per-service-port loop in syncProxyRules.
 *
 * Every expectation is derived by reading kube-proxy, never by running kpc. Line numbers are
 * pkg/proxy/iptables/proxier.go of k8s.io/kubernetes@v1.34.4 (the decision block, lines
 * 938-995, is identical in v1.37.2); "ipvs" is pkg/proxy/ipvs/proxier.go and "server.go" is
 * cmd/kube-proxy/app/server.go of the same release.
 *
 *   938        CategorizeEndpoints(endpoints, svcInfo, nodeName, topologyLabels) → hasEndpoints
 *   942        usesClusterPolicyChain := len(clusterEndpoints) > 0 && UsesClusterEndpoints()
 *   946        usesLocalPolicyChain   := len(localEndpoints) > 0 && UsesLocalEndpoints()
 *   954-962    internal chain = cluster chain, or the local one with ITP Local (no local
 *              endpoints → hasInternalEndpoints = false)
 *   972-980    external policy chain = cluster chain, or the local one with ETP Local (no local
 *              endpoints → hasExternalEndpoints = false)
 *   985        usesExternalTrafficChain := hasEndpoints && ExternallyAccessible()
 *   992        usesFWChain := hasEndpoints && len(LoadBalancerVIPs) > 0 && len(SourceRanges) > 0
 *   999-1008   no endpoints at all → REJECT (internal and external)
 *   1010-1017  endpoints but none internal → DROP on the cluster IP
 *   1018-1026  endpoints but none external → DROP on the external destinations
 *   1159-1169  health check node port: ACCEPT whenever set, "no matter if node has local endpoints"
 *   1211-1261  EXT chain: ETP Local short-circuits pod (1234) and host (1244-1256) traffic to the
 *              CLUSTER policy chain, so that chain must exist even when no local endpoint does
 *   1281-1292  allowFromNode := some source range Contains(proxier.nodeIP); ipvs 1159-1199
 *              computes the same thing without looking at endpoints
 *
 * The plan has no masquerade field: masqueradeAll / the local detector (1188-1207) and the EXT
 * chain's masquerade rules are written by the emitters from the knobs and from
 * externalPolicyLocal, so they are not rows here.
 */
import { describe, expect, it } from 'vitest';
import type { IPFamily } from '../../src/net/ip.js';
import type { Endpoint, NodeFacts, ProxyIR, ServicePort } from '../../src/ir/model.js';
import { planContext, planServicePort, type ServicePortPlan } from '../../src/ir/plan.js';

// ---- a small factory for the inputs --------------------------------------------------------

interface EpSpec {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  local?: boolean;
  zones?: string[];
  nodes?: string[];
}

function ep(address: string, s: EpSpec = {}): Endpoint {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(address)!;
  const ready = s.ready ?? true;
  const e: Endpoint = {
    ip: m[1]!,
    port: Number(m[2]),
    address,
    ready,
    serving: s.serving ?? ready,
    terminating: s.terminating ?? false,
    isLocal: s.local ?? false,
  };
  if (s.zones) e.zoneHints = new Set(s.zones);
  if (s.nodes) e.nodeHints = new Set(s.nodes);
  return e;
}
const local = (address: string, s: EpSpec = {}) => ep(address, { ...s, local: true });
/** Serving and terminating (not ready): the fallback kind. */
const terminating = (address: string, s: EpSpec = {}) => ep(address, { ...s, ready: false, serving: true, terminating: true });
const unready = (address: string, s: EpSpec = {}) => ep(address, { ...s, ready: false, serving: false });

/** A ClusterIP service port by default; override what the row is about. */
function port(over: Partial<ServicePort> = {}): ServicePort {
  const endpoints = [...(over.endpoints ?? [])].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return {
    namespace: 'ns',
    name: 'svc',
    portName: 'p80',
    protocol: 'TCP',
    spn: 'ns/svc:p80',
    clusterIP: '172.30.0.41',
    port: 80,
    nodePort: 0,
    externalIPs: [],
    loadBalancerVIPs: [],
    loadBalancerSourceRanges: [],
    externalPolicyLocal: false,
    internalPolicyLocal: false,
    healthCheckNodePort: 0,
    ...over,
    endpoints,
  };
}
const nodePort = (over: Partial<ServicePort> = {}) => port({ nodePort: 30080, ...over });
const loadBalancer = (over: Partial<ServicePort> = {}) => port({ nodePort: 30080, loadBalancerVIPs: ['192.0.2.10'], ...over });

const NODE: NodeFacts = { name: 'node-1', zone: 'zone-a', ips: ['10.1.0.10'] };

function irFor(node: NodeFacts, family: IPFamily, nodeHints: boolean): ProxyIR {
  return {
    family,
    node,
    knobs: {
      masqueradeAll: false,
      masqueradeBit: 14,
      nodePortAddresses: [],
      nodeHints,
      iptables: { localhostNodePorts: family === 'IPv4', randomFully: true, nfacct: false, tcpBeLiberal: false },
      ipvs: { scheduler: 'rr', strictARP: false, tcpTimeout: 0, tcpFinTimeout: 0, udpTimeout: 0, excludeCIDRs: [] },
    },
    servicePorts: [],
  };
}

// ---- the table -----------------------------------------------------------------------------

type Filter = 'REJECT' | 'DROP' | null;

interface Expected {
  hasEndpoints: boolean;
  hasInternalEndpoints: boolean;
  hasExternalEndpoints: boolean;
  /** What the filter table does to traffic that has no endpoint (999-1026); null = none. */
  internalFilter: Filter;
  externalFilter: Filter;
  /** Compared as sets of endpoint strings. */
  internalEndpoints: string[];
  externalEndpoints: string[];
  usesClusterEndpoints: boolean;
  usesLocalEndpoints: boolean;
  externallyAccessible: boolean;
  usesExternalPath: boolean;
  usesFirewall: boolean;
  nodeAllowedBySourceRanges: boolean;
}

interface Row {
  name: string;
  /** proxier.go lines (v1.34.4) the expectation is read from. */
  cite: string;
  sp: ServicePort;
  node?: NodeFacts;
  family?: IPFamily;
  /** knobs.nodeHints (PreferSameTrafficDistribution); true, its default, unless the row says. */
  nodeHints?: boolean;
  want: Expected;
  /** The health check node port the proxier opens (1159-1169), when the row is about it. */
  healthCheckNodePort?: number;
}

/** proxier.go 997-1027: the filter targets, read off the plan's booleans. */
function filters(p: ServicePortPlan): { internal: Filter; external: Filter } {
  if (!p.hasEndpoints) return { internal: 'REJECT', external: 'REJECT' };
  return { internal: p.hasInternalEndpoints ? null : 'DROP', external: p.hasExternalEndpoints ? null : 'DROP' };
}

const NONE: Pick<Expected, 'usesFirewall' | 'nodeAllowedBySourceRanges'> = { usesFirewall: false, nodeAllowedBySourceRanges: false };

const rows: Row[] = [
  // -- hasEndpoints (938; 999-1008) ---------------------------------------------------------
  {
    name: 'ClusterIP, no endpoints at all: REJECT, nothing used',
    cite: '938 (CategorizeEndpoints returns hasAnyEndpoints=false for no endpoints), 955, 973, 999-1008',
    sp: port(),
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [], usesClusterEndpoints: false, usesLocalEndpoints: false,
      externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ClusterIP, only endpoints neither ready nor serving-terminating: REJECT',
    cite: '938 (neither ready nor serving+terminating is usable), 999-1008, 942',
    sp: port({ endpoints: [unready('10.0.1.1:8080'), ep('10.0.1.2:8080', { ready: false, serving: true })] }),
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [], usesClusterEndpoints: false, usesLocalEndpoints: false,
      externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ClusterIP, ready endpoints: Cluster chain used for internal traffic',
    cite: '938, 942, 954-955, 1034',
    sp: port({ endpoints: [ep('10.0.1.1:8080'), local('10.0.1.2:8080'), unready('10.0.1.3:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'], externalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ClusterIP, only serving-terminating endpoints: Cluster chain falls back to them',
    cite: '938 (topology.go falls back to serving+terminating), 942, 955',
    sp: port({ endpoints: [terminating('10.0.1.1:8080'), unready('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },

  // -- internal traffic: ITP Local (954-962; 1010-1017) -------------------------------------
  {
    name: 'ITP Local, a local endpoint: internal traffic goes to the Local chain only',
    cite: '946, 956-957 (internalPolicyChain = localPolicyChain), 942 (not externally accessible: no Cluster chain)',
    sp: port({ internalPolicyLocal: true, endpoints: [local('10.0.1.1:8080'), ep('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: true, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ITP Local, endpoints only on other nodes: cluster IP DROPs (not REJECT)',
    cite: '958-959 (hasInternalEndpoints = false), 1010-1017 (DROP "has no local endpoints"), 946',
    sp: port({ internalPolicyLocal: true, endpoints: [ep('10.0.1.1:8080'), ep('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: false, hasExternalEndpoints: true, internalFilter: 'DROP', externalFilter: null,
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: false, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ITP Local, only a local serving-terminating endpoint: the Local chain uses it',
    cite: '946, 956-957 (topology.go: Local falls back to local serving+terminating)',
    sp: port({ internalPolicyLocal: true, endpoints: [local('10.0.1.1:8080', { ready: false, serving: true, terminating: true }), unready('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: true, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ITP Local, no endpoints at all: REJECT wins over DROP',
    cite: '999-1008 (the !hasEndpoints branch is taken before 1010)',
    sp: port({ internalPolicyLocal: true }),
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: false, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'ITP Local on a NodePort service: external traffic keeps the Cluster chain',
    cite: '942 (UsesClusterEndpoints: externally accessible), 956-960, 972-973, 985',
    sp: nodePort({ internalPolicyLocal: true, endpoints: [ep('10.0.1.1:8080'), ep('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: false, hasExternalEndpoints: true, internalFilter: 'DROP', externalFilter: null,
      internalEndpoints: [], externalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },

  // -- external traffic: ETP (972-985; 1018-1026; 1211-1261) --------------------------------
  {
    name: 'NodePort, ETP Cluster: external traffic to the Cluster chain via EXT',
    cite: '972-973, 985 (usesExternalTrafficChain), 1258-1261',
    sp: nodePort({ endpoints: [ep('10.0.1.1:8080'), local('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'], externalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'NodePort, ETP Local, a local endpoint: external traffic to the Local chain; Cluster chain kept for short-circuits',
    cite: '974-975 (externalPolicyChain = localPolicyChain), 942 and 1234/1253 (pod and host traffic jump to clusterPolicyChain), 946',
    sp: nodePort({ externalPolicyLocal: true, endpoints: [ep('10.0.1.1:8080'), local('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'], externalEndpoints: ['10.0.1.2:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: true, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'NodePort, ETP Local, no local endpoint: external DROP, but the EXT chain and Cluster chain stay',
    cite: '976-977 (hasExternalEndpoints = false), 1018-1026 (DROP), 982-985 (EXT chain on hasEndpoints, for the short-circuit rules), 1258 (no jump to the policy chain)',
    sp: nodePort({ externalPolicyLocal: true, endpoints: [ep('10.0.1.1:8080'), ep('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: false, internalFilter: null, externalFilter: 'DROP',
      internalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'], externalEndpoints: [],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'NodePort, ETP Local and ITP Local, no local endpoint: both DROP, Cluster chain still there',
    cite: '958-959, 976-977, 1010-1026 (two DROPs), 942 (UsesClusterEndpoints: externally accessible)',
    sp: nodePort({ externalPolicyLocal: true, internalPolicyLocal: true, endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'DROP', externalFilter: 'DROP',
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'NodePort, no endpoints: REJECT internal and external, no EXT chain',
    cite: '985 (hasEndpoints false), 999-1008, 1143-1154 (REJECT on the node port)',
    sp: nodePort(),
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'external IP only (no node port): externally accessible',
    cite: 'serviceport.go ExternallyAccessible (len(externalIPs) != 0), 985, 1055-1066',
    sp: port({ externalIPs: ['198.51.100.7'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'load-balancer VIP only (allocateLoadBalancerNodePorts false, ETP Local): externally accessible, Local chain',
    cite: 'serviceport.go ExternallyAccessible (len(loadBalancerVIPs) != 0), 946, 974-975, 985',
    sp: port({ loadBalancerVIPs: ['192.0.2.10'], externalPolicyLocal: true, endpoints: [local('10.0.1.1:8080'), ep('10.0.1.2:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: true, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'ETP Local, only a local serving-terminating endpoint: external traffic uses it, internal stays on ready remote ones',
    cite: '974-975, 946 (topology.go: Local falls back to local serving+terminating independently of Cluster)',
    sp: nodePort({ externalPolicyLocal: true, endpoints: [ep('10.0.1.1:8080'), local('10.0.1.2:8080', { ready: false, serving: true, terminating: true })] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.2:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: true, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },

  // -- health check node port (1159-1169) ----------------------------------------------------
  {
    name: 'LoadBalancer ETP Local with no local endpoint keeps its health check node port',
    cite: '1159-1169 (ACCEPT "no matter if node has local endpoints"); 976-977, 1018-1026',
    sp: loadBalancer({ externalPolicyLocal: true, healthCheckNodePort: 32000, endpoints: [ep('10.0.1.1:8080')] }),
    healthCheckNodePort: 32000,
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: false, internalFilter: null, externalFilter: 'DROP',
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: [],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'LoadBalancer ETP Local with no endpoints at all keeps its health check node port',
    cite: '1159-1169 (not inside any hasEndpoints test); 999-1008',
    sp: loadBalancer({ externalPolicyLocal: true, healthCheckNodePort: 32000 }),
    healthCheckNodePort: 32000,
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: false, ...NONE,
    },
  },

  // -- firewall (992; 1266-1305) -----------------------------------------------------------
  {
    name: 'LoadBalancer with source ranges and endpoints: firewall chain',
    cite: '992-995 (usesFWChain), 1266; node 10.1.0.10 is outside 203.0.113.0/24 (1284)',
    sp: loadBalancer({ loadBalancerSourceRanges: ['203.0.113.0/24'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: false,
    },
  },
  {
    name: 'LoadBalancer with source ranges but no endpoints: no firewall chain (REJECT instead)',
    cite: '992 (hasEndpoints is part of usesFWChain), 999-1008',
    sp: loadBalancer({ loadBalancerSourceRanges: ['203.0.113.0/24'] }),
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: false,
      usesFirewall: false, nodeAllowedBySourceRanges: false,
    },
  },
  {
    name: 'LoadBalancer without source ranges (or only a /0, which the IR drops): no firewall',
    cite: '992 (len(LoadBalancerSourceRanges()) > 0)',
    sp: loadBalancer({ loadBalancerSourceRanges: [], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'source ranges but no load-balancer VIP (hostname or ipMode Proxy ingress): no firewall',
    // (allowFromNode is never computed without a VIP, 1266/ipvs 1124, so the range is chosen
    // outside the node's IP and the row claims nothing about it.)
    cite: '992 (len(LoadBalancerVIPs()) > 0)',
    sp: nodePort({ loadBalancerSourceRanges: ['203.0.113.0/24'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },

  // -- the node's own access through the source ranges (1281-1292; ipvs 1159-1178) --------
  {
    name: "a source range holds the node's IP: the node may reach its LB VIPs",
    cite: '1281-1292 (allowFromNode → "-s <lbip> -j EXT")',
    sp: loadBalancer({ loadBalancerSourceRanges: ['203.0.113.0/24', '10.1.0.0/24'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: true,
    },
  },
  {
    name: "only the node's second address is in a range: not allowed (kube-proxy has one node IP per family)",
    cite: "1284 (cidr.Contains(proxier.nodeIP)); server.go detectNodeIPs keeps one IP per family, the node's first",
    node: { name: 'node-1', zone: 'zone-a', ips: ['10.1.0.10', '10.2.0.10'] },
    sp: loadBalancer({ loadBalancerSourceRanges: ['10.2.0.0/16'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: false,
    },
  },
  {
    name: 'node IP in a range but no endpoints: still allowed (IPVS adds the entry without looking at endpoints)',
    cite: 'ipvs 1124-1199 (inside the LB-VIP loop, no hasEndpoints test); iptables only reads it under usesFWChain (1266)',
    sp: loadBalancer({ loadBalancerSourceRanges: ['10.1.0.0/24'] }),
    want: {
      hasEndpoints: false, hasInternalEndpoints: false, hasExternalEndpoints: false, internalFilter: 'REJECT', externalFilter: 'REJECT',
      internalEndpoints: [], externalEndpoints: [],
      usesClusterEndpoints: false, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: false,
      usesFirewall: false, nodeAllowedBySourceRanges: true,
    },
  },
  {
    name: "IPv6: a range holding the node's IPv6 address",
    cite: '1284 (the IPv6 proxier gets nodeIPs[IPv6Protocol], iptables NewDualStackProxier 122)',
    family: 'IPv6',
    node: { name: 'node-1', zone: 'zone-a', ips: ['fd00:1::10'] },
    sp: loadBalancer({
      clusterIP: 'fd00:30::41', loadBalancerVIPs: ['2001:db8::10'], loadBalancerSourceRanges: ['fd00:1::/64'],
      endpoints: [ep('[fd00:244::5]:8080')],
    }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['[fd00:244::5]:8080'], externalEndpoints: ['[fd00:244::5]:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: true,
    },
  },
  {
    name: 'no node IP of this family: kube-proxy assumes 127.0.0.1, so a range holding it allows the node',
    cite: 'server.go detectNodeIPs 650-656 (nodeIPs default to 127.0.0.1 and ::1) → 1284 Contains(127.0.0.1)',
    node: { name: 'node-1', zone: 'zone-a', ips: [] },
    sp: loadBalancer({ loadBalancerSourceRanges: ['127.0.0.0/8'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: true,
    },
  },
  {
    name: 'no node IPv6 address: kube-proxy assumes ::1',
    cite: 'server.go detectNodeIPs 650-656 (net.IPv6loopback) → 1284 Contains(::1)',
    family: 'IPv6',
    node: { name: 'node-1', zone: 'zone-a', ips: [] },
    sp: loadBalancer({
      clusterIP: 'fd00:30::41', loadBalancerVIPs: ['2001:db8::10'], loadBalancerSourceRanges: ['::1/128'],
      endpoints: [ep('[fd00:244::5]:8080')],
    }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['[fd00:244::5]:8080'], externalEndpoints: ['[fd00:244::5]:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: true,
    },
  },
  {
    name: 'no node IP of this family and a range not holding loopback: not allowed',
    cite: 'server.go detectNodeIPs 650-656 → 1284 (127.0.0.1 is outside 10.1.0.0/16)',
    node: { name: 'node-1', zone: 'zone-a', ips: [] },
    sp: loadBalancer({ loadBalancerSourceRanges: ['10.1.0.0/16'], endpoints: [ep('10.0.1.1:8080')] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: true, usesExternalPath: true,
      usesFirewall: true, nodeAllowedBySourceRanges: false,
    },
  },

  // -- topology: the plan passes this node's name/zone and the gate (938) -------------------
  {
    name: 'zone hints: internal traffic to this zone only; ETP Local still sees every local endpoint',
    cite: '938 (proxier.nodeName, proxier.topologyLabels), 942, 946, 974-975',
    sp: nodePort({
      externalPolicyLocal: true,
      endpoints: [local('10.0.1.1:8080', { zones: ['zone-b'] }), ep('10.0.1.2:8080', { zones: ['zone-a'] }), ep('10.0.1.3:8080', { zones: ['zone-b'] })],
    }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.2:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: true, externallyAccessible: true, usesExternalPath: true, ...NONE,
    },
  },
  {
    name: 'node hints with PreferSameTrafficDistribution on: this node only',
    cite: '938 → topology.go topologyModeFromHints (gate on, every endpoint node-hinted, one for node-1)',
    nodeHints: true,
    sp: port({ endpoints: [ep('10.0.1.1:8080', { zones: ['zone-a'], nodes: ['node-1'] }), ep('10.0.1.2:8080', { zones: ['zone-a'], nodes: ['node-2'] })] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080'], externalEndpoints: ['10.0.1.1:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
  {
    name: 'node hints with PreferSameTrafficDistribution off: zone hints decide',
    cite: '938 → topology.go topologyModeFromHints (gate off: same-zone)',
    nodeHints: false,
    sp: port({ endpoints: [ep('10.0.1.1:8080', { zones: ['zone-a'], nodes: ['node-1'] }), ep('10.0.1.2:8080', { zones: ['zone-a'], nodes: ['node-2'] })] }),
    want: {
      hasEndpoints: true, hasInternalEndpoints: true, hasExternalEndpoints: true, internalFilter: null, externalFilter: null,
      internalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'], externalEndpoints: ['10.0.1.1:8080', '10.0.1.2:8080'],
      usesClusterEndpoints: true, usesLocalEndpoints: false, externallyAccessible: false, usesExternalPath: false, ...NONE,
    },
  },
];

const addrs = (eps: readonly Endpoint[]) => eps.map((e) => e.address).sort();

describe('planServicePort: the per-service-port decisions of syncProxyRules', () => {
  for (const r of rows) {
    it(r.name, () => {
      const ir = irFor(r.node ?? NODE, r.family ?? 'IPv4', r.nodeHints ?? true);
      const p = planServicePort(r.sp, planContext(ir));
      const f = filters(p);
      const got: Expected = {
        hasEndpoints: p.hasEndpoints,
        hasInternalEndpoints: p.hasInternalEndpoints,
        hasExternalEndpoints: p.hasExternalEndpoints,
        internalFilter: f.internal,
        externalFilter: f.external,
        internalEndpoints: addrs(p.internalEndpoints),
        externalEndpoints: addrs(p.externalEndpoints),
        usesClusterEndpoints: p.usesClusterEndpoints,
        usesLocalEndpoints: p.usesLocalEndpoints,
        externallyAccessible: p.externallyAccessible,
        usesExternalPath: p.usesExternalPath,
        usesFirewall: p.usesFirewall,
        nodeAllowedBySourceRanges: p.nodeAllowedBySourceRanges,
      };
      // Endpoint lists compared as sets (sorted here): the proxier's order is not the point.
      const want = { ...r.want, internalEndpoints: [...r.want.internalEndpoints].sort(), externalEndpoints: [...r.want.externalEndpoints].sort() };
      expect(got, r.cite).toEqual(want);
      if (r.healthCheckNodePort !== undefined) expect(p.sp.healthCheckNodePort, r.cite).toBe(r.healthCheckNodePort);
      // The plan carries CategorizeEndpoints' result unchanged (938).
      expect(p.hasEndpoints).toBe(p.categories.hasAnyEndpoints);
    });
  }
});

/**
 * The Kubernetes objects kpc reads, as they stand after decoding, API defaulting and
 * validation: every field the API server defaults is filled in, every field kube-proxy
 * ignores is dropped. Addresses stay strings here (validated, not yet canonical); the IR
 * builder parses and re-prints them.
 */

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
export type TrafficPolicy = 'Cluster' | 'Local';
export type IPFamilyName = 'IPv4' | 'IPv6';

export interface ObjectMeta {
  name: string;
  /** '' for cluster-scoped kinds (Node). */
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Kept for Services and Pods (the EndpointSlice controller's ownerReferences and targetRefs). */
  uid?: string;
  /** Kept for Services and Pods: a terminating Pod, a Service pending deletion. */
  deletionTimestamp?: string;
}

export interface ServicePort {
  /** '' when unnamed (only allowed when the Service has one port). */
  name: string;
  protocol: Protocol;
  port: number;
  /** A number, or a named port resolved per endpoint through EndpointSlice port names. */
  targetPort: number | string;
  /** 0 when not set / not allocated. */
  nodePort: number;
  /** Copied to the EndpointSlices the controller makes; kube-proxy ignores it. */
  appProtocol?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  /** Defaulted to 'VIP' when ip is set. */
  ipMode?: 'VIP' | 'Proxy';
}

export interface Service {
  kind: 'Service';
  metadata: ObjectMeta;
  spec: {
    type: ServiceType;
    /** '' for not set; 'None' for headless. */
    clusterIP: string;
    /** Defaulted from clusterIP ([clusterIP]) when empty. */
    clusterIPs: string[];
    /** Empty when neither set nor inferable from clusterIPs. */
    ipFamilies: IPFamilyName[];
    ipFamilyPolicy?: 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
    ports: ServicePort[];
    selector?: Record<string, string>;
    externalIPs: string[];
    /** As written (not trimmed); kube-proxy trims each entry itself. */
    loadBalancerSourceRanges: string[];
    externalName?: string;
    sessionAffinity: 'None' | 'ClientIP';
    /** Set (defaulted to 10800) exactly when sessionAffinity is ClientIP. */
    sessionAffinityTimeoutSeconds?: number;
    /** Set (defaulted to Cluster) exactly when the Service is externally accessible. */
    externalTrafficPolicy?: TrafficPolicy;
    /** Defaulted to Cluster except for ExternalName. */
    internalTrafficPolicy?: TrafficPolicy;
    /** 0 when not set. */
    healthCheckNodePort: number;
    allocateLoadBalancerNodePorts?: boolean;
    trafficDistribution?: string;
    /** Set (true) only when true; cluster DNS reads it (kube-proxy does not). */
    publishNotReadyAddresses?: true;
  };
  status: {
    loadBalancerIngress: LoadBalancerIngress[];
  };
}

export interface EndpointConditions {
  /** undefined means "unknown", which consumers read as true / true / false. */
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface Endpoint {
  addresses: string[];
  conditions: EndpointConditions;
  hostname?: string;
  nodeName?: string;
  zone?: string;
  hints?: {
    forZones: string[];
    forNodes: string[];
  };
}

export interface EndpointPort {
  /** Defaulted to ''. */
  name: string;
  /** Defaulted to TCP. */
  protocol: Protocol;
  /** undefined when not set: kube-proxy ignores such a port. */
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice {
  kind: 'EndpointSlice';
  metadata: ObjectMeta;
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: Endpoint[];
  ports: EndpointPort[];
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
}

export interface EndpointSubset {
  addresses: EndpointAddress[];
  notReadyAddresses: EndpointAddress[];
  ports: Array<{ name: string; port: number; protocol: Protocol; appProtocol?: string }>;
}

/** Legacy v1 Endpoints; converted to slices the way the mirroring controller does. */
export interface Endpoints {
  kind: 'Endpoints';
  metadata: ObjectMeta;
  subsets: EndpointSubset[];
}

export interface NodeAddress {
  type: 'Hostname' | 'InternalIP' | 'ExternalIP' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

export interface Node {
  kind: 'Node';
  metadata: ObjectMeta;
  spec: {
    podCIDR?: string;
    podCIDRs: string[];
  };
  status: {
    addresses: NodeAddress[];
    /** Set when the first Ready condition is "True" (the EndpointSlice controller's topology cache). */
    ready?: true;
    /** status.allocatable.cpu as written, when set (validated). */
    allocatableCPU?: string;
  };
}

/** A container port a named targetPort can resolve to. */
export interface PodPort {
  name: string;
  containerPort: number;
  protocol: Protocol;
}

/**
 * A v1 Pod, as the EndpointSlice controller reads it: labels (selector matching),
 * metadata.deletionTimestamp (terminating), spec.nodeName, hostname and subdomain, the named
 * ports of its containers and sidecars (restartable init containers) in FindPort's search
 * order, the phase, the Ready condition and the pod IPs (the v1 podIP reconciled into podIPs,
 * as the API server's conversion does).
 */
export interface Pod {
  kind: 'Pod';
  metadata: ObjectMeta;
  spec: {
    /** '' when not scheduled. */
    nodeName: string;
    hostname: string;
    subdomain: string;
    /** Named container ports: containers first, then sidecars, each in order. */
    namedPorts: PodPort[];
  };
  status: {
    /** '' when not set. */
    phase: string;
    /** The Ready condition's status is "True". */
    ready: boolean;
    /** As written (validated, not yet canonical). */
    podIPs: string[];
  };
}

/** networking.k8s.io/v1 ServiceCIDR: one or two of the cluster's Service ranges (spec.cidrs, as written). */
export interface ServiceCIDR {
  kind: 'ServiceCIDR';
  metadata: ObjectMeta;
  spec: { cidrs: string[] };
}

export type KubeObject = Service | EndpointSlice | Endpoints | Node | Pod | ServiceCIDR;

/**
 * What one IPVS sync leaves behind, as data: the virtual servers with their real servers,
 * the ipset entries, the addresses bound to kube-ipvs0 and the LB VIPs the node itself may
 * not reach. Built by sync.ts, printed by ipvsadm.ts, ipset.ts, iptables-rules.ts, addresses.ts.
 */

import type { Protocol } from '../../ir/model.js';
import type { IPFamily } from '../../net/ip.js';
import type { SetEntries, SetKey } from './sets.js';

/** A destination: always masquerade (`-m`) with weight 1 (kube-proxy never writes another). */
export interface RealServer {
  ip: string;
  port: number;
  /** `ip:port` / `[ip]:port`, as ipvsadm prints it. */
  address: string;
}

export type VirtualServerKind = 'cluster-ip' | 'external-ip' | 'load-balancer' | 'node-port';

export interface VirtualServer {
  protocol: Protocol;
  /** Canonical IP of the proxier's family. */
  ip: string;
  port: number;
  scheduler: string;
  /** ClientIP affinity: persistent with this timeout (seconds); undefined = not persistent. */
  persistenceTimeout?: number;
  /** `-b` text (only `mh-port`, for the mh scheduler). */
  schedFlags?: string;
  realServers: RealServer[];
  /** Which service port (and entry point) last wrote this virtual server; for explanations. */
  spn: string;
  kind: VirtualServerKind;
}

/** An LB VIP:port the node itself must not reach (no source range contains the node IP). */
export interface NoNodeAccessEntry {
  ip: string;
  protocol: 'tcp' | 'udp' | 'sctp';
  port: number;
}

export interface IpvsState {
  family: IPFamily;
  /** One per `ip:port/PROTOCOL` (a later service port overwrites an earlier one, as in kube-proxy). */
  virtualServers: VirtualServer[];
  sets: SetEntries;
  /** Addresses to bind on kube-ipvs0 (= KUBE-IPVS-IPS), sorted. */
  bindAddresses: string[];
  /** In sync order (the KUBE-IPVS-OUT-FILTER rule order). */
  noNodeAccess: NoNodeAccessEntry[];
  /** The node addresses that got node-port virtual servers, sorted. */
  nodePortIPs: string[];
  /** Set entries the kernel would refuse, left out (kube-proxy logs each and goes on), in sync order. */
  refused: RefusedEntry[];
}

/** An ipset entry left out because the kernel refuses it (an unspecified address). */
export interface RefusedEntry {
  set: SetKey;
  entry: string;
  /** The service port that wanted it. */
  spn: string;
}

/** kube-proxy's VirtualServer.String(): `ip:port/PROTOCOL` (IPv6 in brackets). */
export function virtualServerKey(vs: Pick<VirtualServer, 'ip' | 'port' | 'protocol'>): string {
  return vs.ip.includes(':') ? `[${vs.ip}]:${vs.port}/${vs.protocol}` : `${vs.ip}:${vs.port}/${vs.protocol}`;
}

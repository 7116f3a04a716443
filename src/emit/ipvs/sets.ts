/**
 * The 17 ipsets of kube-proxy's IPVS mode (pkg/proxy/ipvs/ipset.go constants and the
 * `ipsetInfo` table of proxier.go), in kube-proxy's table order.
 *
 * The IPv6 proxier renames each set with its first `KUBE-` replaced by `KUBE-6-`, cut to 31
 * characters (NewIPSet): KUBE-6-LOAD-BALANCER-SOURCE-CID and KUBE-6-NODE-PORT-LOCAL-SCTP-HAS.
 * The comments are only used in iptables `-m comment`; kube-proxy never creates sets with the
 * ipset comment extension.
 */

import type { IPFamily } from '../../net/ip.js';

export type SetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

/** Keys kpc uses for the sets (kube-proxy's IPv4 names). */
export type SetKey =
  | 'KUBE-LOOP-BACK'
  | 'KUBE-CLUSTER-IP'
  | 'KUBE-EXTERNAL-IP'
  | 'KUBE-EXTERNAL-IP-LOCAL'
  | 'KUBE-LOAD-BALANCER'
  | 'KUBE-LOAD-BALANCER-FW'
  | 'KUBE-LOAD-BALANCER-LOCAL'
  | 'KUBE-LOAD-BALANCER-SOURCE-IP'
  | 'KUBE-LOAD-BALANCER-SOURCE-CIDR'
  | 'KUBE-NODE-PORT-TCP'
  | 'KUBE-NODE-PORT-LOCAL-TCP'
  | 'KUBE-NODE-PORT-UDP'
  | 'KUBE-NODE-PORT-LOCAL-UDP'
  | 'KUBE-NODE-PORT-SCTP-HASH'
  | 'KUBE-NODE-PORT-LOCAL-SCTP-HASH'
  | 'KUBE-HEALTH-CHECK-NODE-PORT'
  | 'KUBE-IPVS-IPS';

export interface SetInfo {
  key: SetKey;
  type: SetType;
  comment: string;
}

/** proxier.go `ipsetInfo`, in its order (the order kpc writes the sets in). */
export const IPSET_INFO: readonly SetInfo[] = [
  { key: 'KUBE-LOOP-BACK', type: 'hash:ip,port,ip', comment: 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose' },
  { key: 'KUBE-CLUSTER-IP', type: 'hash:ip,port', comment: 'Kubernetes service cluster ip + port for masquerade purpose' },
  { key: 'KUBE-EXTERNAL-IP', type: 'hash:ip,port', comment: 'Kubernetes service external ip + port for masquerade and filter purpose' },
  { key: 'KUBE-EXTERNAL-IP-LOCAL', type: 'hash:ip,port', comment: 'Kubernetes service external ip + port with externalTrafficPolicy=local' },
  { key: 'KUBE-LOAD-BALANCER', type: 'hash:ip,port', comment: 'Kubernetes service lb portal' },
  { key: 'KUBE-LOAD-BALANCER-FW', type: 'hash:ip,port', comment: 'Kubernetes service load balancer ip + port for load balancer with sourceRange' },
  { key: 'KUBE-LOAD-BALANCER-LOCAL', type: 'hash:ip,port', comment: 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local' },
  { key: 'KUBE-LOAD-BALANCER-SOURCE-IP', type: 'hash:ip,port,ip', comment: 'Kubernetes service load balancer ip + port + source IP for packet filter purpose' },
  { key: 'KUBE-LOAD-BALANCER-SOURCE-CIDR', type: 'hash:ip,port,net', comment: 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose' },
  { key: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port for masquerade purpose' },
  { key: 'KUBE-NODE-PORT-LOCAL-TCP', type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port with externalTrafficPolicy=local' },
  { key: 'KUBE-NODE-PORT-UDP', type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port for masquerade purpose' },
  { key: 'KUBE-NODE-PORT-LOCAL-UDP', type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port with externalTrafficPolicy=local' },
  { key: 'KUBE-NODE-PORT-SCTP-HASH', type: 'hash:ip,port', comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'" },
  { key: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH', type: 'hash:ip,port', comment: "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'" },
  { key: 'KUBE-HEALTH-CHECK-NODE-PORT', type: 'bitmap:port', comment: 'Kubernetes health check node port' },
  { key: 'KUBE-IPVS-IPS', type: 'hash:ip', comment: 'Addresses on the ipvs interface' },
];

const INFO_BY_KEY: ReadonlyMap<SetKey, SetInfo> = new Map(IPSET_INFO.map((i) => [i.key, i]));

export function setInfo(key: SetKey): SetInfo {
  return INFO_BY_KEY.get(key)!;
}

/** ipset's IPSET_MAXNAMELEN is 32 including the NUL. */
export const MAX_SET_NAME = 31;

/** The set's name for this family's proxier (NewIPSet). */
export function setName(key: SetKey, family: IPFamily): string {
  if (family === 'IPv4') return key;
  return key.replace('KUBE-', 'KUBE-6-').slice(0, MAX_SET_NAME);
}

/** kube-proxy creates every hash set with this maxelem (ipset's default; pkg/util/ipset DefaultMaxElem). */
export const SET_MAX_ELEMENTS = 65536;

/** `create` options (pkg/proxy/ipvs/ipset createSet with the setIPSetDefaults values). */
export function createOptions(type: SetType, family: IPFamily): string {
  if (type === 'bitmap:port') return 'range 0-65535';
  return `family ${family === 'IPv4' ? 'inet' : 'inet6'} hashsize 1024 maxelem ${SET_MAX_ELEMENTS}`;
}

/**
 * Hash sets that hold more entries than their maxelem. The kernel refuses the entries past
 * it ("Hash is full"): kube-proxy logs an error per entry it cannot add, and `ipset restore`
 * of kpc's file stops there. Reported, never silently cut: the output is what kube-proxy
 * would try to program.
 */
export function overfullSets(entries: SetSizes, family: IPFamily): Array<{ name: string; size: number }> {
  const out: Array<{ name: string; size: number }> = [];
  for (const info of IPSET_INFO) {
    const size = entries.get(info.key)?.size ?? 0;
    if (info.type !== 'bitmap:port' && size > SET_MAX_ELEMENTS) out.push({ name: setName(info.key, family), size });
  }
  return out;
}

/** How many entries each set holds: all the iptables rules and the capacity warnings need of a state's sets. */
export type SetSizes = ReadonlyMap<SetKey, { readonly size: number }>;

/** The entries each set will hold after the sync, per set (Entry.String() texts). */
export type SetEntries = Map<SetKey, Set<string>>;

export function emptySetEntries(): SetEntries {
  return new Map(IPSET_INFO.map((i) => [i.key, new Set<string>()]));
}

/**
 * `iptables.rules`: the iptables-restore payload of the IPVS proxier, byte for byte in the
 * order kube-proxy writes it (proxier.go: natChains + natRules + filterChains + filterRules,
 * built by createAndLinkKubeChain, writeIptablesRules and acceptIPVSTraffic), for
 * `iptables-restore --noflush` (IPv6: ip6tables-restore).
 *
 *   nat    KUBE-SERVICES ── -s 127.0.0.0/8 RETURN; LB set → KUBE-LOAD-BALANCER; cluster-IP,
 *                           external-IP masquerade marks and ACCEPTs; LOCAL dst → KUBE-NODE-PORT;
 *                           ACCEPT cluster IP / LB (must stay last)
 *          KUBE-NODE-PORT ─ RETURN for ETP=Local node ports, else KUBE-MARK-MASQ
 *          KUBE-LOAD-BALANCER ─ RETURN for ETP=Local VIPs, else KUBE-MARK-MASQ
 *          KUBE-POSTROUTING ─ LOOP-BACK hairpin MASQUERADE; marked packets MASQUERADE
 *   filter KUBE-PROXY-FIREWALL → KUBE-SOURCE-RANGES-FIREWALL (allowed ranges RETURN, rest DROP)
 *          KUBE-IPVS-OUT-FILTER ─ node may not reach source-range-restricted VIPs
 *          KUBE-FORWARD, KUBE-NODE-PORT (health checks), KUBE-IPVS-FILTER (kube-ipvs0 guard)
 *
 * A rule that matches a set is written only when that set has entries; the KUBE-IPVS-FILTER
 * rules always are. With `standalone` the jumps from the built-in chains that kube-proxy
 * installs with `iptables -I` (iptablesJumpChain) come right after each table's chain lines,
 * as `-I` lines in kube-proxy's order, so the final order in the built-in chains is the same.
 */

import type { ProxyIR } from '../../ir/model.js';
import { masqueradeMark } from '../common/masquerade-mark.js';
import { detectorIfNotLocal } from '../common/local-detector.js';
import { chainName } from '../../lang/iptables/safe-text.js';
import {
  IPVS_BUILTIN_JUMPS,
  jumpArgs,
  KUBE_FORWARD,
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
  KUBE_LOAD_BALANCER,
  KUBE_MARK_MASQ,
  KUBE_NODE_PORT,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  KUBE_SOURCE_RANGES_FIREWALL,
} from '../../lang/iptables/chains.js';
import { fixedComment, safeIP, safePort, safeProtocol, safeSetName } from './safe-text.js';
import { setInfo, setName, type SetKey, type SetSizes } from './sets.js';
import type { IpvsState } from './state.js';

type Table = 'nat' | 'filter';

/** proxier.go iptablesChains: declared (and so flushed) on every restore, in this order. */
export const IPVS_CHAINS: readonly { table: Table; chain: string }[] = [
  { table: 'nat', chain: KUBE_SERVICES },
  { table: 'nat', chain: KUBE_POSTROUTING },
  { table: 'nat', chain: KUBE_NODE_PORT },
  { table: 'nat', chain: KUBE_LOAD_BALANCER },
  { table: 'nat', chain: KUBE_MARK_MASQ },
  { table: 'filter', chain: KUBE_FORWARD },
  { table: 'filter', chain: KUBE_NODE_PORT },
  { table: 'filter', chain: KUBE_PROXY_FIREWALL },
  { table: 'filter', chain: KUBE_SOURCE_RANGES_FIREWALL },
  { table: 'filter', chain: KUBE_IPVS_FILTER },
  { table: 'filter', chain: KUBE_IPVS_OUT_FILTER },
];

/** proxier.go ipsetWithIptablesChain: rules written per non-empty set, in this order. */
const SET_JUMPS: readonly { set: SetKey; table: Table; from: string; to: string; matchType: string; proto?: string }[] = [
  { set: 'KUBE-LOOP-BACK', table: 'nat', from: KUBE_POSTROUTING, to: 'MASQUERADE', matchType: 'dst,dst,src' },
  { set: 'KUBE-LOAD-BALANCER', table: 'nat', from: KUBE_SERVICES, to: KUBE_LOAD_BALANCER, matchType: 'dst,dst' },
  { set: 'KUBE-LOAD-BALANCER-LOCAL', table: 'nat', from: KUBE_LOAD_BALANCER, to: 'RETURN', matchType: 'dst,dst' },
  { set: 'KUBE-NODE-PORT-LOCAL-TCP', table: 'nat', from: KUBE_NODE_PORT, to: 'RETURN', matchType: 'dst', proto: 'tcp' },
  { set: 'KUBE-NODE-PORT-TCP', table: 'nat', from: KUBE_NODE_PORT, to: KUBE_MARK_MASQ, matchType: 'dst', proto: 'tcp' },
  { set: 'KUBE-NODE-PORT-LOCAL-UDP', table: 'nat', from: KUBE_NODE_PORT, to: 'RETURN', matchType: 'dst', proto: 'udp' },
  { set: 'KUBE-NODE-PORT-UDP', table: 'nat', from: KUBE_NODE_PORT, to: KUBE_MARK_MASQ, matchType: 'dst', proto: 'udp' },
  { set: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH', table: 'nat', from: KUBE_NODE_PORT, to: 'RETURN', matchType: 'dst,dst', proto: 'sctp' },
  { set: 'KUBE-NODE-PORT-SCTP-HASH', table: 'nat', from: KUBE_NODE_PORT, to: KUBE_MARK_MASQ, matchType: 'dst,dst', proto: 'sctp' },
  { set: 'KUBE-LOAD-BALANCER-FW', table: 'filter', from: KUBE_PROXY_FIREWALL, to: KUBE_SOURCE_RANGES_FIREWALL, matchType: 'dst,dst' },
  { set: 'KUBE-LOAD-BALANCER-SOURCE-CIDR', table: 'filter', from: KUBE_SOURCE_RANGES_FIREWALL, to: 'RETURN', matchType: 'dst,dst,src' },
  { set: 'KUBE-LOAD-BALANCER-SOURCE-IP', table: 'filter', from: KUBE_SOURCE_RANGES_FIREWALL, to: 'RETURN', matchType: 'dst,dst,src' },
];

export interface IptablesRulesOptions {
  standalone: boolean;
}

/** `state`: of the sync's state, only which sets are empty and the no-node-access entries count. */
export function renderIptablesRules(ir: ProxyIR, state: Pick<IpvsState, 'noNodeAccess'> & { sets: SetSizes }, options: IptablesRulesOptions): string {
  const family = ir.family;
  const name = (key: SetKey) => safeSetName(setName(key, family));
  const comment = (key: SetKey) => fixedComment(setInfo(key).comment);
  const empty = (key: SetKey) => state.sets.get(key)!.size === 0;
  const mark = masqueradeMark(ir.knobs.masqueradeBit);

  const natChains = ['*nat'];
  const filterChains = ['*filter'];
  for (const { table, chain } of IPVS_CHAINS) (table === 'nat' ? natChains : filterChains).push(`:${chainName(chain)} - [0:0]`);

  const nat: string[] = [];
  const filter: string[] = [];
  if (options.standalone) {
    for (const j of IPVS_BUILTIN_JUMPS) (j.table === 'nat' ? nat : filter).push(`-I ${j.from} ${jumpArgs(j)}`);
  }

  // Dismiss connections to localhost early in the service chain.
  nat.push(`-A ${KUBE_SERVICES} -s ${family === 'IPv4' ? '127.0.0.0/8' : '::1/128'} -j RETURN`);

  for (const j of SET_JUMPS) {
    if (empty(j.set)) continue;
    const proto = j.proto ? ` -p ${j.proto}` : '';
    (j.table === 'nat' ? nat : filter).push(`-A ${j.from}${proto} -m comment --comment ${comment(j.set)} -m set --match-set ${name(j.set)} ${j.matchType} -j ${j.to}`);
  }

  if (!empty('KUBE-CLUSTER-IP')) {
    const head = `-A ${KUBE_SERVICES} -m comment --comment ${comment('KUBE-CLUSTER-IP')} -m set --match-set ${name('KUBE-CLUSTER-IP')}`;
    const detector = ir.knobs.localDetector;
    if (ir.knobs.masqueradeAll) nat.push(`${head} dst,dst -j ${KUBE_MARK_MASQ}`);
    // Off-cluster traffic to a service VIP (a static route to any node) may bounce off-node.
    else if (detector) nat.push(`${head} dst,dst ${detectorIfNotLocal(detector)} -j ${KUBE_MARK_MASQ}`);
    // No detector: masquerade node-originated traffic that picked a kube-ipvs0 VIP as source.
    else nat.push(`${head} src,dst -j ${KUBE_MARK_MASQ}`);
  }

  const externalIPRules = (head: string) => {
    // From off the machine (not a bridge, not a local process) ...
    nat.push(`${head} -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT`);
    // ... or to an external IP the node routes locally (e.g. GCE load-balancer addresses).
    nat.push(`${head} -m addrtype --dst-type LOCAL -j ACCEPT`);
  };
  if (!empty('KUBE-EXTERNAL-IP')) {
    const head = `-A ${KUBE_SERVICES} -m comment --comment ${comment('KUBE-EXTERNAL-IP')} -m set --match-set ${name('KUBE-EXTERNAL-IP')} dst,dst`;
    nat.push(`${head} -j ${KUBE_MARK_MASQ}`);
    externalIPRules(head);
  }
  if (!empty('KUBE-EXTERNAL-IP-LOCAL')) {
    externalIPRules(`-A ${KUBE_SERVICES} -m comment --comment ${comment('KUBE-EXTERNAL-IP-LOCAL')} -m set --match-set ${name('KUBE-EXTERNAL-IP-LOCAL')} dst,dst`);
  }

  nat.push(`-A ${KUBE_SERVICES} -m addrtype --dst-type LOCAL -j ${KUBE_NODE_PORT}`);
  nat.push(`-A ${KUBE_LOAD_BALANCER} -j ${KUBE_MARK_MASQ}`);
  filter.push(`-A ${KUBE_SOURCE_RANGES_FIREWALL} -j DROP`);

  // Source and destination are both the VIP when the node itself connects to its local VIP.
  for (const e of state.noNodeAccess) {
    const ip = safeIP(e.ip, family);
    filter.push(`-A ${KUBE_IPVS_OUT_FILTER} -s ${ip} -m ipvs --vaddr ${ip} --vproto ${safeProtocol(e.protocol)} --vport ${safePort(e.port)} -j DROP`);
  }

  // acceptIPVSTraffic: must stay at the end of KUBE-SERVICES.
  for (const key of ['KUBE-CLUSTER-IP', 'KUBE-LOAD-BALANCER'] as const) {
    if (!empty(key)) nat.push(`-A ${KUBE_SERVICES} -m set --match-set ${name(key)} dst,dst -j ACCEPT`);
  }

  filter.push(`-A ${KUBE_FORWARD} -m comment --comment "kubernetes forwarding rules" -m mark --mark ${mark}/${mark} -j ACCEPT`);
  filter.push(`-A ${KUBE_FORWARD} -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`);
  filter.push(`-A ${KUBE_NODE_PORT} -m comment --comment ${comment('KUBE-HEALTH-CHECK-NODE-PORT')} -m set --match-set ${name('KUBE-HEALTH-CHECK-NODE-PORT')} dst -j ACCEPT`);

  // Keep host ports off the VIPs on kube-ipvs0 (kubernetes#72236).
  filter.push(`-A ${KUBE_IPVS_FILTER} -m set --match-set ${name('KUBE-LOAD-BALANCER')} dst,dst -j RETURN`);
  filter.push(`-A ${KUBE_IPVS_FILTER} -m set --match-set ${name('KUBE-CLUSTER-IP')} dst,dst -j RETURN`);
  filter.push(`-A ${KUBE_IPVS_FILTER} -m set --match-set ${name('KUBE-EXTERNAL-IP')} dst,dst -j RETURN`);
  filter.push(`-A ${KUBE_IPVS_FILTER} -m set --match-set ${name('KUBE-EXTERNAL-IP-LOCAL')} dst,dst -j RETURN`);
  filter.push(`-A ${KUBE_IPVS_FILTER} -m set --match-set ${name('KUBE-HEALTH-CHECK-NODE-PORT')} dst -j RETURN`);
  filter.push(`-A ${KUBE_IPVS_FILTER} -m conntrack --ctstate NEW -m set --match-set ${name('KUBE-IPVS-IPS')} dst -j REJECT`);

  nat.push(`-A ${KUBE_POSTROUTING} -m mark ! --mark ${mark}/${mark} -j RETURN`);
  // Clear the mark so a packet that traverses the stack again is not masqueraded twice.
  nat.push(`-A ${KUBE_POSTROUTING} -j MARK --xor-mark ${mark}`);
  nat.push(`-A ${KUBE_POSTROUTING} -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE${ir.knobs.iptables.randomFully ? ' --random-fully' : ''}`);
  nat.push(`-A ${KUBE_MARK_MASQ} -j MARK --or-mark ${mark}`);

  return [...natChains, ...nat, 'COMMIT', ...filterChains, ...filter, 'COMMIT'].join('\n') + '\n';
}

/**
 * The fixed part of kube-proxy's nftables table: setupNFTables (pkg/proxy/nftables/proxier.go),
 * as a first full sync on an empty table writes it. Era differences come from
 * releases/behaviour.ts (NftablesBehaviour).
 */

import type { ProxyIR } from '../../ir/model.js';
import {
  CLUSTER_IPS_CHECK,
  CLUSTER_IPS_SET,
  concat,
  FILTER_FORWARD,
  FILTER_INPUT,
  FILTER_OUTPUT,
  FILTER_OUTPUT_PRE_DNAT,
  FILTER_PREROUTING_PRE_DNAT,
  FIREWALL_CHECK,
  FIREWALL_IPS_MAP,
  HAIRPIN_CONNECTIONS_SET,
  localhostNodePortRejectChain,
  localhostNodePortRejectedCounter,
  LOCALHOST_NODEPORT_REJECT_MAP,
  MARK_MASQ_CHAIN,
  MASQUERADING_CHAIN,
  NAT_OUTPUT,
  NAT_POSTROUTING,
  NAT_PREROUTING,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  NODEPORT_ENDPOINTS_CHECK,
  NODEPORT_IPS_SET,
  nftWord,
  REJECT_CHAIN,
  SERVICE_ENDPOINTS_CHECK,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  SERVICES_CHAIN,
  type NftBaseChainSpec,
} from '../../lang/nftables/index.js';
import type { Protocol } from '../../ir/model.js';
import type { SyncContext } from './context.js';

/** nftablesBaseChains, in kube-proxy's order; priorities as knftables ParsePriority writes them. */
export const BASE_CHAINS: ReadonlyArray<{ name: string } & NftBaseChainSpec> = [
  { name: FILTER_PREROUTING_PRE_DNAT, type: 'filter', hook: 'prerouting', priority: -110 },
  { name: FILTER_OUTPUT_PRE_DNAT, type: 'filter', hook: 'output', priority: -110 },
  { name: FILTER_INPUT, type: 'filter', hook: 'input', priority: 0 },
  { name: FILTER_FORWARD, type: 'filter', hook: 'forward', priority: 0 },
  { name: FILTER_OUTPUT, type: 'filter', hook: 'output', priority: 0 },
  { name: NAT_PREROUTING, type: 'nat', hook: 'prerouting', priority: -100 },
  { name: NAT_OUTPUT, type: 'nat', hook: 'output', priority: -100 },
  { name: NAT_POSTROUTING, type: 'nat', hook: 'postrouting', priority: 100 },
];

/** nftablesJumpChains: [destination, source, extra match]. */
const JUMP_CHAINS: ReadonlyArray<[string, string, string]> = [
  [NODEPORT_ENDPOINTS_CHECK, FILTER_INPUT, 'ct state new'],
  [SERVICE_ENDPOINTS_CHECK, FILTER_INPUT, 'ct state new'],
  [SERVICE_ENDPOINTS_CHECK, FILTER_FORWARD, 'ct state new'],
  [SERVICE_ENDPOINTS_CHECK, FILTER_OUTPUT, 'ct state new'],
  [FIREWALL_CHECK, FILTER_PREROUTING_PRE_DNAT, 'ct state new'],
  [FIREWALL_CHECK, FILTER_OUTPUT_PRE_DNAT, 'ct state new'],
  [SERVICES_CHAIN, NAT_OUTPUT, ''],
  [SERVICES_CHAIN, NAT_PREROUTING, ''],
  [MASQUERADING_CHAIN, NAT_POSTROUTING, ''],
  [CLUSTER_IPS_CHECK, FILTER_FORWARD, 'ct state new'],
  [CLUSTER_IPS_CHECK, FILTER_OUTPUT, 'ct state new'],
];

/** metrics.LocalhostNodePortRejectableProtocols, and the ones the userspace proxy cannot serve. */
export const LOCALHOST_REJECTABLE: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];
const LOCALHOST_REJECTED_WITH_PROXY: readonly Protocol[] = ['UDP', 'SCTP'];

/** localhostNodePortRejectProtocols(): none with the gate off. */
export function localhostRejectProtocols(ir: ProxyIR): readonly Protocol[] {
  const k = ir.knobs.nftables;
  if (!k.localhostNodePorts) return [];
  return k.localhostNodePortProxy ? LOCALHOST_REJECTED_WITH_PROXY : LOCALHOST_REJECTABLE;
}

/** The node's addresses that accept node ports (GetNodeIPs less loopback), sorted (kube-proxy: map order). */
export function nodePortIPs(ir: ProxyIR, matches: (ip: string) => boolean): string[] {
  return [...new Set(ir.node.ips.filter(matches))].sort();
}

export function writeSetup(ctx: SyncContext, nodeIPs: readonly string[]): void {
  const { tx, ir, ipX, addrType, behaviour: b } = ctx;
  const matchAll = ir.knobs.nodePortAddresses.length === 0;
  const loopback = ir.family === 'IPv4' ? '127.0.0.0/8' : '::1';
  const matchNotLocalhost = `${ipX} daddr != ${loopback}`;
  const matchLocalhost = `${ipX} daddr ${loopback}`;

  tx.add({ kind: 'table', comment: 'rules for kube-proxy' });
  // The first sync of a process: add+delete of every base chain, so a changed priority applies.
  for (const bc of BASE_CHAINS) {
    tx.add({ kind: 'chain', name: bc.name });
    tx.delete({ kind: 'chain', name: bc.name });
  }
  for (const { name, type, hook, priority } of BASE_CHAINS) {
    tx.add({ kind: 'chain', name, base: { type, hook, priority } });
    tx.flush({ kind: 'chain', name });
  }
  const created = new Set<string>();
  const ensure = (name: string) => ctx.ensureChain(name, created);
  for (const [dst, src, extra] of JUMP_CHAINS) {
    ensure(dst);
    tx.add({ kind: 'rule', chain: src, rule: concat(extra === '' ? [] : [extra], 'jump', dst) });
  }
  for (const c of b.markChain ? [SERVICES_CHAIN, CLUSTER_IPS_CHECK, MASQUERADING_CHAIN, MARK_MASQ_CHAIN] : [SERVICES_CHAIN, CLUSTER_IPS_CHECK, MASQUERADING_CHAIN]) ensure(c);

  const mark = ctx.mark;
  if (b.markChain) {
    tx.add({ kind: 'rule', chain: MARK_MASQ_CHAIN, rule: concat('mark', 'set', 'mark', 'or', mark) });
    tx.add({ kind: 'rule', chain: MASQUERADING_CHAIN, rule: concat('mark', 'and', mark, '==', '0', 'return') });
    tx.add({ kind: 'rule', chain: MASQUERADING_CHAIN, rule: concat('mark', 'set', 'mark', 'xor', mark) });
    tx.add({ kind: 'rule', chain: MASQUERADING_CHAIN, rule: 'masquerade fully-random' });
  } else {
    tx.add({ kind: 'set', name: HAIRPIN_CONNECTIONS_SET, type: `${addrType} . ${addrType} . inet_proto . inet_service`, comment: 'service hairpin connections' });
    tx.add({ kind: 'rule', chain: MASQUERADING_CHAIN, rule: concat('mark', 'and', mark, '!=', '0', 'mark', 'set', 'mark', 'xor', mark, 'masquerade fully-random') });
    tx.add({
      kind: 'rule',
      chain: MASQUERADING_CHAIN,
      rule: concat('ct status dnat', ipX, 'saddr', '.', ipX, 'daddr', '.', 'meta l4proto', '.', 'th dport', '@', HAIRPIN_CONNECTIONS_SET, 'masquerade fully-random'),
    });
  }

  tx.add({ kind: 'set', name: CLUSTER_IPS_SET, type: addrType, comment: 'Active ClusterIPs' });
  tx.add({ kind: 'rule', chain: CLUSTER_IPS_CHECK, rule: concat(ipX, 'daddr', '@', CLUSTER_IPS_SET, 'reject'), comment: 'Reject traffic to invalid ports of ClusterIPs' });
  const serviceCIDRs = ir.knobs.nftables.serviceCIDRs;
  if (serviceCIDRs.length > 0) {
    // proxier.serviceCIDRs is strings.Join(cidrs, ","): one word inside the braces.
    tx.add({ kind: 'rule', chain: CLUSTER_IPS_CHECK, rule: concat(ipX, 'daddr', '{', serviceCIDRs.map(nftWord).join(','), '}', 'drop'), comment: 'Drop traffic to unallocated ClusterIPs' });
  }

  tx.add({ kind: 'set', name: NODEPORT_IPS_SET, type: addrType, comment: 'IPs that accept NodePort traffic' });
  if (matchAll) {
    tx.delete({ kind: 'set', name: NODEPORT_IPS_SET, type: addrType });
  } else {
    tx.flush({ kind: 'set', name: NODEPORT_IPS_SET, type: addrType });
    for (const ip of nodeIPs) tx.add({ kind: 'element', container: NODEPORT_IPS_SET, key: [ip] });
  }

  tx.add({ kind: 'map', name: NO_ENDPOINT_SERVICES_MAP, type: `${addrType} . inet_proto . inet_service : verdict`, comment: 'vmap to drop or reject packets to services with no endpoints' });
  tx.add({ kind: 'map', name: NO_ENDPOINT_NODEPORTS_MAP, type: 'inet_proto . inet_service : verdict', comment: 'vmap to drop or reject packets to service nodeports with no endpoints' });
  tx.add({ kind: 'chain', name: REJECT_CHAIN, comment: 'helper for @no-endpoint-services / @no-endpoint-nodeports' });
  tx.flush({ kind: 'chain', name: REJECT_CHAIN });
  tx.add({ kind: 'rule', chain: REJECT_CHAIN, rule: 'reject' });
  tx.add({ kind: 'rule', chain: SERVICE_ENDPOINTS_CHECK, rule: concat(ipX, 'daddr', '.', 'meta l4proto', '.', 'th dport', 'vmap', '@', NO_ENDPOINT_SERVICES_MAP) });
  tx.add({
    kind: 'rule',
    chain: NODEPORT_ENDPOINTS_CHECK,
    rule: matchAll
      ? concat(matchNotLocalhost, 'meta l4proto . th dport', 'vmap', '@', NO_ENDPOINT_NODEPORTS_MAP)
      : concat(ipX, 'daddr', '@', NODEPORT_IPS_SET, 'meta l4proto . th dport', 'vmap', '@', NO_ENDPOINT_NODEPORTS_MAP),
  });

  if (b.localhostNodePortObjects) {
    const rejected = localhostRejectProtocols(ir);
    tx.add({ kind: 'map', name: LOCALHOST_NODEPORT_REJECT_MAP, type: 'inet_proto . inet_service : verdict', comment: 'localhost NodePorts rejected by kube-proxy' });
    if (rejected.length > 0) {
      for (const p of rejected) {
        const counter = localhostNodePortRejectedCounter(p);
        tx.add({ kind: 'counter', name: counter });
        const chain = localhostNodePortRejectChain(p);
        ensure(chain);
        tx.add({ kind: 'rule', chain, rule: concat('counter name', `"${counter}"`, 'reject') });
      }
      tx.add({ kind: 'rule', chain: NODEPORT_ENDPOINTS_CHECK, rule: concat(matchLocalhost, 'meta l4proto . th dport', 'vmap', '@', LOCALHOST_NODEPORT_REJECT_MAP) });
    } else {
      tx.delete({ kind: 'map', name: LOCALHOST_NODEPORT_REJECT_MAP, type: '' });
    }
    for (const p of LOCALHOST_REJECTABLE) {
      if (rejected.includes(p)) continue;
      const chain = localhostNodePortRejectChain(p);
      tx.add({ kind: 'chain', name: chain });
      tx.delete({ kind: 'chain', name: chain });
      const counter = localhostNodePortRejectedCounter(p);
      tx.add({ kind: 'counter', name: counter });
      tx.delete({ kind: 'counter', name: counter });
    }
  }

  tx.add({ kind: 'map', name: FIREWALL_IPS_MAP, type: `${addrType} . inet_proto . inet_service : verdict`, comment: 'destinations that are subject to LoadBalancerSourceRanges' });
  ensure(FIREWALL_CHECK);
  tx.add({ kind: 'rule', chain: FIREWALL_CHECK, rule: concat(ipX, 'daddr', '.', 'meta l4proto', '.', 'th dport', 'vmap', '@', FIREWALL_IPS_MAP) });

  tx.add({ kind: 'map', name: SERVICE_IPS_MAP, type: `${addrType} . inet_proto . inet_service : verdict`, comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic' });
  tx.add({ kind: 'map', name: SERVICE_NODEPORTS_MAP, type: 'inet_proto . inet_service : verdict', comment: 'NodePort traffic' });
  if (!b.markChain) {
    if (ir.knobs.masqueradeAll) {
      tx.add({ kind: 'rule', chain: SERVICES_CHAIN, rule: concat(ipX, 'daddr', '@', CLUSTER_IPS_SET, ctx.masqueradeRule), comment: 'masquerade all clusterIP traffic' });
    } else if (ctx.ifNotLocal !== undefined) {
      tx.add({ kind: 'rule', chain: SERVICES_CHAIN, rule: concat(ipX, 'daddr', '@', CLUSTER_IPS_SET, ctx.ifNotLocal, ctx.masqueradeRule), comment: 'masquerade clusterIP traffic from outside cluster' });
    }
  }
  tx.add({ kind: 'rule', chain: SERVICES_CHAIN, rule: concat(ipX, 'daddr', '.', 'meta l4proto', '.', 'th dport', 'vmap', '@', SERVICE_IPS_MAP) });
  tx.add({
    kind: 'rule',
    chain: SERVICES_CHAIN,
    rule: matchAll
      ? concat('fib daddr type local', matchNotLocalhost, 'meta l4proto . th dport', 'vmap', '@', SERVICE_NODEPORTS_MAP)
      : concat(ipX, 'daddr @nodeport-ips', 'meta l4proto . th dport', 'vmap', '@', SERVICE_NODEPORTS_MAP),
  });
}

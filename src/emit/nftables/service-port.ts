/**
 * The body of kube-proxy's per-service-port loop in syncProxyRules
 * (pkg/proxy/nftables/proxier.go), rendering the port's plan (src/ir/plan.ts) in the order a
 * full sync on an empty table writes it: the port's chains (add + flush), its set and map
 * elements, then the rules of its chains.
 */

import type { Endpoint, ServicePort } from '../../ir/model.js';
import type { ServicePortPlan } from '../../ir/plan.js';
import {
  CLUSTER_IPS_SET,
  concat,
  FIREWALL_IPS_MAP,
  HAIRPIN_CONNECTIONS_SET,
  localhostNodePortRejectChain,
  LOCALHOST_NODEPORT_REJECT_MAP,
  MARK_MASQ_CHAIN,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  nftWord,
  REJECT_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  COMMENT_LENGTH_MAX,
  type NftElement,
} from '../../lang/nftables/index.js';
import { KpcError } from '../../errors.js';
import type { SyncContext } from './context.js';
import { localhostRejectProtocols } from './fixed.js';
import { endpointNames, portNames, type EndpointNames } from './names.js';

/**
 * nftElementStorage.ensureElem for a full sync on an empty table: an element is added once;
 * the same key with another value later in the sync is deleted and added again.
 */
export class ElementStore {
  private readonly maps = new Map<string, Map<string, string>>();

  ensure(ctx: SyncContext, el: NftElement): void {
    let m = this.maps.get(el.container);
    if (!m) this.maps.set(el.container, (m = new Map()));
    const key = el.key.join(' . ');
    const value = (el.value ?? []).join(' . ');
    const existing = m.get(key);
    if (existing === undefined) {
      ctx.tx.add(el);
      m.set(key, value);
    } else if (existing !== value) {
      ctx.tx.delete(el);
      ctx.tx.add(el);
      m.set(key, value);
    }
  }
}

/**
 * proxy.ServicePortName.String() as the comment of the port's no-endpoint-services and
 * no-endpoint-nodeports elements (the only elements with a per-Service comment, v1.34-v1.37).
 * v1.37 cuts it to 128 bytes (truncateNFTablesComment, kubernetes PR #139516). v1.34-v1.36
 * write it whole: `ns/name:port` can reach 63+1+63+1+15 = 143 bytes, and nft refuses a comment
 * over 128 ("comment too long, 128 characters maximum allowed"), so the whole transaction fails
 * and kube-proxy cannot sync the node at all. There is no output to give for that node: an
 * input error naming the Service (the IR keeps no file positions).
 */
function portComment(ctx: SyncContext, sp: ServicePort, map: string): string {
  const bytes = Buffer.from(sp.spn, 'utf8');
  if (bytes.length <= COMMENT_LENGTH_MAX) return sp.spn;
  if (ctx.behaviour.truncateComments) return bytes.subarray(0, COMMENT_LENGTH_MAX).toString('utf8');
  const release = ctx.ir.knobs.release;
  throw new KpcError(
    'input',
    'input.invalid',
    `Service ${sp.namespace}/${sp.name}${sp.portName !== '' ? ` port ${sp.portName}` : ''}: kube-proxy v${release} cannot sync this node in nftables mode: ` +
      `the port has no endpoints for some of its traffic, so kube-proxy writes a ${map} element with the comment "${sp.spn}" (${bytes.length} bytes), ` +
      `which nft refuses ("comment too long, ${COMMENT_LENGTH_MAX} characters maximum allowed"), failing the whole transaction; ` +
      `kube-proxy v1.37 cuts the comment to ${COMMENT_LENGTH_MAX} bytes (kubernetes PR #139516). ` +
      `Shorten the namespace, Service or port name (namespace/name:port at most ${COMMENT_LENGTH_MAX} bytes), or compile for --kube-proxy-version 1.37`,
  );
}

export function writeServicePort(ctx: SyncContext, store: ElementStore, plan: ServicePortPlan): void {
  const { tx, ipX, behaviour: b } = ctx;
  const { sp, categories: cat } = plan;
  const proto = sp.protocol.toLowerCase();
  const port = String(sp.port);
  const names = portNames(sp);
  const affinity = sp.stickySeconds !== undefined;
  const reachable = cat.allReachableEndpoints;
  const epNames = new Map<string, EndpointNames>(reachable.map((ep) => [ep.address, endpointNames(sp, ep)]));
  const nameOf = (ep: Endpoint) => epNames.get(ep.address) ?? endpointNames(sp, ep);
  const active = new Set<string>();
  const ensureChain = (name: string) => ctx.ensureChain(name, active);

  // Endpoint chains (E2: every reachable endpoint; E3+: only with affinity) and hairpin entries.
  for (const ep of reachable) {
    if (b.markChain || affinity) ensureChain(nameOf(ep).chain);
    if (!b.markChain && ep.isLocal) {
      store.ensure(ctx, { kind: 'element', container: HAIRPIN_CONNECTIONS_SET, key: [ep.ip, ep.ip, proto, String(ep.port)] });
    }
  }

  const usesClusterPolicyChain = plan.usesClusterEndpoints;
  const usesLocalPolicyChain = plan.usesLocalEndpoints;
  if (usesClusterPolicyChain) ensureChain(names.service);
  if (usesLocalPolicyChain) ensureChain(names.local);
  const internalTrafficChain = sp.internalPolicyLocal ? names.local : names.service;
  const externalPolicyChain = sp.externalPolicyLocal ? names.local : names.service;
  const { hasEndpoints, hasInternalEndpoints, hasExternalEndpoints } = plan;
  const usesExternalTrafficChain = plan.usesExternalPath;
  if (usesExternalTrafficChain) ensureChain(names.external);

  const internalVerdict = !hasEndpoints ? `goto ${REJECT_CHAIN}` : !hasInternalEndpoints ? 'drop' : '';
  const externalVerdict = !hasEndpoints ? `goto ${REJECT_CHAIN}` : !hasExternalEndpoints ? 'drop' : '';
  let commentText: string | undefined;
  const comment = (map: string) => (commentText ??= portComment(ctx, sp, map));

  // The cluster IP.
  store.ensure(ctx, { kind: 'element', container: CLUSTER_IPS_SET, key: [sp.clusterIP] });
  if (hasInternalEndpoints) {
    store.ensure(ctx, { kind: 'element', container: SERVICE_IPS_MAP, key: [sp.clusterIP, proto, port], value: [`goto ${internalTrafficChain}`] });
  } else {
    store.ensure(ctx, { kind: 'element', container: NO_ENDPOINT_SERVICES_MAP, key: [sp.clusterIP, proto, port], value: [internalVerdict], comment: comment(NO_ENDPOINT_SERVICES_MAP) });
  }

  // External IPs.
  for (const ip of sp.externalIPs) {
    if (hasEndpoints) store.ensure(ctx, { kind: 'element', container: SERVICE_IPS_MAP, key: [ip, proto, port], value: [`goto ${names.external}`] });
    if (!hasExternalEndpoints) store.ensure(ctx, { kind: 'element', container: NO_ENDPOINT_SERVICES_MAP, key: [ip, proto, port], value: [externalVerdict], comment: comment(NO_ENDPOINT_SERVICES_MAP) });
  }

  // Load-balancer IPs and their firewall.
  const usesFWChain = plan.hasSourceRangeFirewall;
  if (usesFWChain) ensureChain(names.firewall);
  for (const ip of sp.loadBalancerVIPs) {
    if (hasEndpoints) store.ensure(ctx, { kind: 'element', container: SERVICE_IPS_MAP, key: [ip, proto, port], value: [`goto ${names.external}`] });
    if (usesFWChain) store.ensure(ctx, { kind: 'element', container: FIREWALL_IPS_MAP, key: [ip, proto, port], value: [`goto ${names.firewall}`] });
  }
  if (!hasExternalEndpoints) {
    for (const ip of sp.loadBalancerVIPs) store.ensure(ctx, { kind: 'element', container: NO_ENDPOINT_SERVICES_MAP, key: [ip, proto, port], value: [externalVerdict], comment: comment(NO_ENDPOINT_SERVICES_MAP) });
  }

  // The node port.
  if (sp.nodePort !== 0) {
    const nodePort = String(sp.nodePort);
    if (b.localhostNodePortObjects && localhostRejectProtocols(ctx.ir).includes(sp.protocol)) {
      store.ensure(ctx, { kind: 'element', container: LOCALHOST_NODEPORT_REJECT_MAP, key: [proto, nodePort], value: [`goto ${localhostNodePortRejectChain(sp.protocol)}`] });
    }
    if (hasEndpoints) store.ensure(ctx, { kind: 'element', container: SERVICE_NODEPORTS_MAP, key: [proto, nodePort], value: [`goto ${names.external}`] });
    if (!hasExternalEndpoints) store.ensure(ctx, { kind: 'element', container: NO_ENDPOINT_NODEPORTS_MAP, key: [proto, nodePort], value: [externalVerdict], comment: comment(NO_ENDPOINT_NODEPORTS_MAP) });
  }

  // E2: the ClusterIP masquerade rule in the internal traffic chain.
  if (b.markChain && hasInternalEndpoints) {
    if (ctx.ir.knobs.masqueradeAll) {
      tx.add({ kind: 'rule', chain: internalTrafficChain, rule: concat(ipX, 'daddr', nftWord(sp.clusterIP), 'jump', MARK_MASQ_CHAIN) });
    } else if (ctx.ifNotLocal !== undefined) {
      tx.add({ kind: 'rule', chain: internalTrafficChain, rule: concat(ipX, 'daddr', nftWord(sp.clusterIP), ctx.ifNotLocal, 'jump', MARK_MASQ_CHAIN) });
    }
  }

  // The external traffic chain.
  if (usesExternalTrafficChain) {
    if (!sp.externalPolicyLocal) {
      // Endpoints may be on other nodes: masquerade so replies come back through this node.
      tx.add({ kind: 'rule', chain: names.external, rule: ctx.masqueradeRule, ...(b.markChain ? {} : { comment: 'masquerade' }) });
    } else {
      if (ctx.ifLocal !== undefined) {
        tx.add({ kind: 'rule', chain: names.external, rule: concat(ctx.ifLocal, 'goto', names.service), comment: 'short-circuit pod traffic' });
      }
      tx.add({ kind: 'rule', chain: names.external, rule: concat('fib', 'saddr', 'type', 'local', ctx.masqueradeRule), comment: 'masquerade local traffic' });
      tx.add({ kind: 'rule', chain: names.external, rule: concat('fib', 'saddr', 'type', 'local', 'goto', names.service), comment: 'short-circuit local traffic' });
    }
    if (hasExternalEndpoints) tx.add({ kind: 'rule', chain: names.external, rule: concat('goto', externalPolicyChain) });
  }

  // The firewall chain.
  if (usesFWChain) {
    const sources: string[] = [];
    for (const cidr of sp.loadBalancerSourceRanges) {
      if (sources.length > 0) sources.push(',');
      sources.push(nftWord(cidr));
    }
    if (plan.nodeAllowedBySourceRanges) for (const ip of sp.loadBalancerVIPs) sources.push(',', nftWord(ip));
    tx.add({ kind: 'rule', chain: names.firewall, rule: concat(ipX, 'saddr', '!=', '{', sources, '}', 'drop') });
  }

  // Affinity sets.
  if (affinity) {
    for (const ep of reachable) {
      tx.add({ kind: 'set', name: nameOf(ep).affinitySet, type: ctx.addrType, flags: ['dynamic', 'timeout'], timeout: sp.stickySeconds! });
    }
  }

  // Service (and local) chains to the endpoints, and the endpoint chains.
  const policies: Array<[string, readonly Endpoint[]]> = [];
  if (usesClusterPolicyChain) policies.push([names.service, cat.clusterEndpoints]);
  if (usesLocalPolicyChain) policies.push([names.local, cat.localEndpoints]);
  if (b.markChain || affinity) {
    for (const [chain, eps] of policies) writeEndpointJumps(ctx, chain, eps, nameOf, affinity);
    for (const ep of reachable) {
      const chain = nameOf(ep).chain;
      if (b.markChain) tx.add({ kind: 'rule', chain, rule: concat(ipX, 'saddr', nftWord(ep.ip), 'jump', MARK_MASQ_CHAIN) });
      if (affinity) tx.add({ kind: 'rule', chain, rule: concat('update', '@', nameOf(ep).affinitySet, '{', ipX, 'saddr', '}') });
      tx.add({ kind: 'rule', chain, rule: concat('meta l4proto', proto, 'dnat to', nftWord(ep.address)) });
    }
  } else {
    for (const [chain, eps] of policies) writeEndpointDNATs(ctx, chain, eps, proto);
  }
}

/** writeServiceToEndpointRules (E2) / writeServiceToEndpointJumps (E3+, with affinity). */
function writeEndpointJumps(ctx: SyncContext, chain: string, eps: readonly Endpoint[], nameOf: (ep: Endpoint) => EndpointNames, affinity: boolean): void {
  const { tx, ipX } = ctx;
  if (affinity) {
    for (const ep of eps) tx.add({ kind: 'rule', chain, rule: concat(ipX, 'saddr', '@', nameOf(ep).affinitySet, 'goto', nameOf(ep).chain) });
  }
  const elements: string[] = [];
  eps.forEach((ep, i) => {
    elements.push(String(i), ':', 'goto', nameOf(ep).chain);
    if (i !== eps.length - 1) elements.push(',');
  });
  tx.add({ kind: 'rule', chain, rule: concat('numgen random mod', eps.length, 'vmap', '{', elements, '}') });
}

/** writeServiceToEndpointDNATs (E3+, without affinity; E4: one endpoint is `dnat to`). */
function writeEndpointDNATs(ctx: SyncContext, chain: string, eps: readonly Endpoint[], proto: string): void {
  const { tx, ipX } = ctx;
  if (ctx.behaviour.singleEndpointDNAT && eps.length === 1) {
    tx.add({ kind: 'rule', chain, rule: concat('meta l4proto', proto, 'dnat to', nftWord(eps[0]!.address)) });
    return;
  }
  const elements: string[] = [];
  eps.forEach((ep, i) => {
    elements.push(String(i), ':', nftWord(ep.ip), '.', String(ep.port));
    if (i !== eps.length - 1) elements.push(',');
  });
  tx.add({ kind: 'rule', chain, rule: concat('meta l4proto', proto, 'dnat', ipX, 'addr . port to', 'numgen random mod', eps.length, 'map', '{', elements, '}') });
}

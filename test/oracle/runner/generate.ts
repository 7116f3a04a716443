/**
 * A seeded cluster generator: one seed → one node's view of a cluster (Services,
 * EndpointSlices, legacy Endpoints, Nodes) and the kpc/kube-proxy flags to compile it with.
 * The same seed always gives the same cluster. Everything generated is meant to be valid for
 * the API server (the validate oracle checks samples, test/oracle/oracle.test.ts).
 *
 * Reached: Service types ClusterIP/NodePort/LoadBalancer/ExternalName/headless, 1–3 ports,
 * named target ports, TCP/UDP/SCTP, externalIPs, LB ingress with ipMode VIP/Proxy, source
 * ranges (incl. one holding a node IP, and 0.0.0.0/0), ETP/ITP Local, ClientIP affinity with
 * timeouts, ready/serving/terminating mixes, topology hints (zones, nodes) and
 * trafficDistribution, > 1,000 endpoints (large-cluster mode) now and then, IPv4/IPv6/dual
 * stack, Nodes with zone labels and podCIDRs, legacy Endpoints of selectorless Services, and the
 * knobs: masquerade-all, every detect-local mode, nodePortAddresses (CIDRs, primary, loopback),
 * localhost node ports, masquerade bit, tcp-be-liberal, random-fully, nfacct, the IPVS
 * scheduler/timeouts/strict ARP/exclude CIDRs, and the feature gates each release accepts.
 *
 * nftables mode (`--proxy-mode nftables`): the same draws, so the cluster is the iptables
 * seed's, with the knobs as nftables mode has them: no nodePortAddresses flag means kube-proxy's
 * nftables default (`primary`, not iptables' "all"); loopback CIDRs stay possible (kube-proxy
 * leaves loopback out of nodeport-ips: localhost node ports are not served); the masquerade bit
 * is `nftables.masqueradeBit` in a config file (`--iptables-masquerade-bit` does not reach the
 * nftables proxier); the iptables-only host facts and flags (`--iptables-localhost-nodeports`,
 * `--no-masquerade-random-fully`, `--nfacct`) are not passed. From a stream of their own (so
 * the cluster does not move): the cluster's Service CIDRs as `--service-cluster-ip-range` or
 * as ServiceCIDR objects (networking.k8s.io/v1; they hold every generated ClusterIP), and for
 * v1.37 `nodePortAddresses: all` and the KubeProxyNFTablesLocalhostNodePorts gate.
 */

import type { Mode } from './common.js';

/** mulberry32: small, fast, good enough for test generation. */
export function rng(seed: number): () => number {
  let a = (seed * 0x9e3779b9) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Generated {
  seed: number;
  /** Flags after `compile` (no -f, no -o): the same for kpc and the oracle. */
  flags: string[];
  items: Record<string, unknown>[];
  /** A KubeProxyConfiguration (v1alpha1, YAML) passed as --config, for some seeds. */
  config?: string;
}

/**
 * For one seed in six (drawn from a stream of its own, so the cluster is the same either way),
 * the knobs that have a KubeProxyConfiguration field move from the flags into a v1alpha1
 * config file (kube-proxy's codec decodes and defaults it; kpc reads it with --config).
 */
export function moveFlagsToConfig(seed: number, flags: string[]): { flags: string[]; config?: string } {
  const r = rng(seed * 104729 + 7);
  if (r() >= 1 / 6) return { flags };
  const rest: string[] = [];
  const lines: string[] = ['apiVersion: kubeproxy.config.k8s.io/v1alpha1', 'kind: KubeProxyConfiguration'];
  const iptables: string[] = [];
  const ipvs: string[] = [];
  const detectLocal: string[] = [];
  const q = (v: string) => JSON.stringify(v);
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!;
    const [name, inline] = f.split('=', 2) as [string, string | undefined];
    const value = () => inline ?? flags[++i]!;
    const keep = r() < 0.25; // some knobs stay flags (kpc: flags override the config)
    if (keep) {
      rest.push(f);
      if (inline === undefined && !['--masquerade-all', '--conntrack-tcp-be-liberal', '--ipvs-strict-arp', '--nfacct', '--no-masquerade-random-fully'].includes(name)) rest.push(flags[++i]!);
      continue;
    }
    switch (name) {
      case '--hostname-override': lines.push(`hostnameOverride: ${q(value())}`); break;
      case '--proxy-mode': lines.push(`mode: ${q(value())}`); break;
      case '--cluster-cidr': lines.push(`clusterCIDR: ${q(value())}`); break;
      case '--detect-local-mode': lines.push(`detectLocalMode: ${q(value())}`); break;
      case '--pod-bridge-interface': detectLocal.push(`  bridgeInterface: ${q(value())}`); break;
      case '--pod-interface-name-prefix': detectLocal.push(`  interfaceNamePrefix: ${q(value())}`); break;
      case '--masquerade-all': iptables.push('  masqueradeAll: true'); break;
      case '--iptables-masquerade-bit': iptables.push(`  masqueradeBit: ${value()}`); break;
      case '--iptables-localhost-nodeports': iptables.push(`  localhostNodePorts: ${value()}`); break;
      case '--nodeport-addresses': lines.push(`nodePortAddresses: [${value().split(',').map(q).join(', ')}]`); break;
      case '--conntrack-tcp-be-liberal': lines.push('conntrack:', '  tcpBeLiberal: true'); break;
      case '--ipvs-scheduler': ipvs.push(`  scheduler: ${q(value())}`); break;
      case '--ipvs-strict-arp': ipvs.push('  strictARP: true'); break;
      case '--ipvs-tcp-timeout': ipvs.push(`  tcpTimeout: ${q(value())}`); break;
      case '--ipvs-tcpfin-timeout': ipvs.push(`  tcpFinTimeout: ${q(value())}`); break;
      case '--ipvs-udp-timeout': ipvs.push(`  udpTimeout: ${q(value())}`); break;
      case '--ipvs-exclude-cidrs': ipvs.push(`  excludeCIDRs: [${value().split(',').map(q).join(', ')}]`); break;
      case '--feature-gates': lines.push('featureGates:', ...value().split(',').map((kv) => `  ${kv.split('=')[0]}: ${kv.split('=')[1]}`)); break;
      default:
        // Host facts and kpc-only flags have no config field.
        rest.push(f);
        if (inline === undefined && ['--node-ip', '--ip-family', '--service-cluster-ip-range'].includes(name)) rest.push(flags[++i]!);
    }
  }
  if (iptables.length) lines.push('iptables:', ...iptables);
  if (ipvs.length) lines.push('ipvs:', ...ipvs);
  if (detectLocal.length) lines.push('detectLocal:', ...detectLocal);
  return { flags: rest, config: lines.join('\n') + '\n' };
}

type Fam = 'IPv4' | 'IPv6';

export class Gen {
  readonly r: () => number;
  constructor(seed: number) {
    this.r = rng(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(this.r() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }
}

const NODES = ['node-a', 'node-b', 'node-c'];
const ZONES = ['zone-a', 'zone-b'];
const SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'sh', 'mh', 'sed', 'nq'];

const nodeIP = (fam: Fam, i: number) => (fam === 'IPv4' ? `10.1.0.${10 + i}` : `fd00:1::${10 + i}`);
/** Pod addresses: inside the node's pod CIDR for the first 250, then in 10.245/16 (large slices). */
const podIP = (fam: Fam, node: number, i: number) =>
  fam === 'IPv4'
    ? i < 250 ? `10.244.${node}.${i + 2}` : `10.245.${node * 8 + Math.floor(i / 250)}.${(i % 250) + 2}`
    : `fd00:244:${node}::${(i + 2).toString(16)}`;
const podCIDR = (fam: Fam, node: number) => (fam === 'IPv4' ? `10.244.${node}.0/24` : `fd00:244:${node}::/64`);
const clusterCIDR = (fam: Fam) => (fam === 'IPv4' ? '10.244.0.0/16' : 'fd00:244::/48');

export function generate(seed: number, mode: Mode, version: string): Generated {
  const g = new Gen(seed);
  const stack = g.pick(['IPv4', 'IPv4', 'IPv6', 'dual'] as const);
  const fams: Fam[] = stack === 'dual' ? ['IPv4', 'IPv6'] : [stack];
  if (stack === 'dual' && g.chance(0.5)) fams.reverse();
  const family: Fam = g.pick(fams);
  const items: Record<string, unknown>[] = [];
  const flags: string[] = [];

  // Nodes.
  const nNodes = g.int(1, 3);
  const nodeZone = NODES.map(() => g.pick(ZONES));
  const withExternal = g.chance(0.3);
  for (let i = 0; i < nNodes; i++) {
    const addresses: { type: string; address: string }[] = fams.map((f) => ({ type: 'InternalIP', address: nodeIP(f, i) }));
    if (withExternal) addresses.push({ type: 'ExternalIP', address: fams[0] === 'IPv4' ? `198.51.100.${10 + i}` : `2001:db8:100::${10 + i}` });
    addresses.push({ type: 'Hostname', address: NODES[i]! });
    const labels: Record<string, string> = { 'kubernetes.io/hostname': NODES[i]! };
    if (g.chance(0.8)) labels['topology.kubernetes.io/zone'] = nodeZone[i]!;
    const spec: Record<string, unknown> = {};
    if (i === 0 || g.chance(0.85)) {
      spec.podCIDR = podCIDR(fams[0]!, i);
      spec.podCIDRs = fams.map((f) => podCIDR(f, i));
    }
    items.push({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODES[i], labels }, spec, status: { addresses } });
  }
  const nodeZoneOf = (n: number) => nodeZone[n]!;

  // Flags.
  if (nNodes > 1 || g.chance(0.7)) flags.push('--hostname-override', 'node-a');
  const usesNodeIPFlag = g.chance(0.3);
  if (usesNodeIPFlag) for (const f of fams) flags.push('--node-ip', nodeIP(f, 0));
  if (mode === 'ipvs') flags.push('--proxy-mode', 'ipvs');
  if (mode === 'nftables') flags.push('--proxy-mode', 'nftables');
  const nft = mode === 'nftables';
  if (family === 'IPv6') flags.push('--ip-family', 'ipv6');
  const detect = g.pick(['ClusterCIDR', 'ClusterCIDR', 'ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix', 'none'] as const);
  if (detect === 'ClusterCIDR') flags.push('--cluster-cidr', fams.map(clusterCIDR).join(','));
  else if (detect === 'NodeCIDR') flags.push('--detect-local-mode', 'NodeCIDR');
  else if (detect === 'BridgeInterface') flags.push('--detect-local-mode', 'BridgeInterface', '--pod-bridge-interface', 'cbr0');
  else if (detect === 'InterfaceNamePrefix') flags.push('--detect-local-mode', 'InterfaceNamePrefix', '--pod-interface-name-prefix', 'veth');
  if (g.chance(0.15)) flags.push('--masquerade-all');
  let nftMasqueradeBit: number | undefined;
  if (g.chance(0.15)) {
    const bit = g.int(0, 31);
    if (nft) nftMasqueradeBit = bit;
    else flags.push('--iptables-masquerade-bit', String(bit));
  }
  if (g.chance(0.15) && !nft) flags.push('--iptables-localhost-nodeports=false');
  const npa = g.pick(['', '', '', 'primary', 'node', 'loopback', 'other'] as const);
  if (npa === 'primary') flags.push('--nodeport-addresses', 'primary');
  else if (npa === 'node') flags.push('--nodeport-addresses', fams.map((f) => (f === 'IPv4' ? '10.1.0.0/24' : 'fd00:1::/64')).join(','));
  else if (npa === 'loopback') flags.push('--nodeport-addresses', family === 'IPv4' ? '127.0.0.0/8,10.1.0.10/32' : '::1/128,fd00:1::10/128');
  else if (npa === 'other') flags.push('--nodeport-addresses', family === 'IPv4' ? '192.0.2.0/24' : '2001:db8:ffff::/64');
  if (g.chance(0.15)) flags.push('--conntrack-tcp-be-liberal');
  if (g.chance(0.2) && !nft) flags.push('--no-masquerade-random-fully');
  if (g.chance(0.25) && !nft) flags.push('--nfacct');
  // PreferSameTrafficDistribution is GA and locked on from v1.35: the gate is offered to v1.34
  // only (drawn for every release, so the cluster is the same whatever the release).
  const gateOff = g.chance(0.15);
  if (version === '1.34' && gateOff) flags.push('--feature-gates', 'PreferSameTrafficDistribution=false');
  if (mode === 'ipvs') {
    if (g.chance(0.4)) flags.push('--ipvs-scheduler', g.pick(SCHEDULERS));
    if (g.chance(0.15)) flags.push('--ipvs-strict-arp');
    if (g.chance(0.15)) flags.push('--ipvs-tcp-timeout', g.pick(['900s', '15m', '1h']), '--ipvs-tcpfin-timeout', g.pick(['120s', '2m0s']), '--ipvs-udp-timeout', g.pick(['300s', '5m']));
    if (g.chance(0.1)) flags.push('--ipvs-exclude-cidrs', '10.250.0.0/16');
  }

  // Services.
  let nextNodePort = 30000 + g.int(0, 50);
  let nextHC = 32000 + g.int(0, 50);
  const nSvc = g.int(1, 7);
  const big = g.chance(0.06) ? g.int(0, nSvc - 1) : -1;
  for (let s = 0; s < nSvc; s++) {
    const ns = g.pick(['default', 'demo', 'kube-system', 'shop']);
    const name = `svc${s}-${g.pick(['web', 'api', 'dns', 'db', 'x'])}`;
    const type = g.pick(['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer', 'LoadBalancer', 'ExternalName', 'Headless'] as const);
    const svcStack = stack === 'dual' ? g.pick(['single0', 'single1', 'dual'] as const) : 'single0';
    const svcFams: Fam[] = svcStack === 'dual' ? [...fams] : svcStack === 'single1' ? [fams[1]!] : [fams[0]!];
    const clusterIPs = svcFams.map((f) => (f === 'IPv4' ? `10.96.${s}.${g.int(1, 250)}` : `fd00:96::${s.toString(16)}:${g.int(1, 4000).toString(16)}`));
    const selectorless = g.chance(0.2);
    const nPorts = g.int(1, 3);
    const protos = ['TCP', 'UDP', 'SCTP'];
    const ports: Record<string, unknown>[] = [];
    const usedPort = new Set<number>();
    for (let p = 0; p < nPorts; p++) {
      let port = g.pick([80, 443, 53, 8080, 9090, 5432, 6379]);
      while (usedPort.has(port)) port++;
      usedPort.add(port);
      const portName = nPorts > 1 || g.chance(0.6) ? g.pick(['http', 'https', 'dns', 'metrics', 'grpc', 'db']) + (p || '') : '';
      const protocol = g.chance(0.65) ? 'TCP' : g.pick(protos);
      const sp: Record<string, unknown> = { port, protocol };
      if (portName) sp.name = portName;
      if (g.chance(0.2) && portName) sp.targetPort = `tp-${portName}`;
      else if (g.chance(0.7)) sp.targetPort = port + 8000;
      if (type === 'NodePort' || type === 'LoadBalancer') {
        if (g.chance(0.9)) sp.nodePort = nextNodePort++;
      }
      ports.push(sp);
    }
    const spec: Record<string, unknown> = { ports };
    const meta = { name, namespace: ns };
    if (type === 'ExternalName') {
      items.push({ apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { type, externalName: 'example.com', ports } });
      continue;
    }
    if (!selectorless) spec.selector = { app: name };
    spec.type = type === 'Headless' ? 'ClusterIP' : type;
    if (type === 'Headless') {
      spec.clusterIP = 'None';
      spec.clusterIPs = ['None'];
    } else {
      spec.clusterIP = clusterIPs[0];
      spec.clusterIPs = clusterIPs;
    }
    spec.ipFamilies = svcFams;
    spec.ipFamilyPolicy = svcFams.length === 2 ? g.pick(['PreferDualStack', 'RequireDualStack']) : 'SingleStack';
    const external = type === 'NodePort' || type === 'LoadBalancer';
    if (type !== 'Headless' && g.chance(0.2)) spec.externalIPs = svcFams.map((f, i) => (f === 'IPv4' ? `203.0.113.${50 + s * 2 + i}` : `2001:db8:113::${(50 + s).toString(16)}`));
    const hasExternalIPs = Array.isArray(spec.externalIPs);
    if ((external || hasExternalIPs) && g.chance(0.35)) spec.externalTrafficPolicy = 'Local';
    if (type !== 'Headless' && g.chance(0.2)) spec.internalTrafficPolicy = 'Local';
    if (spec.externalTrafficPolicy === 'Local' && type === 'LoadBalancer' && g.chance(0.85)) spec.healthCheckNodePort = nextHC++;
    if (g.chance(0.2) && type !== 'Headless') {
      spec.sessionAffinity = 'ClientIP';
      if (g.chance(0.6)) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: g.pick([1, 60, 600, 10800, 86400]) } };
    }
    if (g.chance(0.2)) spec.trafficDistribution = g.pick(['PreferClose', 'PreferSameZone', 'PreferSameNode']);
    const status: Record<string, unknown> = {};
    if (type === 'LoadBalancer') {
      if (g.chance(0.15)) spec.allocateLoadBalancerNodePorts = false;
      if (g.chance(0.8)) {
        const ingress = svcFams.flatMap((f, i) => {
          const n = g.int(1, 2);
          return Array.from({ length: n }, (_, k) => {
            const ing: Record<string, unknown> = { ip: f === 'IPv4' ? `192.0.2.${10 + s * 4 + i * 2 + k}` : `2001:db8:2::${(10 + s * 4 + k).toString(16)}` };
            if (g.chance(0.3)) ing.ipMode = g.pick(['VIP', 'Proxy']);
            return ing;
          });
        });
        status.loadBalancer = { ingress };
      }
      if (g.chance(0.3)) {
        const ranges: string[] = [];
        for (const f of svcFams) {
          const r = g.pick(['any', 'node', 'other'] as const);
          if (r === 'any') ranges.push(f === 'IPv4' ? '0.0.0.0/0' : '::/0');
          else if (r === 'node') ranges.push(f === 'IPv4' ? '10.1.0.10/32' : 'fd00:1::10/128', f === 'IPv4' ? '198.51.100.0/24' : '2001:db8:100::/64');
          else ranges.push(f === 'IPv4' ? '203.0.113.0/25' : '2001:db8:113::/64');
        }
        spec.loadBalancerSourceRanges = ranges;
      }
    }
    items.push({ apiVersion: 'v1', kind: 'Service', metadata: meta, spec, ...(Object.keys(status).length ? { status } : {}) });

    // Endpoints: slices per family (or legacy Endpoints for a selectorless Service).
    const nEp = s === big ? g.int(1001, 1100) : g.int(0, 6);
    const epNode = () => (g.chance(0.85) ? g.int(0, nNodes - 1) : -1);
    const slicePorts = ports.map((p) => {
      const tp = (p as { targetPort?: unknown }).targetPort;
      const out: Record<string, unknown> = { port: typeof tp === 'number' ? tp : g.int(8000, 9000), protocol: p.protocol };
      if (p.name) out.name = p.name;
      return out;
    });
    if (selectorless && g.chance(0.5) && type !== 'Headless') {
      const addrs = Array.from({ length: Math.min(nEp, 8) }, (_, i) => ({ n: epNode(), i }));
      const subsetFam = svcFams[0]!;
      const ready = addrs.filter(() => g.chance(0.8));
      const notReady = addrs.filter((a) => !ready.includes(a));
      const toAddr = (a: { n: number; i: number }) => ({ ip: podIP(subsetFam, Math.max(a.n, 0) + 1, a.i + 10), ...(a.n >= 0 ? { nodeName: NODES[a.n] } : {}) });
      const subsets = addrs.length === 0 ? [] : [{
        ...(ready.length ? { addresses: ready.map(toAddr) } : {}),
        ...(notReady.length ? { notReadyAddresses: notReady.map(toAddr) } : {}),
        ports: slicePorts.map((p) => ({ ...p })),
      }];
      items.push({ apiVersion: 'v1', kind: 'Endpoints', metadata: meta, subsets });
      continue;
    }
    for (const f of svcFams) {
      if (g.chance(0.1)) continue;
      const endpoints: Record<string, unknown>[] = [];
      const perSlice = s === big ? nEp : nEp;
      for (let i = 0; i < perSlice; i++) {
        const n = epNode();
        const state = g.pick(['ready', 'ready', 'ready', 'ready', 'serving-terminating', 'terminating', 'not-ready', 'unset'] as const);
        const conditions =
          state === 'ready' ? { ready: true, serving: true, terminating: false }
          : state === 'serving-terminating' ? { ready: false, serving: true, terminating: true }
          : state === 'terminating' ? { ready: false, serving: false, terminating: true }
          : state === 'not-ready' ? { ready: false, serving: false, terminating: false }
          : {};
        const ep: Record<string, unknown> = { addresses: [podIP(f, Math.max(n, 0) + 1, i + s * 37)], conditions };
        if (n >= 0) {
          ep.nodeName = NODES[n];
          if (g.chance(0.7)) ep.zone = nodeZoneOf(n);
        }
        if (s !== big && g.chance(0.3)) {
          const hints: Record<string, unknown> = { forZones: [{ name: n >= 0 ? nodeZoneOf(n) : g.pick(ZONES) }] };
          if (g.chance(0.5)) hints.forNodes = [{ name: n >= 0 ? NODES[n] : g.pick(NODES) }];
          ep.hints = hints;
        }
        endpoints.push(ep);
      }
      // Unique addresses within a slice.
      const seen = new Set<string>();
      const uniq = endpoints.filter((e) => {
        const a = (e.addresses as string[])[0]!;
        if (seen.has(a)) return false;
        seen.add(a);
        return true;
      });
      // At most 100 endpoints per slice, as the EndpointSlice controller makes them (the API
      // allows 1000); a Service with > 1,000 endpoints gets many slices.
      const sliceName = `${name}-${f === 'IPv4' ? 'v4' : 'v6'}${g.int(100, 999)}`;
      for (let k = 0; k === 0 || k * 100 < uniq.length; k++) {
        items.push({
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: k === 0 ? sliceName : `${sliceName}-${k}`, namespace: ns, labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } },
          addressType: f,
          ports: slicePorts,
          endpoints: uniq.slice(k * 100, k * 100 + 100),
        });
      }
    }
  }
  // Service names must be unique per namespace: make them so.
  const names = new Set<string>();
  for (const it of items) {
    const m = it.metadata as { name: string; namespace?: string };
    if (it.kind !== 'Service') continue;
    const k = `${m.namespace}/${m.name}`;
    if (names.has(k)) throw new Error(`generator: duplicate ${k}`);
    names.add(k);
  }
  if (nft) nftablesExtras(seed, version, fams, items, flags);
  const shuffled = g.shuffle(items);
  const moved = moveFlagsToConfig(seed, flags);
  let config = moved.config;
  if (nftMasqueradeBit !== undefined) {
    config ??= 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';
    config += `nftables:\n  masqueradeBit: ${nftMasqueradeBit}\n`;
  }
  return { seed, flags: moved.flags, items: shuffled, ...(config ? { config } : {}) };
}

/** nftables mode's extra draws (a stream of their own: the cluster stays the seed's). */
function nftablesExtras(seed: number, version: string, fams: Fam[], items: Record<string, unknown>[], flags: string[]): void {
  const x = new Gen(seed * 7919 + 3);
  // Service CIDRs: 10.96.0.0/16 holds 10.96.<s>.<1-250>, fd00:96::/108 holds fd00:96::<s>:<1-fa0>.
  const cidr = (f: Fam) => (f === 'IPv4' ? '10.96.0.0/16' : 'fd00:96::/108');
  const how = x.pick(['none', 'flag', 'flag', 'object', 'objects'] as const);
  if (how === 'flag') flags.push('--service-cluster-ip-range', fams.map(cidr).join(','));
  if (how === 'object' || how === 'objects') {
    items.push({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs: fams.map(cidr) } });
    if (how === 'objects') {
      const extra = fams.filter(() => x.chance(0.7)).map((f) => (f === 'IPv4' ? '10.97.0.0/16' : 'fd00:97::/108'));
      if (extra.length) items.push({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'extra' }, spec: { cidrs: extra } });
    }
  }
  if (version === '1.37') {
    if (x.chance(0.2) && !flags.includes('--nodeport-addresses')) flags.push('--nodeport-addresses', 'all');
    if (x.chance(0.25)) flags.push('--feature-gates', 'KubeProxyNFTablesLocalhostNodePorts=true');
  }
}

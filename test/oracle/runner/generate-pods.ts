/**
 * A seeded generator of clusters with Pods, for the EndpointSlice campaign (--endpointslices):
 * one seed → Services, Pods and Nodes (no EndpointSlices: those are what the controller and kpc
 * derive). The same seed always gives the same cluster. Everything is meant to be valid for the
 * API server (the oracle validates each object as it reads it).
 *
 * Reached: ClusterIP/NodePort/LoadBalancer/headless (with and without ports)/ExternalName
 * Services, no or an empty selector, a selector matching Pods of several Services or of another
 * namespace, single-stack and dual-stack families in both orders, numeric and named target
 * ports (resolved, unresolved, resolved with another protocol, through sidecars and plain init
 * containers), appProtocol, publishNotReadyAddresses, trafficDistribution (PreferClose,
 * PreferSameZone, PreferSameNode), the topology-mode annotations (Auto, auto, Disabled; both
 * keys), Service labels (reserved ones too), Pods in every phase, Ready condition true, false or
 * missing, terminating Pods, pod IPs of one or both families (or only the v1 podIP), no IP,
 * nodeName of a known Node, an unknown one or none, hostname/subdomain naming the Service or
 * not, hostNetwork Pods sharing their Node's address, > 100 Pods behind one Service now and
 * then, Nodes with or without zones, readiness, allocatable CPU, control-plane labels.
 */

import { Gen } from './generate.js';

type Item = Record<string, unknown>;
type Fam = 'IPv4' | 'IPv6';

export interface GeneratedPods {
  seed: number;
  items: Item[];
}

const NODES = ['node-a', 'node-b', 'node-c', 'node-d'];
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NAMESPACES = ['default', 'shop', 'demo'];
const PORT_NAMES = ['http', 'https', 'dns', 'metrics', 'grpc', 'db'];

const nodeIP = (fam: Fam, i: number) => (fam === 'IPv4' ? `10.1.0.${10 + i}` : `fd00:1::${(10 + i).toString(16)}`);

export function generatePods(seed: number): GeneratedPods {
  const g = new Gen(seed);
  const stack = g.pick(['IPv4', 'IPv4', 'IPv6', 'dual'] as const);
  const fams: Fam[] = stack === 'dual' ? ['IPv4', 'IPv6'] : [stack];
  if (stack === 'dual' && g.chance(0.5)) fams.reverse();
  const items: Item[] = [];

  // Nodes: the controller reads their zone, and the topology cache their readiness and CPU.
  const nNodes = g.int(0, 4);
  const known: string[] = [];
  for (let i = 0; i < nNodes; i++) {
    const labels: Record<string, string> = { 'kubernetes.io/hostname': NODES[i]! };
    if (g.chance(0.85)) labels['topology.kubernetes.io/zone'] = g.pick(ZONES.slice(0, g.int(1, 3)));
    if (g.chance(0.1)) labels['node-role.kubernetes.io/control-plane'] = '';
    const status: Item = { addresses: fams.map((f) => ({ type: 'InternalIP', address: nodeIP(f, i) })) };
    if (g.chance(0.9)) status.conditions = [{ type: 'Ready', status: g.chance(0.9) ? 'True' : 'False' }];
    if (g.chance(0.9)) status.allocatable = { cpu: g.pick(['2', '4', '8', '500m', '1500m', '2.5', '16', '0']), memory: '8Gi', pods: '110' };
    items.push({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODES[i], labels }, spec: {}, status });
    known.push(NODES[i]!);
  }

  // Services.
  const nSvc = g.int(1, 6);
  const big = g.chance(0.08) ? g.int(0, nSvc - 1) : -1;
  let podSeq = 0;
  let ipSeq = 0;
  const podIP = (fam: Fam) => {
    ipSeq++;
    return fam === 'IPv4' ? `10.244.${ipSeq >> 8}.${ipSeq & 255}` : `fd00:244::${ipSeq.toString(16)}`;
  };
  const services: Array<{ ns: string; name: string; selector?: Record<string, string>; ports: Item[] }> = [];
  for (let s = 0; s < nSvc; s++) {
    const ns = g.pick(NAMESPACES);
    const name = `svc${s}-${g.pick(['web', 'api', 'db', 'x'])}`;
    const type = g.pick(['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer', 'Headless', 'Headless', 'ExternalName'] as const);
    const svcStack = stack === 'dual' ? g.pick(['single0', 'single1', 'dual'] as const) : 'single0';
    const svcFams: Fam[] = svcStack === 'dual' ? (g.chance(0.5) ? [...fams] : [...fams].reverse()) : svcStack === 'single1' ? [fams[1]!] : [fams[0]!];
    const nPorts = type === 'Headless' && g.chance(0.3) ? 0 : g.int(1, 3);
    const ports: Item[] = [];
    const used = new Set<string>();
    for (let p = 0; p < nPorts; p++) {
      let port = g.pick([80, 443, 53, 8080, 9090, 5432]);
      while (used.has(String(port))) port++;
      used.add(String(port));
      const portName = nPorts > 1 || g.chance(0.5) ? `${g.pick(PORT_NAMES)}${p || ''}` : '';
      const protocol = g.chance(0.7) ? 'TCP' : g.pick(['UDP', 'SCTP']);
      const sp: Item = { port, protocol };
      if (portName) sp.name = portName;
      const tp = g.r();
      if (tp < 0.45) sp.targetPort = g.pick(['tp-http', 'tp-dns', 'tp-alt', portName ? `t-${portName}`.slice(0, 15) : 'tp-none']);
      else if (tp < 0.8) sp.targetPort = port + 8000;
      if (g.chance(0.15)) sp.appProtocol = g.pick(['http', 'kubernetes.io/h2c', 'example.com/custom']);
      if ((type === 'NodePort' || type === 'LoadBalancer') && g.chance(0.8)) sp.nodePort = 30000 + s * 10 + p;
      ports.push(sp);
    }
    const metadata: Item = { name, namespace: ns, uid: `00000000-0000-4000-8000-${String(seed % 1e6).padStart(6, '0')}${String(s).padStart(6, '0')}` };
    if (g.chance(0.4)) {
      const labels: Record<string, string> = { team: g.pick(['a', 'b']) };
      if (g.chance(0.3)) labels[g.pick(['kubernetes.io/service-name', 'endpointslice.kubernetes.io/managed-by', 'service.kubernetes.io/headless'])] = 'user-set';
      metadata.labels = labels;
    }
    if (g.chance(0.2)) {
      const key = g.pick(['service.kubernetes.io/topology-mode', 'service.kubernetes.io/topology-aware-hints']);
      const annotations: Record<string, string> = { [key]: g.pick(['Auto', 'Auto', 'auto', 'Disabled']) };
      // Both keys must agree when both are set (ValidateService's topology annotation rule).
      if (g.chance(0.2)) annotations['service.kubernetes.io/topology-mode'] = annotations[key]!;
      metadata.annotations = annotations;
    }
    if (type === 'ExternalName') {
      items.push({ apiVersion: 'v1', kind: 'Service', metadata, spec: { type, externalName: 'example.com', selector: { app: name } } });
      services.push({ ns, name, selector: { app: name }, ports });
      continue;
    }
    const spec: Item = { ports };
    const sel = g.r();
    const selector: Record<string, string> | undefined = sel < 0.1 ? undefined : sel < 0.15 ? {} : g.chance(0.15) ? { tier: 'shared' } : { app: name };
    if (selector) spec.selector = selector;
    spec.type = type === 'Headless' ? 'ClusterIP' : type;
    if (type === 'Headless') spec.clusterIP = 'None';
    else {
      spec.clusterIPs = svcFams.map((f) => (f === 'IPv4' ? `10.96.${s}.${g.int(1, 250)}` : `fd00:96::${s.toString(16)}:${g.int(1, 4000).toString(16)}`));
      spec.clusterIP = (spec.clusterIPs as string[])[0];
    }
    if (type === 'Headless') spec.clusterIPs = ['None'];
    spec.ipFamilies = svcFams;
    spec.ipFamilyPolicy = svcFams.length === 2 ? 'RequireDualStack' : 'SingleStack';
    if (g.chance(0.15)) spec.publishNotReadyAddresses = true;
    if (g.chance(0.3)) spec.trafficDistribution = g.pick(['PreferClose', 'PreferSameZone', 'PreferSameNode']);
    items.push({ apiVersion: 'v1', kind: 'Service', metadata, spec });
    services.push({ ns, name, ...(selector ? { selector } : {}), ports });

    // Pods: most of them match this Service's selector.
    const nPods = s === big ? g.int(101, 260) : g.int(0, 12);
    for (let i = 0; i < nPods; i++) {
      const podNs = g.chance(0.92) ? ns : g.pick(NAMESPACES);
      const labels: Record<string, string> = g.chance(0.9) && selector && Object.keys(selector).length > 0 ? { ...selector } : { app: g.pick(['other', name]) };
      if (g.chance(0.1)) labels.tier = 'shared';
      const podName = `pod-${podSeq++}`;
      const containers: Item[] = [];
      const nContainers = g.int(1, 2);
      // Distinct container ports within a Pod: a hostNetwork Pod's ports are host ports, which
      // the API server requires to be unique (checkHostPortConflicts).
      let nextPort = g.int(1, 9) * 1000;
      for (let c = 0; c < nContainers; c++) {
        const cports: Item[] = [];
        const names = new Set<string>();
        for (let k = g.int(0, 3); k > 0; k--) {
          const pn = g.pick(['tp-http', 'tp-dns', 'tp-alt', 'http', 'metrics', 't-http', 't-dns1', 't-grpc']);
          nextPort += g.int(1, 50);
          const cp: Item = { containerPort: nextPort };
          if (!names.has(pn) && g.chance(0.85)) {
            names.add(pn);
            cp.name = pn;
          }
          if (g.chance(0.4)) cp.protocol = g.pick(['TCP', 'UDP', 'SCTP']);
          cports.push(cp);
        }
        containers.push({ name: `c${c}`, image: 'registry.k8s.io/pause:3.10', ...(cports.length ? { ports: cports } : {}) });
      }
      const podSpec: Item = { containers };
      if (g.chance(0.3)) {
        podSpec.initContainers = [{
          name: 'init0',
          image: 'registry.k8s.io/pause:3.10',
          ...(g.chance(0.6) ? { restartPolicy: 'Always' } : {}),
          ports: [{ name: g.pick(['tp-http', 'tp-dns', 'tp-alt']), containerPort: 30000 + g.int(0, 999), ...(g.chance(0.3) ? { protocol: 'UDP' } : {}) }],
        }];
      }
      const where = g.r();
      const nodeName = known.length > 0 && where < 0.8 ? g.pick(known) : where < 0.9 ? g.pick(NODES) : '';
      if (nodeName) podSpec.nodeName = nodeName;
      const hostNetwork = nodeName !== '' && known.includes(nodeName) && g.chance(0.08);
      if (hostNetwork) podSpec.hostNetwork = true;
      if (g.chance(0.25)) {
        podSpec.hostname = `h${i}`;
        podSpec.subdomain = g.chance(0.7) ? name : 'elsewhere';
      }
      const phase = g.pick(['Running', 'Running', 'Running', 'Running', 'Pending', 'Succeeded', 'Failed', '']);
      const status: Item = {};
      if (phase) status.phase = phase;
      const ready = g.r();
      if (ready < 0.75) status.conditions = [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True' }];
      else if (ready < 0.92) status.conditions = [{ type: 'Ready', status: 'False' }];
      const ips = g.r();
      const podFams = g.chance(0.8) ? fams : [g.pick(fams)];
      const addrs = hostNetwork ? podFams.map((f) => nodeIP(f, known.indexOf(nodeName))) : podFams.map(podIP);
      if (ips < 0.7) {
        status.podIP = addrs[0];
        status.podIPs = addrs.map((ip) => ({ ip }));
      } else if (ips < 0.8) status.podIPs = addrs.map((ip) => ({ ip }));
      else if (ips < 0.9) status.podIP = addrs[0];
      const podMeta: Item = { name: podName, namespace: podNs, labels, uid: `pod-uid-${seed}-${i}-${s}` };
      if (g.chance(0.1)) podMeta.deletionTimestamp = '2026-01-01T00:00:00Z';
      items.push({ apiVersion: 'v1', kind: 'Pod', metadata: podMeta, spec: podSpec, status });
    }
  }
  return { seed, items: g.shuffle(items) };
}

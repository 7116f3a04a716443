/**
 * State sequences for the IPVS delta tests (test/ipvs/delta-*.test.ts and the VM test): a
 * compact model of Services and their endpoints → manifests on disk → kpc's bundles and deltas,
 * compiled in-process with runKpc exactly as a user would (`kpc compile --proxy-mode ipvs … -o DIR`,
 * `kpc compile … --previous DIR -o DIR2`).
 *
 * The node: node-a, 192.168.1.10 / fd00:1::10 (eth0 in the VM), cluster CIDR 10.244.0.0/16 /
 * fd00:244::/48 (ADDR). Pods on node-a are local (KUBE-LOOP-BACK entries); on node-b remote.
 */

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runKpc } from '../../helpers/run-kpc.js';

export const NODE_NAME = 'node-a';

export interface EpModel {
  ip: string;
  node?: string;
  ready?: boolean;
  terminating?: boolean;
}

export interface PortModel {
  name: string;
  port: number;
  targetPort: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  nodePort?: number;
}

export interface SvcModel {
  name: string;
  namespace?: string;
  clusterIP: string;
  type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  ports: PortModel[];
  externalIPs?: string[];
  loadBalancerIPs?: string[];
  sourceRanges?: string[];
  externalTrafficPolicy?: 'Cluster' | 'Local';
  healthCheckNodePort?: number;
  affinitySeconds?: number;
  endpoints: EpModel[];
}

export interface StateModel {
  name: string;
  /** Default ipv4. */
  family?: 'ipv4' | 'ipv6';
  services: SvcModel[];
  /** Extra kpc flags for this state (e.g. --ipvs-scheduler wrr). */
  args?: string[];
}

function manifests(state: StateModel): string {
  const docs: unknown[] = [];
  for (const s of state.services) {
    const ns = s.namespace ?? 'default';
    const spec: Record<string, unknown> = {
      type: s.type ?? 'ClusterIP',
      clusterIP: s.clusterIP,
      clusterIPs: [s.clusterIP],
      ports: s.ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.targetPort, protocol: p.protocol ?? 'TCP', ...(p.nodePort ? { nodePort: p.nodePort } : {}) })),
    };
    if (s.externalIPs) spec.externalIPs = s.externalIPs;
    if (s.sourceRanges) spec.loadBalancerSourceRanges = s.sourceRanges;
    if (s.externalTrafficPolicy) spec.externalTrafficPolicy = s.externalTrafficPolicy;
    if (s.healthCheckNodePort) spec.healthCheckNodePort = s.healthCheckNodePort;
    if (s.affinitySeconds !== undefined) {
      spec.sessionAffinity = 'ClientIP';
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: s.affinitySeconds } };
    }
    const svc: Record<string, unknown> = { apiVersion: 'v1', kind: 'Service', metadata: { name: s.name, namespace: ns }, spec };
    if (s.loadBalancerIPs) svc.status = { loadBalancer: { ingress: s.loadBalancerIPs.map((ip) => ({ ip })) } };
    docs.push(svc);
    docs.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${s.name}-abc`, namespace: ns, labels: { 'kubernetes.io/service-name': s.name } },
      addressType: state.family === 'ipv6' ? 'IPv6' : 'IPv4',
      endpoints: s.endpoints.map((e) => ({
        addresses: [e.ip],
        nodeName: e.node ?? 'node-b',
        conditions: { ready: e.ready ?? true, serving: true, terminating: e.terminating ?? false },
      })),
      ports: s.ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol ?? 'TCP' })),
    });
  }
  return docs.map((d) => stringify(d)).join('---\n');
}

/** A state's name with its family and flags: unique within a workspace. */
export function stateKey(state: StateModel): string {
  return `${state.family ?? 'ipv4'}-${state.name}-${(state.args ?? []).join('_').replace(/[^a-z0-9]/gi, '')}`;
}

export interface Workspace {
  root: string;
  /** Manifests of a state (written once). */
  input(state: StateModel): string;
  cleanup(): void;
}

export function workspace(label: string): Workspace {
  const root = mkdtempSync(join(tmpdir(), `kpc-ipvs-${label}-`));
  const written = new Set<string>();
  return {
    root,
    input(state) {
      const key = stateKey(state);
      const dir = join(root, 'input', key);
      if (!written.has(key)) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'objects.yaml'), manifests(state));
        written.add(key);
      }
      return dir;
    },
    cleanup() {
      if (!process.env.KPC_IPVS_DELTA_KEEP) rmSync(root, { recursive: true, force: true });
    },
  };
}

export function readDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) out[name] = readFileSync(join(dir, name), 'utf8');
  return out;
}

export function writeDir(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content, { mode: name.endsWith('.sh') ? 0o755 : 0o644 });
  return dir;
}

async function kpc(args: string[]): Promise<void> {
  mkdirSync(join(args[args.length - 1]!, '..'), { recursive: true });
  const r = await runKpc(args);
  if (r.code !== 0) throw new Error(`kpc ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
}

/** The full bundle of a state (`-o DIR`). */
export async function fullBundle(ws: Workspace, state: StateModel, extra: string[] = []): Promise<Record<string, string>> {
  const out = join(ws.root, 'out', `full-${stateKey(state)}-${extra.join('_').replace(/[^a-z0-9]/gi, '')}`);
  await kpc(['compile', ...nodeArgs(state.family ?? 'ipv4'), ...(state.args ?? []), ...extra, '-f', ws.input(state), '-R', '-o', out]);
  return readDir(out);
}

/** The delta bundle from `previousDir` to `state` (`--previous DIR -o DIR2`). */
export async function deltaBundle(ws: Workspace, state: StateModel, previousDir: string, extra: string[] = []): Promise<Record<string, string>> {
  const out = join(ws.root, 'out', `delta-${stateKey(state)}-${Math.random().toString(36).slice(2, 8)}`);
  await kpc(['compile', ...nodeArgs(state.family ?? 'ipv4'), ...(state.args ?? []), ...extra, '-f', ws.input(state), '-R', '--previous', previousDir, '-o', out]);
  return readDir(out);
}

// ---------------------------------------------------------------------------------------------
// The sequence the kernel tests walk through
// ---------------------------------------------------------------------------------------------

export type Family = 'ipv4' | 'ipv6';

/** The scenario's addresses, per family. */
export const ADDR = {
  ipv4: {
    node: '192.168.1.10',
    client: '192.168.1.100',
    web: '10.96.0.20',
    dns: '10.96.0.10',
    api: '10.96.0.30',
    lb: '203.0.113.10',
    ext: '198.51.100.20',
    range: '198.51.100.0/24',
    clusterCIDR: '10.244.0.0/16',
    pods: { a: '10.244.1.5', b: '10.244.2.7', c: '10.244.2.8', d: '10.244.3.9', dns: '10.244.1.3' },
  },
  ipv6: {
    node: 'fd00:1::10',
    client: 'fd00:1::100',
    web: 'fd00:96::20',
    dns: 'fd00:96::10',
    api: 'fd00:96::30',
    lb: '2001:db8:113::10',
    ext: '2001:db8:100::20',
    range: '2001:db8:100::/64',
    clusterCIDR: 'fd00:244::/48',
    pods: { a: 'fd00:244:1::5', b: 'fd00:244:2::7', c: 'fd00:244:2::8', d: 'fd00:244:3::9', dns: 'fd00:244:1::3' },
  },
} as const;

/** kpc's node flags for the scenario (the state's own args come after). */
export function nodeArgs(family: Family): string[] {
  const a = ADDR[family];
  return ['--proxy-mode', 'ipvs', '--hostname-override', NODE_NAME, '--node-ip', a.node, '--cluster-cidr', a.clusterCIDR, ...(family === 'ipv6' ? ['--ip-family', 'ipv6'] : [])];
}

export interface SequenceOptions {
  family?: Family;
  /** Give api loadBalancerSourceRanges (KUBE-IPVS-OUT-FILTER then uses the `ipvs` match, which
   * needs ip_vs: the VM only). */
  sourceRanges?: boolean;
}

/**
 * S0 web (NodePort) → a (local), b; kube-dns (UDP + TCP) → dns pod (local)
 * S1 web gains c                                  (-a; no set change: c is remote)
 * S2 web loses a                                  (TCP: quiesced or deleted; LOOP-BACK del)
 * S3 Service api added: LoadBalancer + external IP (-A, set entries, addresses, KUBE-SERVICES)
 * S4 api deleted; web gets ClientIP affinity       (-D, dels, addresses del, -E with -p)
 * S5 kube-dns loses its pod (UDP: always -d), scheduler wrr (-E everywhere), no affinity
 */
export function sequence(options: SequenceOptions = {}): StateModel[] {
  const family = options.family ?? 'ipv4';
  const a = ADDR[family];
  const p = a.pods;
  const ep = (ip: string, node = 'node-b'): EpModel => ({ ip, node });
  const web = (endpoints: EpModel[], extra: Partial<SvcModel> = {}): SvcModel => ({
    name: 'web',
    clusterIP: a.web,
    type: 'NodePort',
    ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
    endpoints,
    ...extra,
  });
  const dns = (endpoints: EpModel[]): SvcModel => ({
    name: 'kube-dns',
    namespace: 'kube-system',
    clusterIP: a.dns,
    ports: [
      { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, targetPort: 53, protocol: 'TCP' },
    ],
    endpoints,
  });
  const api: SvcModel = {
    name: 'api',
    clusterIP: a.api,
    type: 'LoadBalancer',
    ports: [{ name: 'https', port: 443, targetPort: 8080, nodePort: 30443 }],
    loadBalancerIPs: [a.lb],
    externalIPs: [a.ext],
    ...(options.sourceRanges ? { sourceRanges: [a.range] } : {}),
    endpoints: [ep(p.d)],
  };
  const local = NODE_NAME;
  return [
    { name: 's0', services: [web([ep(p.a, local), ep(p.b)]), dns([ep(p.dns, local)])] },
    { name: 's1', services: [web([ep(p.a, local), ep(p.b), ep(p.c)]), dns([ep(p.dns, local)])] },
    { name: 's2', services: [web([ep(p.b), ep(p.c)]), dns([ep(p.dns, local)])] },
    { name: 's3', services: [web([ep(p.b), ep(p.c)]), dns([ep(p.dns, local)]), api] },
    { name: 's4', services: [web([ep(p.b), ep(p.c)], { affinitySeconds: 600 }), dns([ep(p.dns, local)])] },
    { name: 's5', services: [web([ep(p.b), ep(p.c)]), dns([])], args: ['--ipvs-scheduler', 'wrr'] },
  ].map((st) => ({ ...st, family }));
}

/** The IPv4 sequence without source ranges (host tests, goldens). */
export const SEQUENCE: StateModel[] = sequence();

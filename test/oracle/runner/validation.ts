/**
 * --validation: generated clusters with one object damaged (a mutation), checked by
 * `kpc validate` and by the API server's own validation (`kpc-oracle-vX validate`: defaulting,
 * conversion to the internal types, pkg/apis/core/validation and pkg/apis/discovery/validation).
 * Compared: the verdict (valid or not) and the messages (field.Error texts; kpc prints them as
 * `file:line:col: MESSAGE`). A decode error (wrong JSON type) has no field.Error text on the
 * oracle's side: only the verdict is compared then.
 */

import { generate, rng } from './generate.js';
import { listJSON, oracleBinary, pool, runProcess, kpcBin, writeTemp } from './common.js';

type Item = Record<string, unknown>;
type Mutation = { name: string; kinds: string[]; apply: (it: Item, r: () => number) => void };

const spec = (it: Item) => it.spec as Record<string, unknown>;
const ports = (it: Item) => spec(it).ports as Item[];

export const MUTATIONS: Mutation[] = [
  { name: 'port 0', kinds: ['Service'], apply: (it) => void (ports(it)[0]!.port = 0) },
  { name: 'port 70000', kinds: ['Service'], apply: (it) => void (ports(it)[0]!.port = 70000) },
  { name: 'port as string', kinds: ['Service'], apply: (it) => void (ports(it)[0]!.port = '80') },
  { name: 'protocol tcp', kinds: ['Service'], apply: (it) => void (ports(it)[0]!.protocol = 'tcp') },
  { name: 'duplicate port', kinds: ['Service'], apply: (it) => void ports(it).push({ ...ports(it)[0]!, name: 'dup' }) },
  { name: 'duplicate port name', kinds: ['Service'], apply: (it) => void ports(it).push({ ...ports(it)[0]!, port: 1234, name: ports(it)[0]!.name ?? 'x' }) },
  { name: 'port name upper', kinds: ['Service'], apply: (it) => void (ports(it)[0]!.name = 'HTTP') },
  { name: 'bad name', kinds: ['Service', 'EndpointSlice', 'Node', 'Endpoints'], apply: (it) => void ((it.metadata as Item).name = 'Bad_Name') },
  { name: 'long name', kinds: ['Service'], apply: (it) => void ((it.metadata as Item).name = 'a'.repeat(64)) },
  { name: 'bad namespace', kinds: ['Service', 'EndpointSlice'], apply: (it) => void ((it.metadata as Item).namespace = 'Not Valid') },
  { name: 'cluster IP 300', kinds: ['Service'], apply: (it) => { if (spec(it).clusterIP && spec(it).clusterIP !== 'None') { spec(it).clusterIP = '10.96.0.300'; spec(it).clusterIPs = ['10.96.0.300']; } else spec(it).clusterIP = 'x'; } },
  { name: 'cluster IP leading zero', kinds: ['Service'], apply: (it) => { spec(it).clusterIP = '010.096.000.001'; spec(it).clusterIPs = ['010.096.000.001']; spec(it).ipFamilies = ['IPv4']; spec(it).ipFamilyPolicy = 'SingleStack'; } },
  { name: 'clusterIP mismatch', kinds: ['Service'], apply: (it) => { spec(it).clusterIP = '10.96.9.9'; spec(it).clusterIPs = ['10.96.9.8']; } },
  { name: 'bad targetPort', kinds: ['Service'], apply: (it) => void (ports(it)[0]!.targetPort = '-bad-') },
  { name: 'nodePort on ClusterIP', kinds: ['Service'], apply: (it) => { spec(it).type = 'ClusterIP'; ports(it)[0]!.nodePort = 30555; } },
  { name: 'type Foo', kinds: ['Service'], apply: (it) => void (spec(it).type = 'Foo') },
  { name: 'affinity bad', kinds: ['Service'], apply: (it) => void (spec(it).sessionAffinity = 'Sticky') },
  { name: 'affinity timeout 0', kinds: ['Service'], apply: (it) => { spec(it).sessionAffinity = 'ClientIP'; spec(it).sessionAffinityConfig = { clientIP: { timeoutSeconds: 0 } }; } },
  { name: 'affinity timeout huge', kinds: ['Service'], apply: (it) => { spec(it).sessionAffinity = 'ClientIP'; spec(it).sessionAffinityConfig = { clientIP: { timeoutSeconds: 86401 } }; } },
  { name: 'bad externalIP', kinds: ['Service'], apply: (it) => void (spec(it).externalIPs = ['203.0.113.300']) },
  { name: 'externalIP loopback', kinds: ['Service'], apply: (it) => void (spec(it).externalIPs = ['127.0.0.1']) },
  { name: 'bad source range', kinds: ['Service'], apply: (it) => { spec(it).type = 'LoadBalancer'; spec(it).loadBalancerSourceRanges = ['10.0.0.0/33']; } },
  { name: 'ETP Local on ClusterIP', kinds: ['Service'], apply: (it) => { spec(it).type = 'ClusterIP'; delete spec(it).externalIPs; for (const p of ports(it)) delete p.nodePort; spec(it).externalTrafficPolicy = 'Local'; } },
  { name: 'ITP bad', kinds: ['Service'], apply: (it) => void (spec(it).internalTrafficPolicy = 'Nearby') },
  { name: 'trafficDistribution bad', kinds: ['Service'], apply: (it) => void (spec(it).trafficDistribution = 'Anywhere') },
  { name: 'ipFamilies mismatch', kinds: ['Service'], apply: (it) => { spec(it).ipFamilies = ['IPv6']; } },
  { name: 'addressType bad', kinds: ['EndpointSlice'], apply: (it) => void (it.addressType = 'IPv5') },
  { name: 'endpoint address bad', kinds: ['EndpointSlice'], apply: (it) => void (it.endpoints = [{ addresses: ['not-an-ip'], conditions: { ready: true } }]) },
  { name: 'endpoint no address', kinds: ['EndpointSlice'], apply: (it) => void (it.endpoints = [{ addresses: [], conditions: { ready: true } }]) },
  { name: 'slice port name bad', kinds: ['EndpointSlice'], apply: (it) => void (it.ports = [{ name: 'Bad Name', port: 80, protocol: 'TCP' }]) },
  { name: 'slice protocol bad', kinds: ['EndpointSlice'], apply: (it) => void (it.ports = [{ name: 'x', port: 80, protocol: 'ICMP' }]) },
  { name: 'slice port 0', kinds: ['EndpointSlice'], apply: (it) => void (it.ports = [{ name: 'x', port: 0, protocol: 'TCP' }]) },
  { name: 'slice nodeName bad', kinds: ['EndpointSlice'], apply: (it) => void (it.endpoints = [{ addresses: [it.addressType === 'IPv6' ? 'fd00::1' : '10.0.0.1'], nodeName: 'Bad_Node' }]) },
  { name: 'slice zone hint bad', kinds: ['EndpointSlice'], apply: (it) => void (it.endpoints = [{ addresses: [it.addressType === 'IPv6' ? 'fd00::1' : '10.0.0.1'], hints: { forZones: [{ name: '' }] } }]) },
  { name: 'node podCIDR bad', kinds: ['Node'], apply: (it) => { (it.spec as Item).podCIDR = '10.244.0.0/40'; (it.spec as Item).podCIDRs = ['10.244.0.0/40']; } },
  { name: 'node podCIDRs same family', kinds: ['Node'], apply: (it) => { (it.spec as Item).podCIDR = '10.244.0.0/24'; (it.spec as Item).podCIDRs = ['10.244.0.0/24', '10.245.0.0/24']; } },
  { name: 'endpoints bad ip', kinds: ['Endpoints'], apply: (it) => void (it.subsets = [{ addresses: [{ ip: '10.0.0.256' }], ports: [{ port: 80, protocol: 'TCP' }] }]) },
  { name: 'endpoints port 0', kinds: ['Endpoints'], apply: (it) => void (it.subsets = [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ port: 0, protocol: 'TCP' }] }]) },
];

interface OracleVerdict {
  index: number;
  valid: boolean;
  decodeError?: string;
  errors: { error: string }[];
}

export interface ValidationVerdict {
  seed: number;
  mutation: string;
  verdictAgree: boolean;
  messagesAgree: boolean;
  detail: string;
}

function kpcMessages(stderr: string): string[] {
  const out: string[] = [];
  for (const line of stderr.split('\n')) {
    // `FILE:L:C: [Kind ns/name: ]field: message`: in a file of several objects kpc names the
    // object; a namespace or name outside [A-Za-z0-9._-] is written as a JSON string
    // (src/parser/load.ts objectLabel), e.g. `EndpointSlice "Not Valid"/web-abc12: `.
    const part = '(?:"(?:[^"\\\\]|\\\\.)*"|[A-Za-z0-9._-]+)';
    const m = new RegExp(`^[^:]+:\\d+:\\d+: (?:[A-Z][A-Za-z]+ (?:${part}/)?${part}: )?(.*)$`).exec(line);
    if (m && !m[1]!.startsWith('warning')) out.push(m[1]!);
  }
  return out.sort();
}

export async function checkValidation(version: string, seed: number): Promise<ValidationVerdict> {
  const r = rng(seed * 7919 + 13);
  const g = generate(seed, 'iptables', version);
  const items = JSON.parse(JSON.stringify(g.items)) as Item[];
  // One mutation on one object it applies to (or none: the clean cluster, one time in six).
  let mutation = 'none';
  if (r() > 1 / 6) {
    for (let tries = 0; tries < 20; tries++) {
      const m = MUTATIONS[Math.floor(r() * MUTATIONS.length)]!;
      const targets = items.filter((it) => m.kinds.includes(String(it.kind)) && !(it.kind === 'Service' && spec(it).type === 'ExternalName'));
      if (targets.length === 0) continue;
      m.apply(targets[Math.floor(r() * targets.length)]!, r);
      mutation = m.name;
      break;
    }
  }
  const tmp = writeTemp('cluster.json', listJSON(items));
  try {
    const [kpc, oracle] = await Promise.all([
      runProcess(process.execPath, [kpcBin(), 'validate', '--kube-proxy-version', version, '-f', tmp.path]),
      runProcess(oracleBinary(version), ['validate', '-f', tmp.path]),
    ]);
    const verdicts = oracle.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as OracleVerdict);
    const oracleValid = verdicts.every((v) => v.valid);
    const kpcValid = kpc.code === 0;
    const decode = verdicts.some((v) => v.decodeError);
    const om = verdicts.flatMap((v) => v.errors.map((e) => e.error)).sort();
    const km = kpcMessages(kpc.stderr);
    const verdictAgree = oracleValid === kpcValid;
    const messagesAgree = verdictAgree && (decode || JSON.stringify(om) === JSON.stringify(km));
    let detail = '';
    if (!verdictAgree) detail = `verdict: API server ${oracleValid ? 'valid' : 'invalid'} (${om[0] ?? verdicts.find((v) => v.decodeError)?.decodeError ?? ''}) / kpc ${kpcValid ? 'valid' : 'invalid'} (${km[0] ?? kpc.stderr.trim().split('\n')[0] ?? ''})`;
    else if (!messagesAgree) {
      // Multisets: a message printed more often on one side counts as extra there.
      const extra = (a: string[], b: string[]) => {
        const left = [...b];
        return a.filter((m) => {
          const i = left.indexOf(m);
          if (i === -1) return true;
          left.splice(i, 1);
          return false;
        });
      };
      const onlyO = extra(om, km);
      const onlyK = extra(km, om);
      detail = `messages: API server only ${JSON.stringify(onlyO.slice(0, 2))} / kpc only ${JSON.stringify(onlyK.slice(0, 2))}`;
    }
    return { seed, mutation, verdictAgree, messagesAgree, detail };
  } finally {
    tmp.cleanup();
  }
}

export async function runValidationCampaign(versions: string[], seeds: [number, number], jobs: number): Promise<number> {
  let total = 0;
  let allAgree = 0;
  for (const version of versions) {
    const list: number[] = [];
    for (let s = seeds[0]; s <= seeds[1]; s++) list.push(s);
    const res = await pool(list, jobs, (s) => checkValidation(version, s));
    for (const v of res) if (!v.messagesAgree) console.log(`disagree validation v${version} seed ${v.seed} (${v.mutation}): ${v.detail}`);
    const va = res.filter((v) => v.verdictAgree).length;
    const ma = res.filter((v) => v.messagesAgree).length;
    console.log(`oracle validation v${version}: verdicts ${va}/${res.length} agree, messages ${ma}/${res.length} agree`);
    total += res.length;
    allAgree += ma;
  }
  console.log(`oracle: ${allAgree}/${total} agree`);
  return allAgree === total ? 0 : 1;
}

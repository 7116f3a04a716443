/**
 * `kpc compile --proxy-mode nftables --previous`: deltas reproduce the new state on a real kernel.
 *
 * Per sequence of states, four namespaces start from state 0's full output (`nft -f`), with a
 * foreign table (a firewall's `inet filter`) beside kube-proxy's; at every next state each one
 * gets a delta computed from its own kind of previous state and applied with `nft -f`:
 *   kpc   previous = kpc's full output of the previous state
 *   list  previous = that namespace's own `nft list table ip kube-proxy` (what a node has)
 *   json  previous = that namespace's own `nft -j list table ip kube-proxy`
 *   full  previous = kpc's text, with --full
 * so the namespaces reach every state only through deltas. After each step each namespace's
 * `nft list table` must equal (canonicalListing: nft's own text, order-insensitive where nft's
 * order is not semantic) a fresh namespace loaded with the new full output, and the foreign
 * table must be byte-for-byte what it was. The expected listings come from nft, not from kpc.
 *
 * Sequences: kube-proxy's TestSyncProxyRulesRepeated steps 1→12 (v1.34 and v1.37; their
 * Services and EndpointSlices per step), and scripted ones: add/delete a Service, endpoint
 * change, scale 1→3→0→1, affinity on/changed/off, ClusterIP→NodePort→LoadBalancer→eTP Local→
 * ClusterIP, source ranges, IPv6, v1.34 (E2) endpoint chains. Plus: no change → empty delta,
 * a negative control, and the refusal of a delta that removes every Service.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify, parse as parseYaml } from 'yaml';
import { afterAll, expect, it } from 'vitest';
import { FIXTURES_ROOT } from '../../helpers/fixtures.js';
import { repeatedSteps } from './repeated-steps.js';
import { describeLab, listLabNetns, nsExec, withNetnsGroup } from '../../netns/lab.js';
import { endpointSlice, service, type SvcSpec } from '../../e2e/manifests.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { canonicalListing, nftListTable, nftListTableJSON, nftLoad } from '../../helpers/nft-kernel.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-nftdelta-'));
let n = 0;
function file(text: string, name = 'f'): string {
  const p = join(tmp, `${n++}-${name}`);
  writeFileSync(p, text);
  return p;
}

export interface NftStateSpec {
  label: string;
  /** kpc arguments after `compile` (incl. -f). */
  args: string[];
  family?: 'ip' | 'ip6';
}

const FOREIGN = `table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 accept
		ct state established,related accept
	}
}
`;

async function kpc(args: string[]): Promise<string> {
  const r = await runKpc(['compile', ...args]);
  if (r.code !== 0) throw new Error(`kpc ${args.join(' ')} → ${r.code}\n${r.stderr}`);
  return r.stdout;
}

async function must(p: Promise<{ code: number; stdout: string; stderr: string }>, what: string): Promise<string> {
  const r = await p;
  if (r.code !== 0) throw new Error(`${what}: ${r.stderr}`);
  return r.stdout;
}

export interface StepSizes {
  label: string;
  kpc: number;
  list: number;
  json: number;
  full: number;
}

function lines(text: string): number {
  return text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')).length;
}

/** Runs one sequence; returns the delta sizes per step. */
export async function checkSequence(states: NftStateSpec[]): Promise<StepSizes[]> {
  const family = states[0]!.family ?? 'ip';
  const sizes: StepSizes[] = [];
  return withNetnsGroup('nftd', 5, async ([nk, nl, nj, nf, fresh]) => {
    const ways = [nk!, nl!, nj!, nf!];
    let prevFull = await kpc(states[0]!.args);
    for (const ns of ways) {
      await must(nftLoad(ns, FOREIGN), 'foreign table');
      await must(nftLoad(ns, prevFull), `load ${states[0]!.label}`);
    }
    const foreign = await must(nsExec(nk!, ['nft', 'list', 'table', 'inet', 'filter']), 'list foreign');
    for (const s of states.slice(1)) {
      const newFull = await kpc(s.args);
      await nsExec(fresh!, ['nft', 'flush', 'ruleset']);
      await must(nftLoad(fresh!, newFull), `fresh ${s.label}`);
      const want = canonicalListing(await must(nftListTable(fresh!, family), 'list fresh'));
      const prevFile = file(prevFull, 'prev.nft');
      const deltas = {
        kpc: await kpc([...s.args, '--previous', prevFile]),
        list: await kpc([...s.args, '--previous', file(await must(nftListTable(nl!, family), 'list'), 'prev.list')]),
        json: await kpc([...s.args, '--previous', file(await must(nftListTableJSON(nj!, family), 'list -j'), 'prev.json')]),
        full: await kpc([...s.args, '--previous', prevFile, '--full']),
      };
      const nsOf = { kpc: nk!, list: nl!, json: nj!, full: nf! };
      for (const way of ['kpc', 'list', 'json', 'full'] as const) {
        const r = await nftLoad(nsOf[way], deltas[way]);
        expect(r.code, `${s.label} (${way}): nft -f of the delta failed: ${r.stderr}\n${deltas[way]}`).toBe(0);
        const got = canonicalListing(await must(nftListTable(nsOf[way], family), 'list'));
        expect(got, `${s.label} (${way}): the state after the delta\n${deltas[way]}`).toBe(want);
        expect(await must(nsExec(nsOf[way], ['nft', 'list', 'table', 'inet', 'filter']), 'list foreign'), `${s.label} (${way}): foreign table`).toBe(foreign);
      }
      // previous = kpc's text, = the node's listing and = its JSON describe the same state: the same delta
      expect(deltas.list, `${s.label}: delta from nft list = delta from kpc's text`).toBe(deltas.kpc);
      expect(deltas.json, `${s.label}: delta from nft -j = delta from kpc's text`).toBe(deltas.kpc);
      sizes.push({ label: s.label, kpc: lines(deltas.kpc), list: lines(deltas.list), json: lines(deltas.json), full: lines(deltas.full) });
      prevFull = newFull;
    }
    return sizes;
  });
}

// ---------------------------------------------------------------------------------------------

const NODE = ['--proxy-mode', 'nftables', '--hostname-override', 'node-a', '--node-ip', '192.168.50.10', '--node-ip', 'fd00:50::10', '--cluster-cidr', '10.244.0.0/16,fd00:244::/56'];

const http = { name: 'http', port: 80, protocol: 'TCP' as const, targetPort: 8080 };
const dns = { name: 'dns', port: 53, protocol: 'UDP' as const, targetPort: 9053 };

function svc(name: string, clusterIP: string, pods: string[], extra: Partial<SvcSpec> = {}): Record<string, unknown>[] {
  const ports = extra.ports ?? [http];
  return [
    service({ name, clusterIP, ports, ...extra }),
    endpointSlice({
      service: name,
      ports: ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol ?? 'TCP' })),
      endpoints: pods.map((p) => ({ pod: p })),
      family: extra.family,
    }),
  ];
}

function state(label: string, objects: Record<string, unknown>[], extraArgs: string[] = [], family: 'ip' | 'ip6' = 'ip'): NftStateSpec {
  const input = file(objects.map((o) => `---\n${stringify(o)}`).join(''), 'manifests.yaml');
  return { label, args: [...NODE, ...extraArgs, '-f', input], family };
}

const WEB = (pods: string[], extra: Partial<SvcSpec> = {}) => svc('web', '10.96.0.10', pods, extra);
const API = (pods: string[], extra: Partial<SvcSpec> = {}) => svc('api', '10.96.0.11', pods, extra);
const DNS = (pods: string[]) => svc('dns', '10.96.0.12', pods, { ports: [dns, { ...http, name: 'dns-tcp', port: 53 }] });
const NP = { ...http, nodePort: 30080 };

const allSizes: Record<string, StepSizes[]> = {};

afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  const mine = (await listLabNetns()).filter((x) => x.includes(`-${process.pid}-`));
  expect(mine, 'network namespaces left behind').toEqual([]);
  if (process.env.KPC_DELTA_SIZES) console.log(JSON.stringify(allSizes, null, 1));
});

describeLab('nftables deltas reproduce the new state on a real kernel', { commands: ['nft'] }, () => {
  const sequences: { name: string; states: () => NftStateSpec[] }[] = [
    { name: 'kube-proxy TestSyncProxyRulesRepeated v1.37', states: () => repeatedSteps('v1.37') },
    { name: 'kube-proxy TestSyncProxyRulesRepeated v1.34', states: () => repeatedSteps('v1.34') },
    { name: 'add and delete a Service', states: () => [state('web', WEB(['a1', 'a2'])), state('web+api', [...WEB(['a1', 'a2']), ...API(['a3', 'b1'])]), state('api', API(['a3', 'b1']))] },
    { name: 'endpoint change, scale 1→3→0→1', states: () => [state('1', WEB(['a1'])), state('other', WEB(['b1'])), state('3', WEB(['a1', 'a2', 'b1'])), state('0', WEB([])), state('1 again', WEB(['a1']))] },
    {
      name: 'affinity on, changed, off',
      states: () => [state('plain', WEB(['a1', 'b1'])), state('affinity', WEB(['a1', 'b1'], { clientIPAffinitySeconds: 10800 })), state('timeout', WEB(['a1', 'b1'], { clientIPAffinitySeconds: 60 })), state('off', WEB(['a1', 'b1']))],
    },
    {
      name: 'type changes ClusterIP → NodePort → LoadBalancer → eTP Local → ClusterIP',
      states: () => [
        state('clusterip', [...WEB(['a1', 'b1']), ...DNS(['a2'])]),
        state('nodeport', [...WEB(['a1', 'b1'], { type: 'NodePort', ports: [NP] }), ...DNS(['a2'])]),
        state('lb', [...WEB(['a1', 'b1'], { type: 'LoadBalancer', ports: [NP], loadBalancerIPs: ['203.0.113.10'], loadBalancerSourceRanges: ['198.51.100.0/24'] }), ...DNS(['a2'])]),
        state('etp-local', [...WEB(['a1', 'b1'], { type: 'LoadBalancer', ports: [NP], loadBalancerIPs: ['203.0.113.10'], externalTrafficPolicy: 'Local', healthCheckNodePort: 31000 }), ...DNS(['a2'])]),
        state('clusterip again', [...WEB(['a1', 'b1']), ...DNS(['a2'])]),
      ],
    },
    {
      name: 'v1.34 (endpoint chains for every endpoint)',
      states: () => [
        state('web', WEB(['a1', 'a2']), ['--kube-proxy-version', '1.34']),
        state('web scaled + api', [...WEB(['a1', 'a2', 'b1']), ...API(['a3'])], ['--kube-proxy-version', '1.34']),
        state('api only, affinity', API(['a3'], { clientIPAffinitySeconds: 100 }), ['--kube-proxy-version', '1.34']),
      ],
    },
    {
      name: 'node-wide changes: release E2 → E4, masquerade bit, nodePortAddresses, localhost NodePorts gate on/off',
      states: () => {
        const objs = [...WEB(['a1', 'b1'], { type: 'NodePort', ports: [NP] }), ...API(['a2'], { clientIPAffinitySeconds: 300 })];
        return [
          state('v1.34', objs, ['--kube-proxy-version', '1.34']),
          state('v1.37', objs, ['--kube-proxy-version', '1.37']),
          state('localhost NodePorts gate on', objs, ['--kube-proxy-version', '1.37', '--feature-gates', 'KubeProxyNFTablesLocalhostNodePorts=true']),
          state('masqueradeBit 15', objs, ['--kube-proxy-version', '1.37', '--config', file('apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nnftables:\n  masqueradeBit: 15\n', 'config.yaml')]),
          state('nodeport addresses all', objs, ['--kube-proxy-version', '1.37', '--nodeport-addresses', '0.0.0.0/0']),
          state('back to v1.36', objs, ['--kube-proxy-version', '1.36']),
        ];
      },
    },
    {
      name: 'IPv6',
      states: () => [
        state('web6', svc('web6', 'fd00:96::10', ['a1'], { family: 'ipv6' }), ['--ip-family', 'ipv6'], 'ip6'),
        state('web6 scaled + nodeport', svc('web6', 'fd00:96::10', ['a1', 'b1'], { family: 'ipv6', type: 'NodePort', ports: [NP] }), ['--ip-family', 'ipv6'], 'ip6'),
        state('web6 gone, api6', svc('api6', 'fd00:96::11', ['a2'], { family: 'ipv6' }), ['--ip-family', 'ipv6'], 'ip6'),
      ],
    },
  ];

  for (const seq of sequences) {
    it(seq.name, { timeout: 600_000 }, async () => {
      allSizes[seq.name] = await checkSequence(seq.states());
    });
  }

  it('no change: an empty delta, and a negative control', { timeout: 120_000 }, async () => {
    const s = state('web', WEB(['a1', 'a2']));
    const full = await kpc(s.args);
    expect(await kpc([...s.args, '--previous', file(full)])).toBe('');
    // a previous state that differs from the node: the delta from it does not give the new state
    const other = state('web other', WEB(['a1', 'b1']));
    const delta = await kpc([...other.args, '--previous', file(await kpc(state('x', WEB(['b2'])).args))]);
    await withNetnsGroup('nftd', 2, async ([a, b]) => {
      await must(nftLoad(a!, full), 'load');
      await nftLoad(a!, delta); // may fail (atomic) or apply: either way not the new state
      await must(nftLoad(b!, await kpc(other.args)), 'load');
      expect(canonicalListing(await must(nftListTable(a!, 'ip'), 'list'))).not.toBe(canonicalListing(await must(nftListTable(b!, 'ip'), 'list')));
    });
  });

  it('a delta removing every Service is refused unless --allow-empty', { timeout: 120_000 }, async () => {
    const s = state('web', WEB(['a1', 'a2']));
    const prev = file(await kpc(s.args));
    const empty = file('', 'empty.yaml');
    const refused = await runKpc(['compile', ...NODE, '-f', empty, '--previous', prev]);
    expect(refused.code).toBe(2);
    const onlySlice = file(`---\n${stringify(endpointSlice({ service: 'web', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: [{ pod: 'a1' }] }))}`, 'slice.yaml');
    const refused2 = await runKpc(['compile', ...NODE, '-f', onlySlice, '--previous', prev]);
    expect(refused2.code, refused2.stderr).toBe(2);
    expect(refused2.stderr).toMatch(/allow-empty/);
    const allowed = await runKpc(['compile', ...NODE, '-f', onlySlice, '--previous', prev, '--allow-empty']);
    expect(allowed.code, allowed.stderr).toBe(0);
    await withNetnsGroup('nftd', 2, async ([a, b]) => {
      await must(nftLoad(a!, readFileSync(prev, 'utf8')), 'load');
      await must(nftLoad(a!, allowed.stdout), 'delta');
      await must(nftLoad(b!, await kpc([...NODE, '-f', onlySlice, '--allow-empty'])), 'fresh');
      expect(canonicalListing(await must(nftListTable(a!, 'ip'), 'list'))).toBe(canonicalListing(await must(nftListTable(b!, 'ip'), 'list')));
    });
  });
});

/**
 * kube-proxy's own states as the previous state: for each TestSyncProxyRulesRepeated step i,
 * kube-proxy's expected ruleset of step i-1 (its test's expectation, which still holds chains
 * kube-proxy has flushed but not yet deleted) is loaded, kpc's delta to step i computed with
 * `--previous` that dump is applied, and the result must equal kpc's full output of step i loaded
 * fresh. The delta is never longer than what kube-proxy sent for the step (partial.nft), apart
 * from the stale chains kpc deletes at once where kube-proxy deletes them a sync later.
 */
describeLab('nftables deltas from kube-proxy\'s own states', { commands: ['nft'] }, () => {
  for (const release of ['v1.34', 'v1.36', 'v1.37']) {
    it(`TestSyncProxyRulesRepeated ${release}`, { timeout: 600_000 }, async () => {
      const dir = join(FIXTURES_ROOT, 'kube-proxy', 'nftables', release);
      const steps = readdirSync(dir).filter((d) => d.startsWith('TestSyncProxyRulesRepeated-')).sort();
      const { toLoadOrder, commandLines } = await import('../../helpers/nft-kernel.js');
      let kpcTotal = 0;
      let kubeProxyTotal = 0;
      const rows: string[] = [];
      await withNetnsGroup('nftk', 2, async ([a, fresh]) => {
        for (let i = 1; i < steps.length; i++) {
          const prevDump = readFileSync(join(dir, steps[i - 1]!, 'expected.dump'), 'utf8');
          const args = (parseYaml(readFileSync(join(dir, steps[i]!, 'case.yaml'), 'utf8')) as { args: string[] }).args.slice(1);
          const full = [...args, '-f', join(dir, steps[i]!, 'input'), '-R'];
          const delta = await kpc([...full, '--previous', file(prevDump, 'kp.dump')]);
          await nsExec(a!, ['nft', 'flush', 'ruleset']);
          await must(nftLoad(a!, toLoadOrder(prevDump)), 'load kube-proxy dump');
          const r = await nftLoad(a!, delta);
          expect(r.code, `${steps[i]}: ${r.stderr}\n${delta}`).toBe(0);
          await nsExec(fresh!, ['nft', 'flush', 'ruleset']);
          await must(nftLoad(fresh!, await kpc(full)), 'fresh');
          expect(canonicalListing(await must(nftListTable(a!, 'ip'), 'list')), `${steps[i]}\n${delta}`).toBe(canonicalListing(await must(nftListTable(fresh!, 'ip'), 'list')));
          const mine = commandLines(delta);
          const theirs = commandLines(readFileSync(join(dir, steps[i]!, 'partial.nft'), 'utf8'));
          const deletes = mine.filter((l) => l.startsWith('delete chain ')).length;
          expect(mine.length - deletes, `${steps[i]}: kpc ${mine.length} lines (${deletes} chain deletions) vs kube-proxy ${theirs.length}\n${delta}`).toBeLessThanOrEqual(theirs.length);
          kpcTotal += mine.length;
          kubeProxyTotal += theirs.length;
          rows.push(`${steps[i]}: kpc ${mine.length}, kube-proxy ${theirs.length}`);
        }
      });
      if (process.env.KPC_DELTA_SIZES) console.log(`${release}\n${rows.join('\n')}\ntotal: kpc ${kpcTotal}, kube-proxy ${kubeProxyTotal}`);
      expect(kpcTotal).toBeLessThanOrEqual(kubeProxyTotal);
    });
  }
});

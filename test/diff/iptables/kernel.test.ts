/**
 * `kpc compile --previous` on a real kernel: every delta, applied with
 * `iptables-restore --noflush` to a namespace holding the previous state, must leave exactly
 * the state a fresh load of the new full output gives (harness.ts checkSequence: every chain of
 * filter and nat, built-in, kube-proxy's and foreign, compared canonically and as raw
 * iptables-save text; previous given as kpc's text, as the namespace's own iptables-save, and
 * with --full).
 *
 * Needs root, iproute2, iptables (nf_tables), nfacct. Without them the suite is skipped loudly;
 * with CI=true it fails (test/netns/lab.ts describeLab). Every namespace is deleted afterwards.
 *
 * Run alone: `npx vitest run test/diff/iptables/kernel.test.ts`.
 */

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { FIXTURES_ROOT } from '../../helpers/fixtures.js';
import { describeLab, listLabNetns, withNetns } from '../../netns/lab.js';
import { endpointSlice, service, type SvcSpec } from '../../e2e/manifests.js';
import { checkSequence, cleanupTmp, compareSaves, compileDelta, compileFull, kpc, lineCount, load, save, tmpDir, writeManifests, writeText, type StateSpec } from './harness.js';
import { DOCKER_LIKE, NODE_ARGS, NODE_ARGS_V6 } from './states.js';
import { parse as parseYaml } from 'yaml';

/** A golden case's arguments after its command word. */
function caseArgs(file: string): string[] {
  return (parseYaml(readFileSync(file, 'utf8')) as { args: string[] }).args.slice(1);
}

const http = { name: 'http', port: 80, protocol: 'TCP' as const, targetPort: 8080 };
const httpSlice = { name: 'http', port: 8080, protocol: 'TCP' as const };
const dns = { name: 'dns', port: 53, protocol: 'UDP' as const, targetPort: 9053 };
const dnsSlice = { name: 'dns', port: 9053, protocol: 'UDP' as const };

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

function state(label: string, objects: Record<string, unknown>[], args: readonly string[] = NODE_ARGS): StateSpec {
  return { label, input: writeManifests(objects, label), args };
}

const WEB = (pods: string[], extra: Partial<SvcSpec> = {}) => svc('web', '10.96.0.10', pods, extra);
const API = (pods: string[], extra: Partial<SvcSpec> = {}) => svc('api', '10.96.0.11', pods, extra);
const DNS = (pods: string[]) => svc('dns', '10.96.0.12', pods, { ports: [dns, { ...http, name: 'dns-tcp', port: 53 }] });

afterAll(async () => {
  cleanupTmp();
  const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
  expect(mine, 'network namespaces left behind').toEqual([]);
});

describeLab('kpc compile --previous: deltas reproduce the new state on a real kernel', { commands: ['iptables-restore', 'iptables-save', 'ip6tables-restore', 'ip6tables-save', 'nfacct'] }, () => {
  const cases: { name: string; states: () => StateSpec[]; foreign?: string; family?: 'ipv4' | 'ipv6' }[] = [
    {
      name: 'add a Service',
      states: () => [state('web', WEB(['a1', 'a2'])), state('web+api', [...WEB(['a1', 'a2']), ...API(['a3', 'b1'])])],
    },
    {
      name: 'delete a Service',
      states: () => [state('web+api', [...WEB(['a1', 'a2']), ...API(['a3', 'b1'])]), state('api', API(['a3', 'b1']))],
    },
    {
      name: 'change an endpoint',
      states: () => [state('web a1,a2', WEB(['a1', 'a2'])), state('web a1,b2', WEB(['a1', 'b2']))],
    },
    {
      name: 'scale 1 → 3 → 0 → 1',
      states: () => [
        state('1 endpoint', [...WEB(['a1']), ...DNS(['b1'])]),
        state('3 endpoints', [...WEB(['a1', 'a2', 'b1']), ...DNS(['b1'])]),
        state('0 endpoints', [...WEB([]), ...DNS(['b1'])]),
        state('1 endpoint again', [...WEB(['b2']), ...DNS(['b1'])]),
      ],
    },
    {
      name: 'toggle session affinity',
      states: () => [
        state('no affinity', WEB(['a1', 'a2', 'a3'])),
        state('ClientIP 600s', WEB(['a1', 'a2', 'a3'], { clientIPAffinitySeconds: 600 })),
        state('ClientIP 60s', WEB(['a1', 'a2', 'a3'], { clientIPAffinitySeconds: 60 })),
        state('no affinity again', WEB(['a1', 'a2', 'a3'])),
      ],
    },
    {
      name: 'ClusterIP → NodePort → LoadBalancer → ETP Local → ClusterIP',
      states: () => {
        const np = { ...http, nodePort: 30080 };
        return [
          state('ClusterIP', [...WEB(['a1', 'b1']), ...API(['a2'])]),
          state('NodePort', [...WEB(['a1', 'b1'], { type: 'NodePort', ports: [np] }), ...API(['a2'])]),
          state('LoadBalancer', [
            ...WEB(['a1', 'b1'], { type: 'LoadBalancer', ports: [np], loadBalancerIPs: ['203.0.113.10'], loadBalancerSourceRanges: ['192.168.50.21/32'] }),
            ...API(['a2']),
          ]),
          state('LoadBalancer ETP Local', [
            ...WEB(['a1', 'b1'], {
              type: 'LoadBalancer',
              ports: [np],
              loadBalancerIPs: ['203.0.113.10'],
              externalTrafficPolicy: 'Local',
              healthCheckNodePort: 30999,
            }),
            ...API(['a2'], { externalIPs: ['198.51.100.20'] }),
          ]),
          state('ClusterIP again', [...WEB(['a1', 'b1']), ...API(['a2'])]),
        ];
      },
    },
    {
      name: 'node-wide flags change (--masquerade-all, --nfacct, masquerade bit, random-fully)',
      states: () => {
        const objs = [...WEB(['a1', 'b1'], { type: 'NodePort', ports: [{ ...http, nodePort: 30080 }] }), ...API(['a2'])];
        return [
          state('defaults', objs),
          state('--masquerade-all', objs, [...NODE_ARGS, '--masquerade-all']),
          state('--nfacct --iptables-masquerade-bit 15', objs, [...NODE_ARGS, '--nfacct', '--iptables-masquerade-bit', '15']),
          state('--no-masquerade-random-fully (1.36: 1.37 ignores it)', objs, [...NODE_ARGS, '--kube-proxy-version', '1.36', '--no-masquerade-random-fully']),
          state('defaults again', objs),
        ];
      },
    },
    {
      name: 'IPv6: add, change endpoints, NodePort, delete',
      family: 'ipv6',
      states: () => {
        const v6 = (name: string, ip: string, pods: string[], extra: Partial<SvcSpec> = {}) => svc(name, ip, pods, { family: 'ipv6', ...extra });
        return [
          state('web6', v6('web6', 'fd00:96::10', ['a1', 'b1']), NODE_ARGS_V6),
          state('web6+api6', [...v6('web6', 'fd00:96::10', ['a1', 'b1']), ...v6('api6', 'fd00:96::11', ['a2'], { clientIPAffinitySeconds: 300 })], NODE_ARGS_V6),
          state('web6 NodePort', [...v6('web6', 'fd00:96::10', ['a2', 'b1'], { type: 'NodePort', ports: [{ ...http, nodePort: 30090 }] }), ...v6('api6', 'fd00:96::11', ['a2'])], NODE_ARGS_V6),
          state('api6 only', v6('api6', 'fd00:96::11', []), NODE_ARGS_V6),
        ];
      },
    },
    {
      name: 'foreign chains (Docker-like DOCKER, DOCKER-USER, ... with jumps from PREROUTING/OUTPUT/FORWARD/POSTROUTING; mangle and raw rules) survive untouched',
      foreign: DOCKER_LIKE,
      states: () => [
        state('web', WEB(['a1', 'a2'])),
        state('web+api NodePort', [...WEB(['a1', 'a2']), ...API(['a3', 'b1'], { type: 'NodePort', ports: [{ ...http, nodePort: 30081 }] })]),
        state('api only', API(['b2'])),
        // Every Service gone: refused unless asked for (--allow-empty).
        state('nothing', [], [...NODE_ARGS, '--allow-empty']),
        state('web again', WEB(['a3'])),
      ],
    },
  ];

  for (const c of cases) {
    it(c.name, { timeout: 60_000 }, async () => {
      const r = await checkSequence(c.states(), { family: c.family ?? 'ipv4', foreign: c.foreign });
      console.info(`delta kernel: ${c.name}\n${r.report}`);
      expect(r.problems, r.report).toEqual([]);
      // Never a foreign chain in a delta.
      for (const st of r.steps) for (const d of Object.values(st.deltas)) expect(d).not.toMatch(/DOCKER|^(:|-[AIDX] )(PREROUTING|POSTROUTING|INPUT|OUTPUT|FORWARD)\b/m);
    });
  }

  it('the e2e scenarios in sequence (each step replaces every Service: NodePort, LB ranges, ETP/ITP Local, externalIPs, terminating, hairpin, masquerade-all)', { timeout: 60_000 }, async () => {
    const { SCENARIOS } = await import('../../e2e/scenarios.js');
    const v4 = SCENARIOS.filter((s) => s.family === 'ipv4');
    const states = v4.map((s) => state(s.name, s.objects, [...NODE_ARGS, ...(s.kpcArgs ?? [])]));
    // And the union of all of them, then back to the first.
    states.push(state('all at once', v4.flatMap((s) => s.objects)), state(`${v4[0]!.name} again`, v4[0]!.objects));
    const r = await checkSequence(states, { foreign: DOCKER_LIKE });
    console.info(`delta kernel: e2e scenarios in sequence\n${r.report}`);
    expect(r.problems, r.report).toEqual([]);
  });

  it('large-cluster mode: 998 → 1001 endpoints (comments dropped), a change above 1000, back to 998', { timeout: 60_000 }, async () => {
    const base = join(FIXTURES_ROOT, 'kube-proxy/iptables');
    const argsOf = (dir: string) => caseArgs(join(dir, 'case.yaml'));
    const below = join(base, 'TestSyncProxyRulesLargeClusterMode-998-endpoints-comments');
    const above = join(base, 'TestSyncProxyRulesLargeClusterMode-1001-endpoints-svc1-endpoint-no-comments');
    const args = argsOf(above);
    expect(argsOf(below)).toEqual(args);
    // 1001 endpoints with one of svc3's moved (203.0.113.4 → 203.0.113.5) and one of svc1's removed and another added.
    const changedDir = tmpDir('large-changed');
    for (const f of readdirSync(join(above, 'input'))) {
      let text = readFileSync(join(above, 'input', f), 'utf8');
      text = text.replace('- addresses: [203.0.113.4]', '- addresses: [203.0.113.5]').replace('- addresses: [10.0.7.0]', '- addresses: [10.9.7.0]');
      writeFileSync(join(changedDir, f), text);
    }
    const states: StateSpec[] = [
      { label: '998 endpoints', input: join(below, 'input'), args },
      { label: '1001 endpoints', input: join(above, 'input'), args },
      { label: '1001 endpoints, two moved', input: changedDir, args },
      { label: '998 endpoints again', input: join(below, 'input'), args },
    ];
    const r = await checkSequence(states, { modes: ['kpc', 'node'] });
    console.info(`delta kernel: large-cluster mode\n${r.report}`);
    expect(r.problems, r.report).toEqual([]);
    // Above the threshold two moved endpoints cost their Services' KUBE-SVC chains (written whole,
    // 500 and 4 rules), two new KUBE-SEP chains and two stale ones: six chains, nothing else.
    const inside = r.steps[1]!.deltas.kpc!;
    const declared = inside.split('\n').filter((l) => l.startsWith(':'));
    expect(declared.filter((l) => l.startsWith(':KUBE-SVC-')), inside).toHaveLength(2);
    expect(declared.filter((l) => l.startsWith(':KUBE-SEP-')), inside).toHaveLength(4);
    expect(declared).toHaveLength(6);
    expect(inside.split('\n').filter((l) => l.startsWith('-X '))).toHaveLength(2);
  });

  it('TestSyncProxyRulesRepeated steps 1 → 9 in sequence; kube-proxy\'s own partial texts end in the same states', { timeout: 60_000 }, async () => {
    const dir = join(FIXTURES_ROOT, 'kube-proxy/iptables');
    const steps = readdirSync(dir)
      .filter((d) => d.startsWith('TestSyncProxyRulesRepeated-'))
      .sort();
    expect(steps).toHaveLength(9);
    const states: StateSpec[] = steps.map((s) => {
      const args = caseArgs(join(dir, s, 'case.yaml'));
      return { label: s.replace('TestSyncProxyRulesRepeated-', ''), input: join(dir, s, 'input'), args };
    });
    const partials = steps.slice(1).map((s) => readFileSync(join(dir, s, 'expected-partial.out'), 'utf8'));
    const r = await checkSequence(states, { kubeProxyPartials: partials });
    const sizes = r.steps.map((st, i) => `${st.step}: kpc ${lineCount(st.deltas.kpc!)} lines, kube-proxy partial ${lineCount(partials[i]!)} lines`);
    console.info(`delta kernel: TestSyncProxyRulesRepeated\n${sizes.join('\n')}\n${r.report}`);
    expect(r.problems, r.report).toEqual([]);
    // Step 8 is "no change": nothing to do.
    expect(r.steps[6]!.deltas.kpc).toBe('');
    expect(r.steps[6]!.deltas.node).toBe('');
  });

  it('no change: the delta against kpc\'s own text and against the node\'s iptables-save (with foreign chains) is empty', { timeout: 30_000 }, async () => {
    const s = state('web+api', [...WEB(['a1', 'a2'], { clientIPAffinitySeconds: 60 }), ...API(['a3', 'b1'], { type: 'NodePort', ports: [{ ...http, nodePort: 30081 }] })]);
    const full = await compileFull(s);
    expect(await compileDelta(s, writeText(full, 'same', 'previous.txt'))).toBe('');
    const nodeSave = await withNetns('delta', async (ns) => {
      await load(ns, full, 'ipv4', false, 'the state');
      await load(ns, DOCKER_LIKE, 'ipv4', true, 'foreign rules');
      return save(ns, 'ipv4');
    });
    expect(await compileDelta(s, writeText(nodeSave, 'same-node', 'iptables-save.txt'))).toBe('');
  });

  // Turning localhost node ports off: the new output no longer writes filter/KUBE-FIREWALL, so
  // (as with kube-proxy, which restores with --noflush and never flushes that chain — it is
  // kubelet's too) the old "block incoming localnet connections" rule stays. Everything else must
  // equal a fresh load; and `kpc diff` does not call the chain removed (diff-save.test.ts).
  it('localhost node ports on → off: only kubelet\'s KUBE-FIREWALL keeps its rule, as with kube-proxy', { timeout: 30_000 }, async () => {
    const objs = WEB(['a1', 'b1'], { type: 'NodePort', ports: [{ ...http, nodePort: 30080 }] });
    const r = await checkSequence([state('localhost node ports on', objs), state('off', objs, [...NODE_ARGS, '--iptables-localhost-nodeports', 'false'])], { modes: ['kpc', 'node'] });
    expect(r.problems.length, r.report).toBeGreaterThan(0);
    for (const p of r.problems) expect(p, r.report).toMatch(/KUBE-FIREWALL/);
  });

  // `--standalone` with `--previous`: the jumps from the built-in chains are ensured (inserted at
  // the top when missing, as kube-proxy's iptables -I does), so a fresh node gets them.
  it('--standalone --previous <empty node> adds the built-in jumps', { timeout: 30_000 }, async () => {
    const s = state('web', WEB(['a1', 'a2']));
    const problems = await withNetns('delta', async (ns) => {
      const empty = writeText(await save(ns, 'ipv4'), 'empty-node', 'iptables-save.txt');
      const delta = await kpc(['compile', ...s.args, '--standalone', '-f', s.input, '-R', '--previous', empty]);
      await load(ns, delta, 'ipv4', true, 'the delta');
      const got = await save(ns, 'ipv4');
      await load(ns, await compileFull(s), 'ipv4', false, 'fresh');
      return compareSaves(got, await save(ns, 'ipv4'), 'ipv4').canonical;
    });
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('the check can fail: a delta with one line removed leaves a different state, and the comparison says where', { timeout: 30_000 }, async () => {
    const a = state('web', WEB(['a1', 'a2']));
    const b = state('web a1,b2', WEB(['a1', 'b2']));
    const prev = await compileFull(a);
    const delta = await compileDelta(b, writeText(prev, 'broken', 'previous.txt'));
    const broken = delta
      .split('\n')
      .filter((l) => !/ -j DNAT /.test(l))
      .join('\n');
    expect(broken).not.toBe(delta);
    const { got, want } = await withNetns('delta', async (ns) => {
      await load(ns, prev, 'ipv4', false, 'previous');
      await load(ns, broken, 'ipv4', true, 'the broken delta');
      const got = await save(ns, 'ipv4');
      await load(ns, await compileFull(b), 'ipv4', false, 'fresh');
      return { got, want: await save(ns, 'ipv4') };
    });
    const c = compareSaves(got, want, 'ipv4');
    expect(c.canonical.join('\n')).toMatch(/nat\/KUBE-SEP-\S+: rules differ/);
    expect(c.raw.length).toBeGreaterThan(0);
  });
});


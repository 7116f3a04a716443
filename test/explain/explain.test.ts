/**
 * `kpc explain`: golden human views (fixtures/packet-flow/explain/*.txt, UPDATE_GOLDEN=1
 * rewrites them), the JSON view, errors, and a cross-check with the tracer: for every Service
 * of every packet-flow fixture, what explain says each entry point reaches is what a traced
 * connection reaches.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { Explanation, Reach } from '../../src/explain/index.js';
import { traceRules } from '../../src/trace/index.js';
import { FIXTURES_ROOT } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';
import { caseArgv, loadFlowFixtures, PACKET_FLOW_ROOT } from '../trace/flows.js';
import { runTraceCli } from '../trace/run-cli.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';
const GOLDEN_DIR = join(PACKET_FLOW_ROOT, 'explain');
const FAKE = ['--hostname-override', 'test-node', '--node-ip', '192.168.0.2', '--cluster-cidr', '10.0.0.0/8', '--kube-proxy-version', '1.34', '--nfacct', '--no-masquerade-random-fully', '--service-node-port-range', '1-32767'];
const PF = (p: string) => join(PACKET_FLOW_ROOT, p);

const GOLDENS: Array<{ name: string; args: string[] }> = [
  { name: 'etp-local', args: ['ns1/svc1', ...FAKE, '-f', PF('TestExternalTrafficPolicyLocal/input'), '-R'] },
  {
    name: 'terminating-local',
    args: ['ns1/svc1', ...FAKE, '-f', PF('TestTerminatingEndpointsTrafficPolicyLocal/input/service.yaml'), '-f', PF('TestTerminatingEndpointsTrafficPolicyLocal/input/endpoints-1.yaml')],
  },
  {
    name: 'terminating-fallback-local',
    args: ['ns1/svc1', ...FAKE, '-f', PF('TestTerminatingEndpointsTrafficPolicyLocal/input/service.yaml'), '-f', PF('TestTerminatingEndpointsTrafficPolicyLocal/input/endpoints-2.yaml')],
  },
  {
    name: 'itp-local-no-local-endpoints',
    args: ['ns1/svc1', ...FAKE, '-f', PF('TestInternalTrafficPolicy/input/service-local.yaml'), '-f', PF('TestInternalTrafficPolicy/input/endpoints-4.yaml')],
  },
  { name: 'no-endpoints', args: ['ns1/svc1', ...FAKE, '-f', PF('TestNoEndpointsReject/input'), '-R'] },
  { name: 'source-ranges-affinity', args: ['ns5/svc5', ...FAKE, '-f', join(FIXTURES_ROOT, 'kube-proxy/iptables/TestOverallIPTablesRules/input'), '-R'] },
  { name: 'lb-source-ranges-node', args: ['ns1/svc1', ...FAKE, '-f', PF('TestLoadBalancer/input'), '-R'] },
  {
    name: 'topology-zone-hints',
    args: ['demo/web', '--hostname-override', 'node-a', '--node-ip', '10.1.0.10', '--cluster-cidr', '10.244.0.0/16', '-f', join(FIXTURES_ROOT, 'features/topology-zone-hints/input'), '-R'],
  },
  {
    name: 'topology-node-hints',
    args: ['demo/web', ...readArgs(join(FIXTURES_ROOT, 'features/topology-node-hints/case.yaml')), '-f', join(FIXTURES_ROOT, 'features/topology-node-hints/input'), '-R'],
  },
  { name: 'multiport-protocols', args: ['ns2/svc2', ...FAKE, '-f', PF('TestClusterIPGeneral/input'), '-R'] },
];

/** A feature case's compile flags (without the leading "compile"). */
function readArgs(caseYaml: string): string[] {
  const m = /^args: \[(.*)\]$/m.exec(readFileSync(caseYaml, 'utf8'));
  return m ? m[1]!.split(',').map((s) => s.trim().replace(/^"|"$/g, '')).slice(1) : [];
}

describe('kpc explain: golden views', () => {
  for (const g of GOLDENS) {
    it(g.name, async () => {
      const run = await runTraceCli(['explain', ...g.args]);
      expect(run.code, run.stderr).toBe(0);
      const file = join(GOLDEN_DIR, `${g.name}.txt`);
      if (UPDATE) {
        mkdirSync(GOLDEN_DIR, { recursive: true });
        writeFileSync(file, run.stdout);
      }
      expect(existsSync(file), `missing ${file} (UPDATE_GOLDEN=1)`).toBe(true);
      expect(run.stdout).toBe(readFileSync(file, 'utf8'));
    });
  }
});

describe('kpc explain: CLI', () => {
  it('gives JSON with -o json, without colour even on a TTY', async () => {
    const run = await runTraceCli(['explain', 'ns1/svc1', ...FAKE, '-f', PF('TestExternalTrafficPolicyLocal/input'), '-R', '-o', 'json'], { tty: true });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/\u001b\[/);
    const x = JSON.parse(run.stdout) as Explanation;
    expect(x.ports).toHaveLength(1);
    expect(x.ports[0]!.entries.map((e) => e.kind)).toEqual(['cluster-ip', 'external-ip', 'load-balancer-ip', 'node-port', 'health-check-node-port']);
  });

  it('colours the text view on a TTY only', async () => {
    const args = ['explain', 'ns1/svc1', ...FAKE, '-f', PF('TestExternalTrafficPolicyLocal/input'), '-R'];
    expect((await runTraceCli(args, { tty: true })).stdout).toMatch(/\u001b\[/);
    expect((await runTraceCli(args)).stdout).not.toMatch(/\u001b\[/);
  });

  it('takes NAME in --namespace', async () => {
    const run = await runTraceCli(['explain', 'svc1', '-n', 'ns1', ...FAKE, '-f', PF('TestNoEndpointsReject/input'), '-R']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Service ns1\/svc1/);
  });

  it('exits 2 for a Service kube-proxy does not program, or a bad reference', async () => {
    const missing = await runTraceCli(['explain', 'ns1/nope', ...FAKE, '-f', PF('TestNoEndpointsReject/input'), '-R']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no Service ns1\/nope in kube-proxy's view/);
    expect(missing.stdout).toBe('');
    const bad = await runTraceCli(['explain', 'a/b/c', ...FAKE, '-f', PF('TestNoEndpointsReject/input'), '-R']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not NAMESPACE\/NAME/);
  });
});

/** Every Service (namespace/name) in a fixture case's inputs. */
function servicesOf(argv: string[]): string[] {
  const out = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '-f') continue;
    const p = argv[i + 1]!;
    const files = p.endsWith('.yaml') ? [p] : ['services.yaml', 'service.yaml', 'ipv4/service.yaml', 'ipv6/service.yaml'].map((f) => join(p, f)).filter(existsSync);
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
        const o = doc.toJS() as { kind?: string; metadata?: { namespace?: string; name?: string } } | null;
        if (o?.kind === 'Service') out.add(`${o.metadata?.namespace ?? 'default'}/${o.metadata?.name}`);
      }
    }
  }
  return [...out].sort();
}

let compared = 0;

function expectSame(what: string, reach: Reach, traced: ReturnType<typeof traceRules>): void {
  compared++;
  if (reach.outcome === 'endpoints') {
    expect(traced.verdict, what).toBe('ACCEPT');
    expect(traced.endpoints.map((e) => e.address).sort(), what).toEqual(reach.endpoints.map((e) => e.address).sort());
  } else if (reach.outcome === 'REJECT' || reach.outcome === 'DROP') {
    expect(traced.verdict, what).toBe(reach.outcome);
  }
}

describe('kpc explain agrees with kpc trace', () => {
  for (const f of loadFlowFixtures().filter((x) => !x.rules)) {
    for (const c of f.cases) {
      it(`${f.test} ${c.name}`, async () => {
        const argv = caseArgv(f, c);
        const compiled = await runKpc(argv);
        expect(compiled.code, compiled.stderr).toBe(0);
        const v6 = argv.includes('ipv6');
        const pod = v6 ? 'fd00:10::2' : '10.0.0.2';
        const outside = v6 ? '2600:5200::1' : '203.0.113.2';
        const nodeIP = v6 ? '2001:db8::1' : '192.168.0.2';
        const before = compared;
        const services = servicesOf(argv);
        for (const svc of services) {
          const run = await runTraceCli(['explain', svc, ...argv.slice(1), '-o', 'json']);
          if (run.code !== 0) {
            // Only a Service kube-proxy skips for this family may be missing.
            expect(run.stderr, svc).toMatch(/no Service/);
            continue;
          }
          const x = JSON.parse(run.stdout) as Explanation;
          for (const p of x.ports) {
            // Every rule that names the port is under some entry point.
            expect(p.otherRules, `${svc} ${p.spn}`).toEqual([]);
            const proto = p.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
            for (const e of p.entries) {
              const m = /(?:IP |port )(\[[^\]]+\]|[^:\s]+)?:?(\d+)\//.exec(e.title);
              if (e.kind === 'health-check-node-port' || !m) continue;
              const [dest, port] = e.kind === 'node-port' ? [nodeIP, Number(/port (\d+)\//.exec(e.title)![1])] : [m[1]!.replace(/^\[|\]$/g, ''), Number(m[2])];
              const trace = (source: string) => traceRules(compiled.stdout, { source, destination: dest, port, protocol: proto }, { ips: f.nodeIPs });
              const what = `${svc} ${e.title}`;
              if (e.kind === 'cluster-ip') {
                expectSame(`${what} from a pod`, e.reaches[0]!, trace(pod));
              } else {
                const outsideReach = e.reaches[0]!;
                const blocked = e.notes.some((n) => n.startsWith('loadBalancerSourceRanges')) && !/203\.0\.113\.0\/25/.test(e.notes.join(' '));
                if (!blocked) expectSame(`${what} from outside`, outsideReach, trace(outside));
              }
            }
          }
        }
        if (services.length > 0) expect(compared).toBeGreaterThan(before);
      });
    }
  }
});

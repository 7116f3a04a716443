/**
 * kube-proxy's nftables packet-flow tests (runPacketFlowTests in pkg/proxy/nftables, and the
 * tracer self-tests TestTracePacketV4/V6; fixtures/packet-flow-nftables, all four releases) as
 * `kpc trace` cases, over (a) kube-proxy's own ruleset the upstream tracer walked
 * (kube-proxy.dump, or rules.dump for the self-tests) and (b) kpc's compiled output for the
 * case's objects and flags. Each flow's endpoints, verdict and masquerade must be the test's.
 *
 * The upstream tracer (helpers_test.go tracePacket) sends every packet through the prerouting
 * path (no output-path chains), with the test's nodeIPs local for `fib … type local`; the flows
 * here are traced the same way (origin: network). Through the CLI: one flow per test file
 * with `kpc trace --rules` and with compiling, `-o json`.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FIXTURES_ROOT } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';
import { readNftState } from '../../src/lang/nftables/index.js';
import { traceNftState } from '../../src/trace/nftables.js';

interface Flow { name: string; source: string; destination: string; protocol?: string; output: string; masq: boolean; endpoints: string[]; verdict: string }
interface Case { name: string; line: number; input?: string; args?: string[]; dump: string; rules?: string; flows: Flow[] }
interface Flows { test: string; nodeIPs: string[]; cases: Case[] }

const ROOT = join(FIXTURES_ROOT, 'packet-flow-nftables');

function dest(d: string): { ip: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(d)!;
  return { ip: m[1] ?? m[2]!, port: Number(m[3]) };
}

function check(rulesText: string, f: Flow, nodeIPs: string[], label: string): void {
  const { ip, port } = dest(f.destination);
  const family = ip.includes(':') ? 'ip6' : 'ip';
  const state = readNftState(rulesText, family, 'kube-proxy').state;
  const r = traceNftState(state, { source: f.source, destination: ip, port, protocol: (f.protocol?.toLowerCase() || 'tcp') as 'tcp', origin: 'network' }, { ips: nodeIPs });
  const got = { endpoints: r.endpoints.map((e) => e.address).sort(), verdict: r.endpoints.length > 0 ? 'ACCEPT' : r.verdict, masq: r.masquerade };
  expect(got, `${label}: ${f.name} (${f.source} → ${f.destination}${f.protocol ? `/${f.protocol}` : ''}): upstream output "${f.output}", masq ${f.masq}`).toEqual({ endpoints: [...f.endpoints].sort(), verdict: f.verdict, masq: f.masq });
}

let total = 0;
for (const release of readdirSync(ROOT).filter((d) => d.startsWith('v1.')).sort()) {
  describe(`nftables packet flows ${release}`, () => {
    for (const test of readdirSync(join(ROOT, release)).sort()) {
      const spec = parseYaml(readFileSync(join(ROOT, release, test, 'flows.yaml'), 'utf8')) as Flows;
      it(`${test}: kube-proxy's ruleset`, () => {
        for (const c of spec.cases) {
          const text = readFileSync(join(ROOT, release, test, c.rules ?? c.dump), 'utf8');
          for (const f of c.flows) check(text, f, spec.nodeIPs, `${test} case ${c.line}`);
          total += c.flows.length;
        }
      });
      if (spec.cases.some((c) => c.input)) {
        it(`${test}: kpc's output`, { timeout: 120_000 }, async () => {
          for (const c of spec.cases) {
            const run = await runKpc([...c.args!, '-f', join(ROOT, release, test, c.input!), '-R']);
            expect(run.code, run.stderr).toBe(0);
            for (const f of c.flows) check(run.stdout, f, spec.nodeIPs, `${test} case ${c.line} (kpc)`);
          }
        });
      }
    }
  });
}

describe('kpc trace --proxy-mode nftables (CLI)', () => {
  const dir = join(ROOT, 'v1.37', 'TestNodePorts');
  const spec = parseYaml(readFileSync(join(dir, 'flows.yaml'), 'utf8')) as Flows;
  const c = spec.cases[0]!;
  it('compiling, and with --rules kube-proxy.dump: the same endpoints, -o json', async () => {
    const f = c.flows.find((x) => x.name === 'external to nodePort')!;
    const compiled = await runKpc(['trace', ...c.args!.slice(1), '-f', join(dir, c.input!), '-R', '--to', f.destination, '--from', f.source, '-o', 'json']);
    expect(compiled.code, compiled.stderr).toBe(0);
    const j = JSON.parse(compiled.stdout);
    expect(j.endpoints.map((e: { address: string }) => e.address).sort()).toEqual(f.endpoints);
    expect(j.endpoints.map((e: { probability: number }) => e.probability)).toEqual([0.5, 0.5]);
    expect(j.masquerade).toBe(true);
    expect(Object.keys(j).slice(0, 4)).toEqual(['verdict', 'endpoints', 'masquerade', 'path']);
    const fromDump = await runKpc(['trace', '--rules', join(dir, c.dump), ...spec.nodeIPs.flatMap((ip) => ['--node-ip', ip]), '--to', f.destination, '--from', f.source, '-o', 'json']);
    expect(fromDump.code, fromDump.stderr).toBe(0);
    expect(JSON.parse(fromDump.stdout).endpoints).toEqual(j.endpoints);
  });
});

describe('the packet-flow check can fail', () => {
  it('a changed endpoint, a removed reject and a removed masquerade mark are seen', () => {
    const dir = join(ROOT, 'v1.37', 'TestNodePorts');
    const spec = parseYaml(readFileSync(join(dir, 'flows.yaml'), 'utf8')) as Flows;
    const c = spec.cases[0]!;
    const text = readFileSync(join(dir, c.dump), 'utf8');
    const f = c.flows.find((x) => x.name === 'external to nodePort')!;
    expect(() => check(text, f, spec.nodeIPs, 'control')).not.toThrow();
    const changed = text.replace('10.180.2.1 . 80', '10.180.2.9 . 80');
    expect(changed).not.toBe(text);
    expect(() => check(changed, f, spec.nodeIPs, 'control')).toThrow();
    const noMasq = text.replace(/^add rule ip kube-proxy external-\S+ .*comment "masquerade"$/m, '');
    expect(noMasq).not.toBe(text);
    expect(() => check(noMasq, f, spec.nodeIPs, 'control')).toThrow();
  });

  it('traced every flow (218 per release)', () => expect(total).toBe(218 * 4));
});

describe('affinity', () => {
  it('a ClientIP Service: every endpoint for a new client, and the affinity checks that send a returning one back', async () => {
    const c = loadCase();
    const run = await runKpc(['trace', ...c.args, '--to', '172.30.0.45:80', '--from', '10.0.0.2', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const j = JSON.parse(run.stdout);
    expect(j.endpoints.map((e: { address: string }) => e.address)).toEqual(['10.180.0.3:80']);
    expect(j.affinity).toEqual([{ name: 'affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80', seconds: 10800, rule: 'service-HVFWP5L3-ns5/svc5/tcp/p80 #1', endpoint: '10.180.0.3:80' }]);
  });
});

/** v1.37 TestOverallNFTablesRules: ns5/svc5 has ClientIP affinity (kube-proxy's own fixture). */
function loadCase(): { args: string[] } {
  const dir = join(FIXTURES_ROOT, 'kube-proxy', 'nftables', 'v1.37', 'TestOverallNFTablesRules');
  const args = (parseYaml(readFileSync(join(dir, 'case.yaml'), 'utf8')) as { args: string[] }).args.slice(1);
  return { args: [...args, '-f', join(dir, 'input'), '-R'] };
}

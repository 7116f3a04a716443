/**
 * `kpc compile --proxy-mode nftables --previous LISTING` with the node's table listed with each
 * of nft's output options (nft list, -a, -y, -T, -s, -N, -S, -n, -nn, -j, -j -n, -j -S): no
 * delta from any of them may leave the node in another state than the new full output. Per
 * step and option, a fresh namespace is loaded with the previous step's full output (beside a
 * foreign table), listed with that option, and kpc computes the delta from that listing; then
 * either kpc refuses the listing (exit 2, previous.unreadable, with the plain command to use),
 * or `nft -f` of its delta must succeed and leave exactly (canonicalListing) what a fresh
 * namespace loaded with the new full output holds, the dispatch maps included. The expected
 * listing comes from nft, not from kpc.
 *
 * Before the fix, -n and -j -n listings (`5.6.7.8 . 6 . 80`) gave deltas that added
 * `tcp . 80` and deleted `6 . 80`, the same element: service-ips, service-nodeports and
 * firewall-ips ended up empty with nft -f's exit 0.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { repeatedSteps } from './repeated-steps.js';
import { describeLab, nsExec, withNetns } from '../../netns/lab.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { canonicalListing, nftListTable, nftLoad } from '../../helpers/nft-kernel.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-nftforms-'));
let n = 0;
function file(text: string, name: string): string {
  const p = join(tmp, `${n++}-${name}`);
  writeFileSync(p, text);
  return p;
}
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const FOREIGN = `table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 accept
	}
}
`;

const FORMS = [[], ['-a'], ['-y'], ['-T'], ['-s'], ['-N'], ['-S'], ['-n'], ['-nn'], ['-j'], ['-j', '-n'], ['-j', '-S']];

// The reviewer's case (/tmp/rv/lb.yaml, lb2.yaml): a LoadBalancer with source ranges, an
// externalIP and a NodePort; then a second endpoint; then a UDP DNS Service beside it; then only that.
const LB = (endpoints: string) => `apiVersion: v1
kind: Service
metadata: {name: lb, namespace: ns}
spec:
  type: LoadBalancer
  clusterIP: 10.96.0.20
  ports: [{name: p, port: 80, protocol: TCP, nodePort: 30080}]
  loadBalancerSourceRanges: ["10.0.0.0/8", "192.168.0.0/16"]
  externalIPs: ["1.2.3.4"]
status:
  loadBalancer: {ingress: [{ip: 5.6.7.8}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: lb-1, namespace: ns, labels: {kubernetes.io/service-name: lb}}
addressType: IPv4
endpoints: [${endpoints}]
ports: [{name: p, port: 8080, protocol: TCP}]
`;
const DNS = `apiVersion: v1
kind: Service
metadata: {name: dns, namespace: ns}
spec:
  clusterIP: 10.96.0.53
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: dns-1, namespace: ns, labels: {kubernetes.io/service-name: dns}}
addressType: IPv4
endpoints: [{addresses: [10.244.1.9], nodeName: node-a}]
ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
`;
const NODE = `---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 192.168.50.10}]}
`;
const ARGS = ['--proxy-mode', 'nftables', '--hostname-override', 'node-a', '--cluster-cidr', '10.244.0.0/16', '-q'];
const one = '{addresses: [10.244.1.5], nodeName: node-a}';
const two = `${one}, {addresses: [10.244.2.7], nodeName: node-b}`;

interface Step {
  label: string;
  args: string[];
}
const lbSteps = (): Step[] =>
  [
    ['lb', LB(one) + NODE],
    ['lb, 2 endpoints', LB(two) + NODE],
    ['lb + dns', LB(two) + '---\n' + DNS + NODE],
    ['dns', DNS + NODE],
  ].map(([label, text]) => ({ label: label!, args: [...ARGS, '-f', file(text!, 'in.yaml')] }));

async function full(step: Step): Promise<string> {
  const r = await runKpc(['compile', ...step.args]);
  if (r.code !== 0) throw new Error(`${step.label}: ${r.stderr}`);
  return r.stdout;
}

const MAPS = ['service-ips', 'service-nodeports', 'firewall-ips', 'no-endpoint-services', 'no-endpoint-nodeports'];

/** The element lines of the dispatch maps in a listing (what the bug emptied). */
function dispatchElements(listing: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of MAPS) {
    const block = new RegExp(`map ${m} \\{([^}]*(?:\\{[^}]*\\}[^}]*)*)\\}`).exec(listing)?.[1] ?? '';
    out[m] = (block.match(/ : (?:goto|jump|drop|accept)\b/g) ?? []).length;
  }
  return out;
}

async function checkSteps(steps: Step[]): Promise<{ read: number; refused: number }> {
  const seen = { read: 0, refused: 0 };
  for (let i = 1; i < steps.length; i++) {
    const prevFull = await full(steps[i - 1]!);
    const newFull = await full(steps[i]!);
    const want = await withNetns('nftfw', async (ns) => {
      expect((await nftLoad(ns, newFull)).code).toBe(0);
      return (await nftListTable(ns, 'ip')).stdout;
    });
    for (const flags of FORMS) {
      const what = `${steps[i]!.label}, previous = nft ${flags.join(' ')} list table`;
      await withNetns('nftf', async (ns) => {
        expect((await nftLoad(ns, FOREIGN)).code).toBe(0);
        expect((await nftLoad(ns, prevFull)).code).toBe(0);
        const listed = await nsExec(ns, ['nft', ...flags, 'list', 'table', 'ip', 'kube-proxy']);
        expect(listed.code, listed.stderr).toBe(0);
        const delta = await runKpc(['compile', ...steps[i]!.args, '--previous', file(listed.stdout, 'prev')]);
        if (delta.code !== 0) {
          expect(delta.code, `${what}: ${delta.stderr}`).toBe(2);
          expect(delta.stderr, what).toContain('list it without them: nft list table ip kube-proxy');
          seen.refused++;
          return;
        }
        const applied = await nftLoad(ns, delta.stdout);
        expect(applied.code, `${what}: nft -f of the delta: ${applied.stderr}\n${delta.stdout}`).toBe(0);
        const got = (await nftListTable(ns, 'ip')).stdout;
        expect(dispatchElements(got), `${what}: dispatch maps\n${delta.stdout}`).toEqual(dispatchElements(want));
        expect(canonicalListing(got), `${what}: the state after the delta\n${delta.stdout}`).toBe(canonicalListing(want));
        seen.read++;
      });
    }
  }
  return seen;
}

describeLab('nftables deltas from every nft listing option', { commands: ['nft'] }, () => {
  it('the dispatch-map counter sees elements', () => {
    expect(dispatchElements('map service-ips {\n\ttype x : verdict\n\telements = { 1.2.3.4 . tcp . 80 : goto a,\n\t\t5.6.7.8 . tcp . 80 : goto b }\n}\n')['service-ips']).toBe(2);
  });

  it('LoadBalancer, endpoints, a UDP Service: never a wrong state', { timeout: 300_000 }, async () => {
    const seen = await checkSteps(lbSteps());
    // plain, -a, -y, -T, -s, -N and -j read; -n, -nn, -j -n and (ports 80, 53, 8080 have
    // service names) -S and -j -S are refused
    expect(seen).toEqual({ read: 3 * 7, refused: 3 * 5 });
  });

  it('kube-proxy TestSyncProxyRulesRepeated v1.37: never a wrong state', { timeout: 600_000 }, async () => {
    const seen = await checkSteps(repeatedSteps('v1.37'));
    expect(seen.read).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });
});

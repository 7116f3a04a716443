/**
 * trace (nftables): the endpoint an affinity rule names (`ip6 saddr @affinity-X goto
 * endpoint-X`) is the `dnat to` target of that endpoint chain, not an address rebuilt from the
 * chain's name. hashAndTruncate cuts a name over 240 characters to `…...` (no address left in
 * it), and a previous state's names are only names. The rulesets are kpc's output for a ClientIP
 * Service with long names and a long IPv6 endpoint, with the endpoint chain renamed as below
 * (the expected endpoint is the dnat target written in the text, by hand).
 */

import { describe, expect, it } from 'vitest';
import { runKpc } from '../helpers/run-kpc.js';
import { readTransaction } from '../../src/lang/nftables/index.js';
import { traceNftState } from '../../src/trace/nftables.js';

const NS = 'n'.repeat(63);
const NAME = 's'.repeat(63);
const EP = 'fd00:10:180:abcd:1234:5678:9abc:def0';
const MANIFESTS = `apiVersion: v1
kind: Service
metadata: {name: ${NAME}, namespace: ${NS}}
spec:
  clusterIP: fd00:96::10
  clusterIPs: [fd00:96::10]
  ipFamilies: [IPv6]
  sessionAffinity: ClientIP
  ports: [{name: abcdefghijklmno, port: 80, protocol: SCTP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: e1, namespace: ${NS}, labels: {kubernetes.io/service-name: ${NAME}}}
addressType: IPv6
endpoints: [{addresses: ["${EP}"], nodeName: node-a}]
ports: [{name: abcdefghijklmno, port: 65535, protocol: SCTP}]
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: "fd00:50::10"}]}
`;

async function compiled(): Promise<{ text: string; chain: string }> {
  const r = await runKpc(['compile', '--proxy-mode', 'nftables', '--hostname-override', 'node-a', '--ip-family', 'ipv6', '-q', '-f', '-'], MANIFESTS);
  expect(r.code, r.stderr).toBe(0);
  const chain = /^add chain ip6 kube-proxy (endpoint-\S+)$/m.exec(r.stdout)![1]!;
  expect(r.stdout).toContain(`add rule ip6 kube-proxy ${chain} meta l4proto sctp dnat to [${EP}]:65535`);
  return { text: r.stdout, chain };
}

function affinityOf(text: string) {
  const state = readTransaction(text, 'ip6', 'kube-proxy');
  return traceNftState(state, { source: 'fd00:244::5', destination: 'fd00:96::10', port: 80, protocol: 'sctp', origin: 'network' }, { ips: ['fd00:50::10'] }).affinity;
}

describe('trace nftables: affinity endpoint from the endpoint chain', () => {
  it('kpc output as compiled', async () => {
    const { text } = await compiled();
    expect(affinityOf(text).map((a) => a.endpoint)).toEqual([`[${EP}]:65535`]);
  });

  it('an endpoint chain name cut by hashAndTruncate (`...`)', async () => {
    const { text, chain } = await compiled();
    const cut = `${chain.slice(0, 200)}...`;
    const renamed = text.replaceAll(chain, cut);
    expect(renamed).toContain(`goto ${cut}`);
    expect(affinityOf(renamed).map((a) => a.endpoint)).toEqual([`[${EP}]:65535`]);
  });

  it('a chain name that encodes another address: the dnat target wins', async () => {
    const { text, chain } = await compiled();
    const other = chain.replace(/__.*$/, '__10.0.0.9/80');
    expect(affinityOf(text.replaceAll(chain, other)).map((a) => a.endpoint)).toEqual([`[${EP}]:65535`]);
  });
});

/**
 * A no-endpoint Service port whose `namespace/name:port` is over 128 bytes (63 + 1 + 63 + 1 + 15
 * = 143): kube-proxy v1.34-v1.36 write it whole as the comment of the port's no-endpoint-services
 * and no-endpoint-nodeports elements (pkg/proxy/nftables/proxier.go, `Comment:
 * &svcPortNameString`, the only per-Service comments), and nft refuses the transaction
 * ("comment too long, 128 characters maximum allowed", checked on this kernel: 128 bytes load,
 * 129 do not), so that kube-proxy cannot sync the node; v1.37 cuts it to 128 bytes
 * (truncateNFTablesComment, kubernetes PR #139516). kpc: an input error (exit 2, nothing
 * written) naming the Service for v1.34-v1.36, kube-proxy's truncated comment for v1.37. It
 * used to be exit 3, "This is a bug in kpc" (the printer's guard).
 *
 * Expected v1.37 comment, by hand: the first 128 bytes of
 * "n×63/s×63:abcdefghijklmno" are "n×63/s×63:" (63 + 1 + 63 + 1).
 */

import { describe, expect, it } from 'vitest';
import { runKpc } from '../../helpers/run-kpc.js';

const NS = 'n'.repeat(63);
const NAME = 's'.repeat(63);
const manifests = (endpoints: boolean, extra = '') => `apiVersion: v1
kind: Service
metadata: {name: ${NAME}, namespace: ${NS}}
spec:
  clusterIP: 10.96.0.10
  ports: [{name: abcdefghijklmno, port: 80, protocol: TCP${extra}}]
${
  endpoints
    ? `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: e1, namespace: ${NS}, labels: {kubernetes.io/service-name: ${NAME}}}
addressType: IPv4
endpoints: [{addresses: [10.244.1.5], nodeName: node-a}]
ports: [{name: abcdefghijklmno, port: 8080, protocol: TCP}]
`
    : ''
}---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: 192.168.50.10}]}
`;

const args = (release: string) => ['compile', '--proxy-mode', 'nftables', '--kube-proxy-version', release, '--hostname-override', 'node-a', '-q', '-f', '-'];

describe('nftables: a no-endpoint Service port comment over 128 bytes', () => {
  for (const release of ['1.34', '1.35', '1.36']) {
    it(`v${release}: an input error naming the Service; nothing written`, async () => {
      const r = await runKpc(args(release), manifests(false));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toContain('bug in kpc');
      expect(r.stderr).toContain(`error: Service ${NS}/${NAME} port abcdefghijklmno: kube-proxy v${release} cannot sync this node in nftables mode`);
      expect(r.stderr).toContain(`no-endpoint-services element with the comment "${NS}/${NAME}:abcdefghijklmno" (143 bytes)`);
      expect(r.stderr).toContain('kube-proxy v1.37 cuts the comment to 128 bytes (kubernetes PR #139516)');
    });
  }

  it('v1.36: a NodePort with endpoints elsewhere only (eTP Local) names the no-endpoint-nodeports element', async () => {
    const m = manifests(true, ', nodePort: 30080').replace('clusterIP: 10.96.0.10', 'type: NodePort\n  externalTrafficPolicy: Local\n  clusterIP: 10.96.0.10').replace('nodeName: node-a}', 'nodeName: node-b}');
    const r = await runKpc(args('1.36'), m);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('no-endpoint-nodeports element with the comment');
  });

  it('v1.36: with endpoints, no comment is written and the port compiles', async () => {
    const r = await runKpc(args('1.36'), manifests(true));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('comment "nnn');
    expect(r.stdout).toContain(`add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto service-`);
  });

  it('v1.37: the comment is cut to 128 bytes', async () => {
    const r = await runKpc(args('1.37'), manifests(false));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`add element ip kube-proxy no-endpoint-services { 10.96.0.10 . tcp . 80 comment "${NS}/${NAME}:" : goto reject-chain }`);
  });

  it('v1.36: 128 bytes exactly are written whole, 129 refused', async () => {
    // n×63 + "/" + s×62 + ":" + "a" = 128 bytes; with "ab" 129
    const short = 's'.repeat(62);
    const m = (port: string) => manifests(false).replaceAll(NAME, short).replace('name: abcdefghijklmno', `name: ${port}`);
    const ok = await runKpc(args('1.36'), m('a'));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`comment "${NS}/${short}:a" : goto reject-chain`);
    const refused = await runKpc(args('1.36'), m('ab'));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`"${NS}/${short}:ab" (129 bytes)`);
  });
});

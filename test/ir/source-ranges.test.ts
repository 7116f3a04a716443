/**
 * A source range padded with a space Go trims must keep its firewall: the API server trims with
 * strings.TrimSpace before validating, kube-proxy trims the same way before parsing, so the
 * range applies. JavaScript's trim keeps U+0085, and once made kpc drop the range silently.
 */
import { describe, expect, it } from 'vitest';
import { chainRules, runKpc } from '../helpers/run-kpc.js';

const lb = (range: string) => JSON.stringify({
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { type: 'LoadBalancer', clusterIP: '10.96.0.10', ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }], loadBalancerSourceRanges: [range] },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }],
      ports: [{ port: 8080, protocol: 'TCP' }],
    },
  ],
});

const ARGS = ['compile', '-f', '-', '--hostname-override', 'node-a', '--node-ip', '10.1.0.10', '--cluster-cidr', '10.244.0.0/16'];

describe('LoadBalancer source ranges padded with Go spaces', () => {
  for (const [name, pad] of [['U+0085 (NEL)', '\u0085'], ['U+3000', '\u3000'], ['a tab', '\t'], ['U+00A0', '\u00a0']] as const) {
    it(`keeps the firewall when padded with ${name}`, async () => {
      const plain = await runKpc(ARGS, lb('203.0.113.0/24'));
      const padded = await runKpc(ARGS, lb(`${pad}203.0.113.0/24${pad}`));
      expect(plain.code, plain.stderr).toBe(0);
      expect(padded.code, padded.stderr).toBe(0);
      expect(padded.stdout).toBe(plain.stdout);
      expect(chainRules(padded.stdout, 'nat', 'KUBE-SERVICES').join('\n')).toMatch(/-j KUBE-FW-/);
      expect(padded.stdout).toMatch(/-A KUBE-FW-\w+ .*-s 203\.0\.113\.0\/24 -j KUBE-EXT-/);
    });
  }

  it('refuses a range padded with U+FEFF, which Go does not trim (the API server rejects it)', async () => {
    const r = await runKpc(ARGS, lb('\ufeff203.0.113.0/24'));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/spec\.LoadBalancerSourceRanges\[0\]: Invalid value/);
  });
});

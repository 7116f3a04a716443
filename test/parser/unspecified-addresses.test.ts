/**
 * The unspecified address (0.0.0.0, ::) where the kernel refuses it. As a cluster IP the API
 * server refuses it too (no ServiceCIDR can allocate a network address): exit 2. As a
 * LoadBalancer ingress IP the API server accepts it; the kernel then refuses the IPVS ipset
 * entries ("Kernel error received: Invalid argument") and kube-proxy logs that and goes on
 * without them, so kpc leaves them out with a warning, and its ipset.rules restores whole.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKpc } from '../helpers/run-kpc.js';
import { describeLab, nsExec, nsRun, withNetns } from '../netns/lab.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-unspecified-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cluster(opts: { clusterIP?: string; ingress?: string; family?: 'IPv4' | 'IPv6' }) {
  const v6 = opts.family === 'IPv6';
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { type: 'LoadBalancer', clusterIP: opts.clusterIP ?? (v6 ? 'fd00:96::10' : '10.96.0.10'), ipFamilies: [opts.family ?? 'IPv4'], ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }] },
        status: { loadBalancer: { ingress: [{ ip: opts.ingress ?? (v6 ? '2001:db8::10' : '192.0.2.10'), ipMode: 'VIP' }] } },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: opts.family ?? 'IPv4',
        endpoints: [{ addresses: [v6 ? 'fd00:244::5' : '10.244.1.5'], conditions: { ready: true } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ],
  });
}

const ARGS = ['compile', '-f', '-', '--hostname-override', 'node-a', '--node-ip', '10.1.0.10', '--cluster-cidr', '10.244.0.0/16'];

describe('the unspecified address', () => {
  for (const [family, ip] of [['IPv4', '0.0.0.0'], ['IPv6', '::']] as const) {
    it(`as a cluster IP (${ip}): refused as the API server's allocator refuses it`, async () => {
      const r = await runKpc(ARGS, cluster({ clusterIP: ip, family }));
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`spec.clusterIPs: Invalid value: ["${ip}"]: failed to allocate IP ${ip}: the provided network does not match the current range`);
    });
  }

  it('as a LoadBalancer ingress IP, iptables mode: kept (iptables takes -d 0.0.0.0), as kube-proxy writes it', async () => {
    const r = await runKpc(ARGS, cluster({ ingress: '0.0.0.0' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/-d 0\.0\.0\.0 --dport 80 -j KUBE-EXT-/);
  });

  it('as a LoadBalancer ingress IP, ipvs mode: the refused ipset entries are left out, with a warning', async () => {
    const out = join(tmp, 'bundle');
    const r = await runKpc([...ARGS, '--proxy-mode', 'ipvs', '-o', out], cluster({ ingress: '0.0.0.0' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: shop/web: ipset KUBE-LOAD-BALANCER entry "0.0.0.0,tcp:80" has the unspecified address, which the kernel refuses');
    const ipset = readFileSync(join(out, 'ipset.rules'), 'utf8');
    expect(ipset).not.toMatch(/0\.0\.0\.0/);
    expect(ipset).toContain('add KUBE-CLUSTER-IP 10.96.0.10,tcp:80');
    expect(readFileSync(join(out, 'kube-ipvs0.addrs'), 'utf8')).not.toMatch(/0\.0\.0\.0/);
  });
});

describeLab('the unspecified address on a real kernel', { commands: ['ipset'] }, () => {
  it('the IPVS bundle\'s ipset.rules restores whole (it would fail at the 0.0.0.0 entry)', async () => {
    const out = join(tmp, 'bundle-kernel');
    const r = await runKpc([...ARGS, '--proxy-mode', 'ipvs', '-o', out], cluster({ ingress: '0.0.0.0' }));
    expect(r.code, r.stderr).toBe(0);
    await withNetns('unspec', async (ns) => {
      const restored = await nsRun(ns, ['ipset', 'restore', '-file', join(out, 'ipset.rules')]);
      expect(restored.code, restored.stderr).toBe(0);
      // And the entry kpc left out is one the kernel indeed refuses.
      const refused = await nsExec(ns, ['ipset', 'add', 'KUBE-LOAD-BALANCER', '0.0.0.0,tcp:80']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('Invalid argument');
    });
  });
});

/**
 * nftables mode on the command line: configuration (mode: nftables and its nftables: section),
 * nftables-mode defaults, --standalone, check, and the refusals of issue-17 work (deltas, diff).
 * Expectations: kube-proxy's recorded transaction of v1.34/TestOverallNFTablesRules, with the
 * changes derived by hand from kube-proxy's code (cmd/kube-proxy/app/server_linux.go: nftables
 * reads config.NFTables.MasqueradeBit and defaults nodePortAddresses to `primary`;
 * pkg/proxy/nftables/proxier.go setupNFTables: the match-all node-port rules).
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';

const golden = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true }).find((c) => c.name === 'v1.34/TestOverallNFTablesRules')!;
const tx = golden.transaction!;
const work = mkdtempSync(join(tmpdir(), 'kpc-nftcli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The golden's argv without `flag VALUE` (and without --proxy-mode when asked). */
function without(...flags: string[]): string[] {
  const argv = caseArgv(golden);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (flags.includes(argv[i]!)) i++;
    else out.push(argv[i]!);
  }
  return out;
}

describe('nftables mode on the command line', () => {
  it('mode: nftables in a KubeProxyConfiguration, with its nftables section (masqueradeBit, masqueradeAll, sync periods)', async () => {
    const config = join(work, 'config.yaml');
    writeFileSync(
      config,
      'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nnftables:\n  masqueradeBit: 10\n  masqueradeAll: false\n  syncPeriod: 45s\n  minSyncPeriod: 2s\n',
    );
    const run = await runKpc([...without('--proxy-mode'), '--config', config]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(tx.replaceAll('0x00004000', '0x00000400'));
  });

  it('nftables.masqueradeAll: every ClusterIP is masqueraded (E2: `ip daddr IP jump mark-for-masquerade`)', async () => {
    const config = join(work, 'config-all.yaml');
    writeFileSync(config, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nnftables:\n  masqueradeAll: true\n');
    const run = await runKpc([...without('--proxy-mode'), '--config', config]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(tx.replace(/ ip daddr (172\.30\.0\.\d+) ip saddr != 10\.0\.0\.0\/8 jump mark-for-masquerade/g, ' ip daddr $1 jump mark-for-masquerade'));
  });

  it('--iptables-masquerade-bit does not change nftables mode\'s mark', async () => {
    const run = await runKpc([...caseArgv(golden), '--iptables-masquerade-bit', '3']);
    expect(run.stdout).toBe(tx);
  });

  it('nodePortAddresses defaults to the primary node IPs in nftables mode', async () => {
    const run = await runKpc(without('--nodeport-addresses'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(tx);
  });

  it('a zero CIDR matches every address: no nodeport-ips set, fib local and not-localhost rules', async () => {
    const run = await runKpc([...without('--nodeport-addresses'), '--nodeport-addresses', '0.0.0.0/0']);
    expect(run.code, run.stderr).toBe(0);
    const want = tx
      .replace('flush set ip kube-proxy nodeport-ips\nadd element ip kube-proxy nodeport-ips { 192.168.0.2 }\n', 'delete set ip kube-proxy nodeport-ips\n')
      .replace('nodeport-endpoints-check ip daddr @nodeport-ips meta', 'nodeport-endpoints-check ip daddr != 127.0.0.0/8 meta')
      .replace('services ip daddr @nodeport-ips meta l4proto', 'services fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto');
    expect(want).not.toBe(tx);
    expect(run.stdout).toBe(want);
  });

  it('--standalone starts with add table + delete table; -o writes the file', async () => {
    const out = join(work, 'out.nft');
    const run = await runKpc([...caseArgv(golden), '--standalone', '-o', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`add table ip kube-proxy\ndelete table ip kube-proxy\n${tx}`);
  });

  it('check against a golden: equal exits 0, a drift exits 1', async () => {
    const good = join(work, 'good.nft');
    writeFileSync(good, tx);
    const args = caseArgv(golden).slice(1);
    expect((await runKpc(['check', ...args, '--golden', good])).code).toBe(0);
    const bad = join(work, 'bad.nft');
    writeFileSync(bad, tx.replace('dnat to 10.180.0.1:80', 'dnat to 10.180.0.1:81'));
    expect((await runKpc(['check', ...args, '--golden', bad])).code).toBe(1);
  });

  it('deltas and diff against the same output: nothing to do (issue 17; test/diff/nftables has the rest)', async () => {
    const prev = join(work, 'prev.nft');
    writeFileSync(prev, tx);
    const args = caseArgv(golden).slice(1);
    const delta = await runKpc(['compile', ...args, '--previous', prev]);
    expect([delta.code, delta.stdout], delta.stderr).toEqual([0, '']);
    const diff = await runKpc(['diff', ...args, '--previous', prev]);
    expect([diff.code, diff.stdout], diff.stderr).toEqual([0, 'no differences\n']);
  });
});

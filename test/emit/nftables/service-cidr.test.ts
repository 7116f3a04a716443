/**
 * ServiceCIDRs as input (networking.k8s.io/v1 ServiceCIDR, or kpc's --service-cluster-ip-range):
 * kube-proxy's nftables proxier drops traffic to unallocated addresses of the cluster's Service
 * ranges (setupNFTables: `ip daddr { proxier.serviceCIDRs } drop`, where serviceCIDRs is
 * strings.Join of this family's CIDRs with ","; no rule when there are none). Expectations:
 *   - a ServiceCIDR object gives exactly kube-proxy's recorded transaction of
 *     v1.37/TestOverallNFTablesRules (whose fake sets serviceCIDRs 172.30.0.0/16), like the flag;
 *   - the rest derived by hand from proxier.go (v1.37.2 l.560-570, OnServiceCIDRsChanged l.915).
 */

import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';

const golden = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true }).find((c) => c.name === 'v1.37/TestOverallNFTablesRules')!;
const work = mkdtempSync(join(tmpdir(), 'kpc-servicecidr-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The golden's args without --service-cluster-ip-range, and its input plus `extra` manifests. */
function variant(name: string, extra: string, args: string[] = []): string[] {
  const dir = join(work, name);
  cpSync(join(golden.dir, 'input'), dir, { recursive: true });
  writeFileSync(join(dir, 'servicecidrs.yaml'), extra);
  const base = caseArgv(golden, dir);
  const at = base.indexOf('--service-cluster-ip-range');
  return [...base.slice(0, at), ...base.slice(at + 2), ...args];
}

const cidrDoc = (name: string, cidrs: string[]) => `apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata:\n  name: ${name}\nspec:\n  cidrs: [${cidrs.map((c) => JSON.stringify(c)).join(', ')}]\n---\n`;
/** kube-proxy writes the per-service-port blocks in Go map order: compare as sorted lines (the golden test checks the fixed part's order). */
const lines = (text: string) => text.split('\n').sort().join('\n');
const dropRule = (cidrs: string) => `add rule ip kube-proxy cluster-ips-check ip daddr { ${cidrs} } drop comment "Drop traffic to unallocated ClusterIPs"\n`;

describe('ServiceCIDRs in nftables mode', () => {
  it('a ServiceCIDR object gives kube-proxy\'s own transaction (as --service-cluster-ip-range does)', async () => {
    const run = await runKpc(variant('object', cidrDoc('kubernetes', ['172.30.0.0/16', 'fd00:10:96::/112'])));
    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout)).toBe(lines(golden.transaction!));
  });

  it('without any ServiceCIDR there is no drop rule (and nothing else changes)', async () => {
    const run = await runKpc(variant('none', ''));
    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout)).toBe(lines(golden.transaction!.replace(dropRule('172.30.0.0/16'), '')));
  });

  it('several ServiceCIDRs of the family: one rule, joined with ",", sorted; the flag adds to the objects', async () => {
    const run = await runKpc(variant('several', cidrDoc('a', ['172.30.0.0/16']) + cidrDoc('b', ['10.100.0.0/16', 'fd00::/112']), ['--service-cluster-ip-range', '192.168.200.0/24']));
    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout)).toBe(lines(golden.transaction!.replace(dropRule('172.30.0.0/16'), dropRule('10.100.0.0/16,172.30.0.0/16,192.168.200.0/24'))));
  });

  it('IPv6 takes the IPv6 ranges only', async () => {
    const run = await runKpc(variant('v6', cidrDoc('a', ['172.30.0.0/16', 'fd00:10:96::/112']), ['--ip-family', 'ipv6']));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('add rule ip6 kube-proxy cluster-ips-check ip6 daddr { fd00:10:96::/112 } drop comment "Drop traffic to unallocated ClusterIPs"\n');
    expect(run.stdout).not.toContain('172.30.0.0/16 }');
  });

  it('an invalid ServiceCIDR is an input error (ValidateServiceCIDR)', async () => {
    const run = await runKpc(variant('bad', cidrDoc('two-v4', ['172.30.0.0/16', '10.0.0.0/16'])));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('may specify no more than one IP for each IP family');
    const none = await runKpc(variant('empty', cidrDoc('empty', [])));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('spec.cidrs: Required value');
  });
});

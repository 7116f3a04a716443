/**
 * `kpc diff` and `kpc check` in nftables mode.
 *
 *  - A hand-reviewed report: kube-proxy's TestSyncProxyRulesRepeated step 1 → 2 (add svc3) and
 *    2 → 3 (delete svc2), expected per Service port from what kube-proxy's own partial sync sent
 *    for the step (partial.nft: the elements, chains and rule it added or deleted) — text and
 *    `-o json`, exit 1.
 *  - The same report whether the previous state is kpc's text, the kernel's `nft list table` or
 *    its `nft -j list table` (every step of the sequence).
 *  - Every nftables golden: diff against the kernel's listing of its own output → exit 0,
 *    "no differences" (the readers and the canonical form find no false difference).
 *  - check: identical → 0, drift → 1 with a unified diff, a directory golden → 2.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { describeLab, withNetns } from '../../netns/lab.js';
import { nftListTable, nftListTableJSON, nftLoad } from '../../helpers/nft-kernel.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-nftdiff-'));
let n = 0;
function file(text: string, name = 'f'): string {
  const p = join(tmp, `${n++}-${name}`);
  writeFileSync(p, text);
  return p;
}
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const DIR = join(FIXTURES_ROOT, 'kube-proxy', 'nftables', 'v1.37');
const STEPS = readdirSync(DIR).filter((d) => d.startsWith('TestSyncProxyRulesRepeated-')).sort();
function stepArgs(step: string): string[] {
  const args = (parseYaml(readFileSync(join(DIR, step, 'case.yaml'), 'utf8')) as { args: string[] }).args.slice(1);
  return [...args, '-f', join(DIR, step, 'input'), '-R'];
}
async function full(step: string): Promise<string> {
  const r = await runKpc(['compile', ...stepArgs(step)]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe('kpc diff, nftables: a hand-reviewed report', () => {
  it('step 1 → 2: svc3 added (kube-proxy sent: hairpin, cluster-ips and service-ips elements, the service chain and its DNAT rule)', async () => {
    const prev = file(await full(STEPS[0]!));
    const r = await runKpc(['diff', ...stepArgs(STEPS[1]!), '--previous', prev]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      [
        'ns3/svc3:p80',
        '  + endpoint 10.0.3.1:80',
        '  + element cluster-ips { 172.30.0.43 }',
        '  + element hairpin-connections { 10.0.3.1 . 10.0.3.1 . tcp . 80 }',
        '  + element service-ips { 172.30.0.43 . tcp . 80 : goto service-4AT6LBPK-ns3/svc3/tcp/p80 }',
        '  + chain service-4AT6LBPK-ns3/svc3/tcp/p80',
        '',
      ].join('\n'),
    );
    const j = await runKpc(['diff', ...stepArgs(STEPS[1]!), '--previous', prev, '-o', 'json']);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toEqual({
      changed: true,
      servicePorts: [
        {
          servicePort: 'ns3/svc3:p80',
          chainsAdded: ['service-4AT6LBPK-ns3/svc3/tcp/p80'],
          chainsRemoved: [],
          chainsChanged: [],
          rulesAdded: [],
          rulesRemoved: [],
          endpointsAdded: ['10.0.3.1:80'],
          endpointsRemoved: [],
          elementsAdded: [
            { set: 'cluster-ips', element: '172.30.0.43' },
            { set: 'hairpin-connections', element: '10.0.3.1 . 10.0.3.1 . tcp . 80' },
            { set: 'service-ips', element: '172.30.0.43 . tcp . 80 : goto service-4AT6LBPK-ns3/svc3/tcp/p80' },
          ],
          elementsRemoved: [],
        },
      ],
    });
  });

  it('step 2 → 3: svc2 deleted (kube-proxy: flush its chain, delete its cluster-ips, service-ips and hairpin elements)', async () => {
    const prev = file(await full(STEPS[1]!));
    const r = await runKpc(['diff', ...stepArgs(STEPS[2]!), '--previous', prev]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      [
        'ns2/svc2:p8080',
        '  - endpoint 10.0.2.1:8080',
        '  - element cluster-ips { 172.30.0.42 }',
        '  - element hairpin-connections { 10.0.2.1 . 10.0.2.1 . tcp . 8080 }',
        '  - element service-ips { 172.30.0.42 . tcp . 8080 : goto service-MHHHYRWA-ns2/svc2/tcp/p8080 }',
        '  - chain service-MHHHYRWA-ns2/svc2/tcp/p8080',
        '',
      ].join('\n'),
    );
  });

  it('no change: exit 0, "no differences"', async () => {
    const prev = file(await full(STEPS[0]!));
    const r = await runKpc(['diff', ...stepArgs(STEPS[0]!), '--previous', prev]);
    expect([r.code, r.stdout]).toEqual([0, 'no differences\n']);
  });

  it('an unreadable previous state is exit 2 naming the file and line', async () => {
    const prev = file('add table ip kube-proxy\nadd frobnicate ip kube-proxy x\n', 'bad.nft');
    const r = await runKpc(['diff', ...stepArgs(STEPS[0]!), '--previous', prev]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.nft');
    expect(r.stderr).toMatch(/:2\b/);
  });
});

describe('kpc check, nftables', () => {
  it('identical → 0; drift → 1 with a unified diff; a directory → 2', async () => {
    const text = await full(STEPS[1]!);
    const same = await runKpc(['check', ...stepArgs(STEPS[1]!), '--golden', file(text, 'golden.nft')]);
    expect([same.code, same.stdout]).toEqual([0, '']);
    const drifted = text.replace('dnat to 10.0.3.1:80', 'dnat to 10.0.3.9:80');
    expect(drifted).not.toBe(text);
    const d = await runKpc(['check', ...stepArgs(STEPS[1]!), '--golden', file(drifted, 'golden.nft')]);
    expect(d.code).toBe(1);
    expect(d.stdout).toContain('-add rule ip kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80 meta l4proto tcp dnat to 10.0.3.9:80');
    expect(d.stdout).toContain('+add rule ip kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80 meta l4proto tcp dnat to 10.0.3.1:80');
    const dir = await runKpc(['check', ...stepArgs(STEPS[1]!), '--golden', tmp]);
    expect(dir.code).toBe(2);
  });
});

describeLab('kpc diff, nftables, against the kernel', { commands: ['nft'] }, () => {
  it('the same report from kpc\'s text, nft list and nft -j list (every TestSyncProxyRulesRepeated step)', { timeout: 300_000 }, async () => {
    await withNetns('nftdf', async (ns) => {
      for (let i = 1; i < STEPS.length; i++) {
        const prevText = await full(STEPS[i - 1]!);
        await nftLoad(ns, 'flush ruleset\n');
        expect((await nftLoad(ns, prevText)).code).toBe(0);
        const sources = [file(prevText), file((await nftListTable(ns, 'ip')).stdout), file((await nftListTableJSON(ns, 'ip')).stdout)];
        const reports = await Promise.all(sources.map((p) => runKpc(['diff', ...stepArgs(STEPS[i]!), '--previous', p, '-o', 'json'])));
        for (const r of reports) expect(r.code, r.stderr).toBe(reports[0]!.code);
        // Rule texts differ by source (nft prints its own form), so compare the report's structure without them.
        const shape = (s: string) => JSON.stringify(JSON.parse(s), (k, v) => (k === 'rulesAdded' || k === 'rulesRemoved' ? (v as unknown[]).length : v));
        expect(shape(reports[1]!.stdout), STEPS[i]).toBe(shape(reports[0]!.stdout));
        expect(shape(reports[2]!.stdout), STEPS[i]).toBe(shape(reports[0]!.stdout));
      }
    });
  });

  const cases = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true }).filter((c) => c.exit === 0);
  it('every golden: no differences against the kernel\'s listing and JSON of its own output', { timeout: 600_000 }, async () => {
    expect(cases.length).toBeGreaterThanOrEqual(70);
    await withNetns('nftdf', async (ns) => {
      for (const c of cases) {
        const out = await runKpc(caseArgv(c));
        await nftLoad(ns, 'flush ruleset\n');
        expect((await nftLoad(ns, out.stdout)).code, c.name).toBe(0);
        const family = /^add table ip6 /m.test(out.stdout) ? 'ip6' : 'ip';
        for (const listing of [(await nftListTable(ns, family)).stdout, (await nftListTableJSON(ns, family)).stdout]) {
          const argv = caseArgv(c);
          const r = await runKpc(['diff', ...argv.slice(1), '--previous', file(listing)]);
          expect([r.code, r.stdout], `${c.name}\n${r.stderr}`).toEqual([0, 'no differences\n']);
          const d = await runKpc([...argv, '--previous', file(listing)]);
          expect([d.code, d.stdout], `${c.name}: empty delta`).toEqual([0, '']);
        }
      }
    });
  });
});

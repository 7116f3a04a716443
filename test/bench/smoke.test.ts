/**
 * Keeps the benchmark from rotting (issue 6). Benchmarks are not timed tests: nothing here
 * asserts a speed. It checks that
 *   - bench/gen is deterministic (same seed → same bytes, another seed → other bytes) and
 *     makes the cluster the spec asks for (types, traffic policies, slices, zones, node ports
 *     within the range at every size);
 *   - a generated cluster compiles with kpc (JSON and YAML give the same rules);
 *   - the harness (`node dist/bench/run.js`, what `npm run bench` runs) works end to end on 50
 *     Services (iptables, ipvs and nftables modes): kpc, floor, consumer (nftables: nft -f, and
 *     iptables-restore beside it) and the incremental case; the namespace parts only as
 *     root, else `--netns off`.
 *
 * The harness runs the compiled files (dist/bench/*.js): `npm test` builds them first; run
 * alone, this file rebuilds them when they are missing or older than their sources.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCluster, renderCluster } from '../../bench/gen.js';
import type { BenchResult } from '../../bench/run.js';
import { runKpc } from '../helpers/run-kpc.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const text = (services: number, seed: number, format: 'json' | 'yaml' = 'json', variant: 'base' | 'one-changed' = 'base') =>
  [...renderCluster(generateCluster({ services, seed, variant }), format)].join('');

type Obj = Record<string, any>;

describe('bench/gen', () => {
  it('same seed → same bytes, another seed → other bytes (JSON and YAML)', () => {
    for (const format of ['json', 'yaml'] as const) {
      const a = text(200, 7, format);
      expect(text(200, 7, format)).toBe(a);
      expect(text(200, 8, format)).not.toBe(a);
    }
    // The one-changed variant differs from the base in one Service only.
    const base = generateCluster({ services: 200, seed: 7 }) as Obj[];
    const changed = generateCluster({ services: 200, seed: 7, variant: 'one-changed' }) as Obj[];
    const differing = base.filter((o, i) => JSON.stringify(o) !== JSON.stringify(changed[i]));
    expect(differing.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual(['Service svc-100']);
  });

  it('the YAML is the same cluster as the JSON', async () => {
    const { parse } = await import('yaml');
    expect(parse(text(100, 3, 'yaml'))).toEqual(JSON.parse(text(100, 3, 'json')));
  });

  it('has the shape the spec asks for, and node ports fit the range at 20,000 Services', () => {
    for (const services of [2000, 20000]) {
      const objs = generateCluster({ services, seed: 1 }) as Obj[];
      const svcs = objs.filter((o) => o.kind === 'Service');
      const slices = objs.filter((o) => o.kind === 'EndpointSlice');
      const nodes = objs.filter((o) => o.kind === 'Node');
      expect(svcs).toHaveLength(services);
      const share = (f: (s: Obj) => boolean) => svcs.filter(f).length / services;
      expect(share((s) => s.spec.type === 'ClusterIP')).toBeGreaterThan(0.6);
      expect(share((s) => s.spec.type === 'NodePort')).toBeGreaterThan(0.03);
      // LoadBalancer stays ~5% at every size (without node ports once the range is full).
      expect(share((s) => s.spec.type === 'LoadBalancer')).toBeGreaterThan(0.04);
      expect(share((s) => s.spec.loadBalancerSourceRanges !== undefined)).toBeGreaterThan(0.01);
      expect(share((s) => s.spec.externalIPs !== undefined)).toBeGreaterThan(0.01);
      expect(share((s) => s.spec.externalTrafficPolicy === 'Local')).toBeGreaterThan(0.01);
      expect(share((s) => s.spec.sessionAffinity === 'ClientIP')).toBeGreaterThan(0.01);
      expect(share((s) => s.spec.ports.length > 1)).toBeGreaterThan(0.05);
      expect(share((s) => s.spec.ports.some((p: Obj) => p.protocol === 'UDP'))).toBeGreaterThan(0.01);
      expect(new Set(svcs.map((s) => s.metadata.namespace)).size).toBeGreaterThan(10);
      // Node ports: in 30000-32767, never reused.
      const ports = svcs.flatMap((s) => [...s.spec.ports.map((p: Obj) => p.nodePort), s.spec.healthCheckNodePort]).filter((p) => p !== undefined);
      expect(new Set(ports).size).toBe(ports.length);
      expect(Math.min(...ports)).toBeGreaterThanOrEqual(30000);
      expect(Math.max(...ports)).toBeLessThanOrEqual(32767);
      // Endpoints: skewed around ~10, a few with hundreds, slices of at most 100, some terminating.
      const perService = new Map<string, number>();
      for (const sl of slices) {
        expect(sl.endpoints.length).toBeLessThanOrEqual(100);
        const k = `${sl.metadata.namespace}/${sl.metadata.labels['kubernetes.io/service-name']}`;
        perService.set(k, (perService.get(k) ?? 0) + sl.endpoints.length);
      }
      const counts = [...perService.values()];
      const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
      expect(mean).toBeGreaterThan(7);
      expect(mean).toBeLessThan(13);
      expect(counts.filter((c) => c > 100).length).toBeGreaterThan(0);
      const eps = slices.flatMap((s) => s.endpoints as Obj[]);
      expect(eps.filter((e) => e.conditions.terminating).length / eps.length).toBeGreaterThan(0.005);
      // Nodes in zones.
      expect(new Set(nodes.map((n) => n.metadata.labels['topology.kubernetes.io/zone'])).size).toBe(3);
    }
  }, 60_000);
});

describe('a generated cluster compiles with kpc', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kpc-bench-smoke-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('50 Services: iptables and ipvs, JSON and YAML give the same rules', async () => {
    const { writeFileSync } = await import('node:fs');
    const outs: string[] = [];
    for (const format of ['json', 'yaml'] as const) {
      const path = join(dir, `c.${format}`);
      writeFileSync(path, text(50, 1, format));
      const r = await runKpc(['compile', '-f', path, '--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^-A KUBE-SERVICES /m);
      outs.push(r.stdout);
      const ipvs = await runKpc(['compile', '-f', path, '--hostname-override', 'node-0', '--proxy-mode', 'ipvs']);
      expect(ipvs.code, ipvs.stderr).toBe(0);
    }
    expect(outs[1]).toBe(outs[0]);
  });

  it('a YAML List cut into parts (as the harness does above 128 MiB) compiles to the same rules', async () => {
    const { writeFileSync } = await import('node:fs');
    const { yamlParts } = await import('../../bench/run.js');
    const whole = join(dir, 'whole.yaml');
    writeFileSync(whole, text(60, 2, 'yaml'));
    const parts = yamlParts(whole, 100_000);
    expect(parts.length).toBeGreaterThan(1);
    const args = ['--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9'];
    const a = await runKpc(['compile', '-f', whole, ...args]);
    const b = await runKpc(['compile', ...parts.flatMap((p) => ['-f', p]), ...args]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe(a.stdout);
  });
});

/** dist/bench is what `npm run bench` runs: build it when missing or older than its sources. */
function ensureBuilt(): void {
  const stale = ['gen', 'run', 'floor', 'kpc-child', 'netns'].some((f) => {
    const js = join(ROOT, 'dist', 'bench', `${f}.js`);
    return !existsSync(js) || statSync(js).mtimeMs < statSync(join(ROOT, 'bench', `${f}.ts`)).mtimeMs;
  });
  if (stale) spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], { cwd: ROOT });
}

describe('the harness end to end (S=50)', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kpc-bench-harness-'));
    ensureBuilt();
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('measures kpc, the floor, the consumer and the incremental case', () => {
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    const args = ['--sizes', '50', '--repeat', '1', '--incremental', '50', '--cache', dir, '--json', join(dir, 'r.json')];
    if (!root) {
      console.warn('*** bench harness smoke: not root, running with --netns off (no consumer, no kernel loads) ***');
      args.push('--netns', 'off');
    }
    const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', 'run.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, `${r.stderr}\n${r.stdout}`).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as BenchResult;
    expect(result.machine.nproc).toBeGreaterThan(0);
    expect(result.measurements.map((m) => `${m.mode}/${m.format}`)).toEqual(['iptables/json', 'iptables/yaml', 'ipvs/json', 'ipvs/yaml', 'nftables/json', 'nftables/yaml']);
    for (const m of result.measurements) {
      expect(m.error).toBeUndefined();
      expect(m.kpc!.wallMs).toBeGreaterThan(0);
      expect(m.kpc!.maxRssMB).toBeGreaterThan(10);
      expect(m.kpc!.stages.read).toBeGreaterThan(0);
      expect(m.output!.rules).toBeGreaterThan(100);
      expect(m.floor!.wallMs).toBeGreaterThan(0);
      if (root) expect(m.consumer?.ok, m.consumer?.note).toBe(true);
    }
    // JSON and YAML compile to the same bytes.
    expect(result.measurements[1]!.output!.sha256).toBe(result.measurements[0]!.output!.sha256);
    expect(result.measurements[5]!.output!.sha256).toBe(result.measurements[4]!.output!.sha256);
    // nftables: the nft -f load, and beside it a real iptables-restore of the same cluster's iptables output.
    const nft = result.measurements[4]!;
    expect(nft.output!.detail!.elements).toBeGreaterThan(50);
    if (root) expect(Object.keys(nft.consumer!.parts)).toEqual(['nft -f', 'beside it: iptables-restore (iptables mode, same cluster)']);
    const inc = result.incremental!;
    expect(inc.delta!.lines).toBeGreaterThan(0);
    expect(inc.delta!.lines).toBeLessThanOrEqual(50);
    if (root) expect(inc.kernel!.sameState).toBe(true);
    // The report renders.
    expect(r.stdout).toMatch(/### 50 Services/);
    expect(r.stdout).toMatch(/### Incremental/);
  }, 90_000);
});

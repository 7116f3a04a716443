/**
 * Delta size on a large cluster: 2,000 Services from bench/gen (seed 1, compiled for node-0),
 * then one Service changed. The delta `kpc compile --previous` prints must stay at a few dozen
 * lines (asserted: ≤ 50), where kube-proxy's partial sync rewrites every rule of KUBE-SERVICES
 * and KUBE-NODEPORTS (and the whole filter table) each time. Sizes are printed.
 *
 * Changes measured (each from the same base):
 *   port       bench/gen's `one-changed` variant: svc-1000's first port 80 → 8443
 *   endpoint   one endpoint address of svc-1000 replaced
 *   added      a new ClusterIP Service with two endpoints
 *
 * With KPC_DELTA_BIG=1 (root) the `port` delta is also applied to a namespace holding the
 * 100k-rule base with `iptables-restore --noflush` and compared with a fresh load of the new
 * state (slow: iptables-save of 100k rules takes seconds on nf_tables), and the times of
 * loading the delta and kube-proxy's rewrite are printed.
 *
 * Run alone: `npx vitest run test/diff/iptables/size.test.ts`.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, renderCluster } from '../../../bench/gen.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { isRoot, withNetns } from '../../netns/lab.js';
import { cleanupTmp, compareSaves, lineCount, load, save, tmpDir } from './harness.js';

const SERVICES = 2000;
const BOUND = 50;
const ARGS = ['--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9'];

function writeCluster(objects: unknown[], label: string): string {
  const path = join(tmpDir(label), 'cluster.json');
  writeFileSync(path, [...renderCluster(objects, 'json')].join(''));
  return path;
}

async function compile(input: string, previous?: string): Promise<string> {
  const r = await runKpc(['compile', ...ARGS, '-f', input, ...(previous ? ['--previous', previous] : [])]);
  if (r.code !== 0) throw new Error(`kpc exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const bytes = (s: string) => Buffer.byteLength(s);

/** kube-proxy's partial sync: every rule of KUBE-SERVICES and KUBE-NODEPORTS (both tables). */
function topLevelRewrite(full: string): { lines: number; bytes: number; filterTable: { lines: number; bytes: number } } {
  let table = '';
  const top: string[] = [];
  const filter: string[] = [];
  for (const line of full.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    if (table === 'filter' && line !== '') filter.push(line);
    if (/^-A KUBE-(SERVICES|NODEPORTS) /.test(line)) top.push(line);
  }
  const text = (l: string[]) => l.map((x) => `${x}\n`).join('');
  return { lines: top.length, bytes: bytes(text(top)), filterTable: { lines: filter.length, bytes: bytes(text(filter)) } };
}

afterAll(() => cleanupTmp());

describe(`delta size: ${SERVICES} generated Services, one changed`, () => {
  let base = '';
  let basePath = '';
  const sizes: string[] = [];
  const deltas = new Map<string, string>();

  it(`compiles the ${SERVICES}-Service base`, { timeout: 60_000 }, async () => {
    const objects = generateCluster({ services: SERVICES, seed: 1, variant: 'base' });
    const started = Date.now();
    base = await compile(writeCluster(objects, 'base'));
    basePath = join(tmpDir('base-out'), 'previous.txt');
    writeFileSync(basePath, base);
    const top = topLevelRewrite(base);
    sizes.push(
      `base: ${lineCount(base)} lines, ${bytes(base)} bytes (compiled in ${Date.now() - started} ms)`,
      `kube-proxy-style partial rewrite of KUBE-SERVICES + KUBE-NODEPORTS (nat and filter): ${top.lines} rules, ${top.bytes} bytes` +
        ` (its partial sync also rewrites the whole filter table: ${top.filterTable.lines} lines, ${top.filterTable.bytes} bytes)`,
    );
    expect(top.lines).toBeGreaterThan(SERVICES);
  });

  const variants: { name: string; objects: () => unknown[]; check: (delta: string) => void }[] = [
    {
      name: 'port (bench/gen one-changed: svc-1000 port 80 → 8443)',
      objects: () => generateCluster({ services: SERVICES, seed: 1, variant: 'one-changed' }),
      check: (d) => {
        expect(d).toMatch(/^-D KUBE-SERVICES .*svc-1000.*--dport 80 /m);
        expect(d).toMatch(/^-I KUBE-SERVICES \d+ .*svc-1000.*--dport 8443 /m);
      },
    },
    {
      name: 'endpoint (one address of svc-1000 replaced)',
      objects: () => {
        const objs = generateCluster({ services: SERVICES, seed: 1, variant: 'base' }) as Array<Record<string, any>>;
        const slice = objs.find((o) => o.kind === 'EndpointSlice' && o.metadata.labels['kubernetes.io/service-name'] === 'svc-1000')!;
        slice.endpoints[0].addresses = ['10.255.1.1'];
        return objs;
      },
      check: (d) => {
        expect(d).toMatch(/10\.255\.1\.1/);
        expect(d).toMatch(/^-X KUBE-SEP-/m);
      },
    },
    {
      name: 'added (a new ClusterIP Service with two endpoints)',
      objects: () => {
        const objs = generateCluster({ services: SERVICES, seed: 1, variant: 'base' });
        objs.push(
          { apiVersion: 'v1', kind: 'Service', metadata: { name: 'new-svc', namespace: 'ns-0' }, spec: { type: 'ClusterIP', clusterIP: '10.111.0.1', clusterIPs: ['10.111.0.1'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } },
          {
            apiVersion: 'discovery.k8s.io/v1',
            kind: 'EndpointSlice',
            metadata: { name: 'new-svc-1', namespace: 'ns-0', labels: { 'kubernetes.io/service-name': 'new-svc' } },
            addressType: 'IPv4',
            ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
            endpoints: [
              { addresses: ['10.254.0.1'], conditions: { ready: true }, nodeName: 'node-0' },
              { addresses: ['10.254.0.2'], conditions: { ready: true }, nodeName: 'node-1' },
            ],
          },
        );
        return objs;
      },
      check: (d) => expect(d).toMatch(/^-I KUBE-SERVICES \d+ .*new-svc/m),
    },
  ];

  for (const v of variants) {
    it(`${v.name}: delta ≤ ${BOUND} lines`, { timeout: 60_000 }, async () => {
      expect(base, 'the base compiled').not.toBe('');
      const started = Date.now();
      const delta = await compile(writeCluster(v.objects(), v.name.split(' ')[0]!), basePath);
      deltas.set(v.name, delta);
      sizes.push(`${v.name}: delta ${lineCount(delta)} lines, ${bytes(delta)} bytes (compiled in ${Date.now() - started} ms)`);
      expect(lineCount(delta), delta).toBeLessThanOrEqual(BOUND);
      expect(delta).not.toBe('');
      v.check(delta);
      // Nothing but the changed Service: every rule-level edit names it (large-cluster mode: the
      // per-service chains carry no comments), every -A goes to a chain the delta declares.
      const svc = v.name.startsWith('added') ? 'new-svc' : 'svc-1000';
      const lines = delta.split('\n');
      for (const line of lines.filter((l) => /^-[DI] /.test(l))) expect(line).toContain(`/${svc}:`);
      const declared = new Set(lines.filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0]));
      for (const line of lines.filter((l) => l.startsWith('-A '))) expect(declared.has(line.split(' ')[1]), line).toBe(true);
    });
  }

  it('prints the sizes', () => {
    console.info(`delta size (${SERVICES} Services):\n  ${sizes.join('\n  ')}`);
    expect(sizes.length).toBe(2 + variants.length);
  });

  it.runIf(process.env.KPC_DELTA_BIG === '1' && isRoot())('KPC_DELTA_BIG=1: the port delta applied to the 100k-rule base equals a fresh load', { timeout: 300_000 }, async () => {
    const name = variants[0]!.name;
    const delta = deltas.get(name)!;
    const next = await compile(writeCluster(variants[0]!.objects(), 'next'));
    const top = topLevelRewrite(next);
    const rewrite = ['*filter', ...next.split('*nat')[0]!.split('\n').slice(1).filter((l) => l !== '' && l !== 'COMMIT'), 'COMMIT', '*nat', ':KUBE-SERVICES - [0:0]', ':KUBE-NODEPORTS - [0:0]', ...next.split('*nat')[1]!.split('\n').filter((l) => /^-A KUBE-(SERVICES|NODEPORTS) /.test(l)), 'COMMIT', ''].join('\n');
    const timings: string[] = [];
    const problems = await withNetns('dbig', async (ns) => {
      let t = Date.now();
      await load(ns, base, 'ipv4', false, 'the base', 120_000);
      timings.push(`full load of the base: ${Date.now() - t} ms`);
      t = Date.now();
      await load(ns, delta, 'ipv4', true, 'the delta');
      timings.push(`kpc delta (--noflush): ${Date.now() - t} ms`);
      t = Date.now();
      const got = await save(ns, 'ipv4', 120_000);
      timings.push(`iptables-save: ${Date.now() - t} ms`);
      t = Date.now();
      await load(ns, rewrite, 'ipv4', true, 'the kube-proxy-style rewrite', 120_000);
      timings.push(`kube-proxy-style rewrite (filter table + nat KUBE-SERVICES/KUBE-NODEPORTS, ${lineCount(rewrite)} lines, ${top.bytes} bytes of top-level rules): ${Date.now() - t} ms`);
      await load(ns, next, 'ipv4', false, 'the new state', 120_000);
      const want = await save(ns, 'ipv4', 120_000);
      return compareSaves(got, want, 'ipv4').canonical;
    });
    console.info(`delta size, kernel:\n  ${timings.join('\n  ')}`);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});

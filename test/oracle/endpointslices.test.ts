/**
 * EndpointSlices from Pods, end to end (issue 18): for a cluster of Services, Pods and Nodes,
 *
 *   kpc compile -f svc+pods+nodes --endpoints-from pods
 *
 * must print the same bytes as
 *
 *   kpc compile -f svc+nodes+SLICES --endpoints-from slices
 *
 * where SLICES are what the REAL EndpointSlice controller writes for that cluster
 * (`kpc-oracle-vX endpointslices`, test/oracle/src/endpointslices.go: k8s.io/kubernetes
 * pkg/controller/endpointslice on client-go's fake clientset). Both sides are compiled by kpc,
 * so this checks the derivation where it matters to kube-proxy: every rule, in both modes, for
 * every release.
 *
 * Clusters: one made by hand (named target ports resolving differently per Pod, not-ready,
 * terminating and failed Pods, a headless Service publishing not-ready addresses, externalTraffic
 * Local, trafficDistribution) and generated ones (runner/generate-pods.ts) with the topology-mode
 * annotations taken out: for those the controller picks at random which endpoints of a zone with
 * too many are hinted for another zone, so the rules may rightly differ in which endpoint a
 * node's topology chain holds (the --endpointslices campaign compares those hints as counts).
 *
 * Gated like the other oracle tests: the release binaries (test/oracle/build.sh) and `npm run
 * build` (bin/kpc.js); skipped with a note otherwise, failing under CI=true.
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kpcBin, listJSON, oracleBinary, runProcess, VERSIONS, writeTemp } from './runner/common.js';
import { generatePods } from './runner/generate-pods.js';
import { HAND_MADE } from './runner/hand-made-pods.js';

type Item = Record<string, any>;

const missing = VERSIONS.filter((v) => !existsSync(oracleBinary(v)));
const ready = missing.length === 0 && existsSync(kpcBin());
const why = existsSync(kpcBin()) ? `missing ${missing.map(oracleBinary).join(', ')} (run test/oracle/build.sh)` : 'bin/kpc.js is missing (npm run build)';
if (!ready) {
  console.warn(`\n*** test/oracle/endpointslices: SKIPPED: ${why} ***\n`);
  if (process.env.CI === 'true') {
    describe('endpointslices end to end', () => {
      it('has its binaries under CI', () => {
        throw new Error(`test/oracle/endpointslices cannot run: ${why}`);
      });
    });
  }
}

const TOPOLOGY_KEYS = ['service.kubernetes.io/topology-mode', 'service.kubernetes.io/topology-aware-hints'];

function withoutTopologyMode(items: Item[]): Item[] {
  return items.map((it) => {
    if (it.kind !== 'Service' || !it.metadata.annotations) return it;
    const annotations = { ...it.metadata.annotations };
    for (const k of TOPOLOGY_KEYS) delete annotations[k];
    return { ...it, metadata: { ...it.metadata, annotations } };
  });
}

/** kpc compile's output: stdout (iptables) or every file of the bundle (ipvs). */
async function compile(listPath: string, argv: string[], ipvs: boolean): Promise<{ code: number; out: string; stderr: string }> {
  if (!ipvs) {
    const r = await runProcess(process.execPath, [kpcBin(), 'compile', '-f', listPath, '-q', ...argv]);
    return { code: r.code, out: r.stdout, stderr: r.stderr };
  }
  const dir = mkdtempSync(join(tmpdir(), 'kpc-es-e2e-'));
  try {
    const r = await runProcess(process.execPath, [kpcBin(), 'compile', '-f', listPath, '-q', '--proxy-mode', 'ipvs', '-o', join(dir, 'out'), ...argv]);
    const files = r.code === 0 ? readdirSync(join(dir, 'out')).filter((f) => !f.startsWith('.')).sort() : [];
    return { code: r.code, out: files.map((f) => `==> ${f}\n${readFileSync(join(dir, 'out', f), 'utf8')}`).join(''), stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Verdict {
  same: boolean;
  detail: string;
  /** Rules for at least one endpoint were written (the comparison was not of two empty tables). */
  endpoints: boolean;
}

async function endToEnd(version: string, cluster: Item[], argv: string[], ipvs: boolean): Promise<Verdict> {
  const withPods = writeTemp('with-pods.json', listJSON(cluster));
  try {
    const o = await runProcess(oracleBinary(version), ['endpointslices', '-f', withPods.path]);
    if (o.code !== 0) return { same: false, detail: `oracle endpointslices exit ${o.code}: ${o.stderr.trim().split('\n').at(-1)}`, endpoints: false };
    const controllerSlices = (JSON.parse(o.stdout) as { items: Item[] }).items;
    const withSlices = writeTemp('with-slices.json', listJSON([...cluster.filter((it) => it.kind !== 'Pod'), ...controllerSlices]));
    try {
      const flags = ['--kube-proxy-version', version, ...argv];
      const [a, b] = await Promise.all([compile(withPods.path, [...flags, '--endpoints-from', 'pods'], ipvs), compile(withSlices.path, [...flags, '--endpoints-from', 'slices'], ipvs)]);
      if (a.code !== b.code) return { same: false, detail: `exit: from Pods ${a.code} (${a.stderr.trim()}) / from the controller's slices ${b.code} (${b.stderr.trim()})`, endpoints: false };
      if (a.out === b.out) return { same: true, detail: '', endpoints: /KUBE-SEP-|^-a -t /m.test(a.out) };
      const x = a.out.split('\n');
      const y = b.out.split('\n');
      const i = x.findIndex((l, j) => l !== y[j]);
      return { same: false, detail: `line ${i + 1}: from Pods ${JSON.stringify(x[i])} / from the controller's slices ${JSON.stringify(y[i])}`, endpoints: false };
    } finally {
      withSlices.cleanup();
    }
  } finally {
    withPods.cleanup();
  }
}

describe.skipIf(!ready)('EndpointSlices from Pods, end to end: kpc on svc+pods+nodes = kpc on svc+nodes+the controller\'s slices', () => {
  for (const version of VERSIONS) {
    it(`v${version}: the hand-made cluster, both modes, node-a and node-b`, { timeout: 120_000 }, async () => {
      const bad: string[] = [];
      for (const host of ['node-a', 'node-b']) {
        for (const ipvs of [false, true]) {
          const v = await endToEnd(version, HAND_MADE, ['--hostname-override', host], ipvs);
          if (!v.same) bad.push(`${host} ${ipvs ? 'ipvs' : 'iptables'}: ${v.detail}`);
          else expect(v.endpoints, `${host}: no endpoint was programmed (the check would be empty)`).toBe(true);
        }
      }
      expect(bad).toEqual([]);
    });

    it(`v${version}: generated clusters (the first 6 seeds from 1 that program endpoints on node-a; topology mode left out), iptables, each family the cluster has`, { timeout: 300_000 }, async () => {
      const bad: string[] = [];
      const compared: number[] = [];
      for (let seed = 1; seed <= 40 && compared.length < 6; seed++) {
        const cluster = withoutTopologyMode(generatePods(seed).items as Item[]);
        const families = new Set(cluster.filter((it) => it.kind === 'Service').flatMap((it) => (it.spec.ipFamilies as string[] | undefined) ?? []));
        let endpoints = false;
        for (const family of ['IPv4', 'IPv6'].filter((f) => families.has(f))) {
          const v = await endToEnd(version, cluster, ['--hostname-override', 'node-a', '--ip-family', family.toLowerCase()], false);
          if (!v.same) bad.push(`seed ${seed} ${family}: ${v.detail}`);
          endpoints ||= v.endpoints;
        }
        if (endpoints) compared.push(seed);
      }
      expect(bad).toEqual([]);
      expect(compared, 'seeds whose rules hold endpoints').toHaveLength(6);
    });
  }

  it('v1.37: generated clusters (seeds 13-18), ipvs', { timeout: 240_000 }, async () => {
    const bad: string[] = [];
    for (let seed = 13; seed <= 18; seed++) {
      const v = await endToEnd('1.37', withoutTopologyMode(generatePods(seed).items as Item[]), ['--hostname-override', 'node-a'], true);
      if (!v.same) bad.push(`seed ${seed}: ${v.detail}`);
    }
    expect(bad).toEqual([]);
  });
});

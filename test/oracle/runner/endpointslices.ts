/**
 * --endpointslices: generated clusters with Pods (generate-pods.ts), the slices kpc derives
 * (`kpc endpointslices -f LIST --endpoints-from pods --kube-proxy-version V -o json`) against
 * those the release's real EndpointSlice controller writes (`kpc-oracle-vV endpointslices -f
 * LIST`, test/oracle/src/endpointslices.go).
 *
 * Compared, per Service (namespace and kubernetes.io/service-name label): the slices' labels,
 * generateName and owner references, and per address type and list of ports (in order: the
 * controller's order is deterministic, by hash): the endpoints (addresses, conditions, hostname,
 * nodeName, zone, hints, targetRef) as a set, and how many slices hold how many of them.
 * Not compared: names (the API server's are random), which endpoints share a slice when a set
 * needs several (the controller pops them from a Go map) and the order of endpoints.
 * For a Service with the topology-mode annotation, where the controller's choice of which
 * endpoints to hint for another zone is random, the hints are compared per address type as
 * counts (endpoints hinted, per own zone; hints per zone), not per endpoint.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kpcBin, listJSON, oracleBinary, pool, REPO_ROOT, runProcess, writeTemp } from './common.js';
import { generatePods } from './generate-pods.js';

type Item = Record<string, unknown>;

interface Slice {
  metadata: { namespace: string; generateName?: string; labels?: Record<string, string>; ownerReferences?: unknown[] };
  addressType: string;
  ports?: unknown[] | null;
  endpoints?: Array<Record<string, unknown>> | null;
}

const TOPOLOGY_KEYS = ['service.kubernetes.io/topology-aware-hints', 'service.kubernetes.io/topology-mode'];

/** hintsEnabled (k8s.io/endpointslice utils.go), on the generated Service. */
export function topologyServices(items: readonly Item[]): Set<string> {
  const out = new Set<string>();
  for (const it of items) {
    if (it.kind !== 'Service') continue;
    const m = it.metadata as { name: string; namespace?: string; annotations?: Record<string, string> };
    const a = m.annotations ?? {};
    const v = TOPOLOGY_KEYS[0]! in a ? a[TOPOLOGY_KEYS[0]!] : a[TOPOLOGY_KEYS[1]!];
    if (v === 'Auto' || v === 'auto') out.add(`${m.namespace ?? 'default'}/${m.name}`);
  }
  return out;
}

function sortedObject(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedObject);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) out[k] = sortedObject((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

function normalEndpoint(e: Record<string, unknown>, keepHints: boolean): Record<string, unknown> {
  const ref = e.targetRef as { namespace?: string; name?: string; uid?: string; kind?: string } | undefined;
  const out: Record<string, unknown> = {
    addresses: [...((e.addresses as string[]) ?? [])].sort(),
    conditions: e.conditions ?? {},
    targetRef: ref ? { kind: ref.kind, namespace: ref.namespace, name: ref.name, uid: ref.uid } : null,
  };
  for (const k of ['hostname', 'nodeName', 'zone']) if (e[k] !== undefined && e[k] !== null) out[k] = e[k];
  const hints = e.hints as { forZones?: Array<{ name: string }> | null; forNodes?: Array<{ name: string }> | null } | undefined;
  if (hints) {
    if (keepHints) out.hints = { forZones: (hints.forZones ?? []).map((z) => z.name), forNodes: (hints.forNodes ?? []).map((n) => n.name) };
    else out.hinted = true;
  }
  return out;
}

/** The content of a list of slices, as one comparable JSON text (see the header). */
export function normalForm(list: { items?: Slice[] }, topology: ReadonlySet<string>): string {
  const services = new Map<string, { meta: Set<string>; groups: Map<string, { sizes: number[]; endpoints: string[] }>; hints: Map<string, Record<string, number>> }>();
  for (const s of list.items ?? []) {
    const svc = `${s.metadata.namespace}/${s.metadata.labels?.['kubernetes.io/service-name'] ?? ''}`;
    let entry = services.get(svc);
    if (!entry) {
      entry = { meta: new Set(), groups: new Map(), hints: new Map() };
      services.set(svc, entry);
    }
    entry.meta.add(JSON.stringify(sortedObject({ generateName: s.metadata.generateName ?? '', labels: s.metadata.labels ?? {}, ownerReferences: s.metadata.ownerReferences ?? [] })));
    const key = `${s.addressType} ${JSON.stringify((s.ports ?? []).map(sortedObject))}`;
    let group = entry.groups.get(key);
    if (!group) {
      group = { sizes: [], endpoints: [] };
      entry.groups.set(key, group);
    }
    const eps = s.endpoints ?? [];
    group.sizes.push(eps.length);
    const isTopology = topology.has(svc);
    for (const e of eps) {
      group.endpoints.push(JSON.stringify(sortedObject(normalEndpoint(e, !isTopology))));
      const hints = e.hints as { forZones?: Array<{ name: string }> | null } | undefined;
      if (isTopology && hints) {
        const counts = entry.hints.get(s.addressType) ?? {};
        const own = `own:${String(e.zone ?? '')}`;
        for (const z of hints.forZones ?? []) {
          counts[`hint:${z.name}`] = (counts[`hint:${z.name}`] ?? 0) + 1;
          if (z.name === e.zone) counts[own] = (counts[own] ?? 0) + 1;
        }
        entry.hints.set(s.addressType, counts);
      }
    }
  }
  const out: Record<string, unknown> = {};
  for (const svc of [...services.keys()].sort()) {
    const e = services.get(svc)!;
    const groups: Record<string, unknown> = {};
    for (const k of [...e.groups.keys()].sort()) {
      const g = e.groups.get(k)!;
      groups[k] = { sizes: [...g.sizes].sort((a, b) => b - a), endpoints: [...g.endpoints].sort() };
    }
    out[svc] = { meta: [...e.meta].sort(), groups, ...(e.hints.size ? { hints: sortedObject(Object.fromEntries(e.hints)) } : {}) };
  }
  return JSON.stringify(out, null, 1);
}

function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) {
      // The Service the line belongs to.
      let svc = '';
      for (let j = i; j >= 0; j--) {
        const m = /^ "([^"]+\/[^"]+)": \{/.exec(x[j] ?? '');
        if (m) {
          svc = m[1]!;
          break;
        }
      }
      return `${svc ? `${svc}: ` : ''}line ${i + 1}: oracle ${JSON.stringify((x[i] ?? '<end>').trim())} / kpc ${JSON.stringify((y[i] ?? '<end>').trim())}`;
    }
  }
  return 'same';
}

export interface SliceVerdict {
  version: string;
  seed: number;
  agree: boolean;
  detail: string;
  items: Item[];
  oracle?: string;
}

export async function checkSlices(version: string, seed: number, items?: Item[]): Promise<SliceVerdict> {
  const cluster = items ?? generatePods(seed).items;
  const tmp = writeTemp('cluster.json', listJSON(cluster));
  try {
    const [o, k] = await Promise.all([
      runProcess(oracleBinary(version), ['endpointslices', '-f', tmp.path]),
      runProcess(process.execPath, [kpcBin(), 'endpointslices', '-f', tmp.path, '--endpoints-from', 'pods', '--kube-proxy-version', version, '-o', 'json', '-q']),
    ]);
    if (o.code !== 0 || k.code !== 0) {
      const why = (s: string) => s.trim().split('\n').filter((l) => !l.startsWith('warning')).at(-1) ?? '';
      const agree = o.code === k.code;
      return { version, seed, agree, detail: agree ? '' : `exit: oracle ${o.code} (${why(o.stderr)}) / kpc ${k.code} (${why(k.stderr)})`, items: cluster };
    }
    const topology = topologyServices(cluster);
    const want = normalForm(JSON.parse(o.stdout), topology);
    const got = normalForm(JSON.parse(k.stdout), topology);
    return { version, seed, agree: want === got, detail: want === got ? '' : firstDifference(want, got), items: cluster, oracle: o.stdout };
  } finally {
    tmp.cleanup();
  }
}

/** Greedy shrink: drop objects while kpc and the oracle still disagree. */
async function shrinkSlices(v: SliceVerdict, budget = 150): Promise<SliceVerdict> {
  let cur = v;
  let steps = 0;
  let progress = true;
  while (progress && steps < budget) {
    progress = false;
    for (let i = 0; i < cur.items.length && steps < budget; i++) {
      steps++;
      const r = await checkSlices(cur.version, cur.seed, cur.items.filter((_, j) => j !== i));
      if (!r.agree && r.detail.startsWith('exit') === cur.detail.startsWith('exit')) {
        cur = r;
        progress = true;
        break;
      }
    }
  }
  return cur;
}

/** A shrunk disagreement as a golden case (expected = the oracle's slices). */
function writeSliceCase(v: SliceVerdict): string {
  const dir = join(REPO_ROOT, 'fixtures', 'endpointslices', `oracle-${v.version}-${v.seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'input.yaml'), stringify({ apiVersion: 'v1', kind: 'List', items: v.items }, { indentSeq: false, lineWidth: 0 }));
  writeFileSync(
    join(dir, 'case.yaml'),
    stringify(
      {
        description: `oracle disagreement, EndpointSlice controller v${v.version}, generated seed ${v.seed} (shrunk)`,
        source: `k8s.io/kubernetes pkg/controller/endpointslice run by test/oracle (kpc-oracle-v${v.version} endpointslices); seed ${v.seed} of test/oracle/runner/generate-pods.ts`,
        release: v.version,
        notes: `Written by npm run oracle -- --endpointslices. kpc and the oracle disagreed: ${v.detail}\nExpected = the oracle's output, never kpc's.\n`,
      },
      { lineWidth: 0 },
    ),
  );
  if (v.oracle) writeFileSync(join(dir, 'expected.yaml'), stringify(JSON.parse(v.oracle), { indentSeq: false, lineWidth: 0 }));
  return dir;
}

export async function runEndpointSlicesCampaign(versions: string[], seeds: [number, number], jobs: number, shrink: boolean, writeCases: boolean): Promise<number> {
  const t0 = Date.now();
  const tasks: Array<{ version: string; seed: number }> = [];
  for (let seed = seeds[0]; seed <= seeds[1]; seed++) for (const version of versions) tasks.push({ version, seed });
  const verdicts = await pool(tasks, jobs, async (t) => {
    const r = await checkSlices(t.version, t.seed);
    if (!r.agree) console.log(`disagree v${t.version} seed ${t.seed}: ${r.detail}`);
    return r;
  });
  const per = new Map<string, { n: number; agree: number; refused: number }>();
  for (const v of verdicts) {
    const e = per.get(v.version) ?? { n: 0, agree: 0, refused: 0 };
    e.n++;
    if (v.agree) e.agree++;
    if (v.agree && v.oracle === undefined) e.refused++;
    per.set(v.version, e);
  }
  if (shrink) {
    const kinds = new Map<string, SliceVerdict>();
    for (const v of verdicts.filter((x) => !x.agree)) {
      const kind = `${v.version} ${v.detail.replace(/line \d+/, 'line N').replace(/^[^ ]+\/[^ ]+: /, '')}`;
      if (!kinds.has(kind)) kinds.set(kind, v);
    }
    for (const v of kinds.values()) {
      const s = await shrinkSlices(v);
      console.log(`shrunk v${s.version} seed ${s.seed}: ${s.items.length} objects: ${s.detail}`);
      if (writeCases) console.log(`wrote ${writeSliceCase(s)}`);
    }
  }
  for (const [v, e] of per) console.log(`oracle --endpointslices: v${v}: ${e.agree}/${e.n} agree${e.refused ? ` (${e.refused} of them: both refused the input)` : ''}`);
  const agree = verdicts.filter((v) => v.agree).length;
  console.log(`oracle --endpointslices: ${((Date.now() - t0) / 1000).toFixed(1)} s for ${verdicts.length} comparisons`);
  console.log(`oracle --endpointslices: ${agree}/${verdicts.length} agree`);
  return agree === verdicts.length ? 0 : 1;
}

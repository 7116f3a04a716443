/**
 * The nftables oracle alone, on generated clusters (no kpc):
 *   node dist/test/oracle/runner/nft-smoke.js [--versions 1.34,…] [--seeds A-B] [--jobs N]
 *
 * Per seed and release, `kpc-oracle-vX compile --proxy-mode nftables … -o DIR` (kube-proxy's
 * real proxier, its table read back from the kernel), then:
 *   1. exit 0, and the kernel listing parses (canonicalNftListing);
 *   2. kube-proxy's own transaction (transaction.nft), loaded into a FRESH namespace by
 *      `nft-load` — the very path kpc's output takes in the runner — reads back to the same
 *      canonical listing: the comparison pipeline itself has no bias (a kpc that printed
 *      exactly kube-proxy's transaction would agree);
 *   3. knftables' Fake Dump() of the same sync (expected.dump, the unit tests' form), loaded the
 *      same way, reads back to the same canonical listing: the Fake and the kernel agree;
 *   4. shape: every Service port of the family with a ClusterIP has its ClusterIP in the
 *      `cluster-ips` set; every `goto`/`jump` target in the table is a chain of the table; and
 *      per-service chains, endpoint chains and numgen rules are counted (reported per release).
 * Prints one line per failed check and a summary per release; exit 0 only when all pass.
 */

import { listJSON, NFT_FILES, oracleBinary, pool, runOracle, runProcess, VERSIONS, writeTemp } from './common.js';
import { generate } from './generate.js';
import { canonicalNftListing, nftFamilyOf } from './nft.js';

export interface NftSmoke {
  version: string;
  seed: number;
  problems: string[];
  serviceChains: number;
  endpointChains: number;
  numgen: number;
  oracleCode: number;
}

async function readBack(version: string, text: string, family: 'ip' | 'ip6'): Promise<{ listing?: string; error?: string }> {
  const tmp = writeTemp('t.nft', text);
  try {
    const r = await runProcess(oracleBinary(version), ['nft-load', '--family', family, tmp.path]);
    return r.code === 0 ? { listing: r.stdout } : { error: `exit ${r.code}: ${r.stderr.trim().slice(0, 300)}` };
  } finally {
    tmp.cleanup();
  }
}

/** Structure of a canonical listing: chains, their rules, sets' elements. */
function parseCanonical(c: string): { chains: Map<string, string[]>; sets: Map<string, string[]> } {
  const chains = new Map<string, string[]>();
  const sets = new Map<string, string[]>();
  let cur: string[] | undefined;
  for (const l of c.split('\n')) {
    const m = /^(chain|set|map) (\S+) \{$/.exec(l);
    if (m) {
      cur = [];
      (m[1] === 'chain' ? chains : sets).set(m[2]!, cur);
    } else if (l === '}') cur = undefined;
    else if (cur && l.startsWith('\t')) cur.push(l.slice(1));
  }
  return { chains, sets };
}

/** An IP as nft prints it (IPv6 compressed canonically: `fd00:96::0:2f8` → `fd00:96::2f8`). */
function canonicalIP(ip: string): string {
  return ip.includes(':') ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip;
}

export async function smokeNftSeed(version: string, seed: number): Promise<NftSmoke> {
  const g = generate(seed, 'nftables', version);
  const family = nftFamilyOf(g.flags);
  const res: NftSmoke = { version, seed, problems: [], serviceChains: 0, endpointChains: 0, numgen: 0, oracleCode: -1 };
  const list = writeTemp('cluster.json', listJSON(g.items));
  const cfg = g.config === undefined ? undefined : writeTemp('config.yaml', g.config);
  try {
    const o = await runOracle(version, ['compile', ...g.flags, '-f', list.path, ...(cfg ? ['--config', cfg.path] : [])], NFT_FILES);
    res.oracleCode = o.code;
    if (o.code !== 0) {
      res.problems.push(`oracle exit ${o.code}: ${o.stderr.trim().split('\n').at(-1)}`);
      return res;
    }
    const listing = o.files?.['kernel.listing'] ?? '';
    let canon: string;
    try {
      canon = canonicalNftListing(listing);
    } catch (e) {
      res.problems.push(`listing: ${(e as Error).message}`);
      return res;
    }
    for (const [what, text] of [['transaction.nft', o.files?.['transaction.nft']], ['expected.dump', o.files?.['expected.dump']]] as const) {
      if (!text) {
        res.problems.push(`${what} missing`);
        continue;
      }
      const rb = await readBack(version, text, family);
      if (rb.error) res.problems.push(`${what} does not load: ${rb.error}`);
      else if (canonicalNftListing(rb.listing!) !== canon) {
        const a = canon.split('\n');
        const b = canonicalNftListing(rb.listing!).split('\n');
        const i = a.findIndex((l, k) => l !== b[k]);
        res.problems.push(`${what} reloaded differs at line ${i + 1}: ${JSON.stringify(a[i])} / ${JSON.stringify(b[i])}`);
      }
    }
    const { chains, sets } = parseCanonical(canon);
    res.serviceChains = [...chains.keys()].filter((c) => c.startsWith('service-')).length;
    res.endpointChains = [...chains.keys()].filter((c) => c.startsWith('endpoint-')).length;
    res.numgen = [...chains.values()].flat().filter((r) => r.includes('numgen random mod')).length;
    for (const [name, rules] of chains) {
      for (const r of rules) for (const m of r.matchAll(/\b(?:goto|jump) ([^\s,}]+)/g)) if (!chains.has(m[1]!)) res.problems.push(`chain ${name}: ${m[0]} names no chain`);
    }
    for (const [name, elems] of sets) {
      for (const e of elems) for (const m of e.matchAll(/\b(?:goto|jump) ([^\s,}]+)/g)) if (!chains.has(m[1]!)) res.problems.push(`${name}: ${m[0]} names no chain`);
    }
    // Every ClusterIP of the family is in cluster-ips.
    const clusterIPs = new Set((sets.get('cluster-ips') ?? []).map((e) => e.replace(/^element /, '')));
    for (const it of g.items) {
      if (it.kind !== 'Service') continue;
      const spec = it.spec as { type?: string; clusterIPs?: string[] };
      if (spec.type === 'ExternalName') continue;
      for (const ip of spec.clusterIPs ?? []) {
        if (ip === 'None' || ip.includes(':') !== (family === 'ip6')) continue;
        if (!clusterIPs.has(canonicalIP(ip))) res.problems.push(`ClusterIP ${ip} not in cluster-ips`);
      }
    }
    return res;
  } finally {
    list.cleanup();
    cfg?.cleanup();
  }
}

async function main(argv: string[]): Promise<number> {
  let versions: string[] = [...VERSIONS];
  let seeds: [number, number] = [1, 20];
  let jobs = 2;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--versions') versions = argv[++i]!.split(',');
    else if (argv[i] === '--seeds') {
      const m = /^(\d+)(?:-(\d+))?$/.exec(argv[++i] ?? '');
      if (!m) throw new Error('--seeds A-B');
      seeds = [Number(m[1]), Number(m[2] ?? m[1])];
    } else if (argv[i] === '--jobs') jobs = Number(argv[++i]);
    else throw new Error(`unknown flag ${argv[i]}`);
  }
  const tasks: { version: string; seed: number }[] = [];
  for (const version of versions) for (let s = seeds[0]; s <= seeds[1]; s++) tasks.push({ version, seed: s });
  const t0 = Date.now();
  const results = await pool(tasks, jobs, async (t) => {
    const r = await smokeNftSeed(t.version, t.seed);
    for (const p of r.problems) console.log(`v${t.version} seed ${t.seed}: ${p}`);
    return r;
  });
  let bad = 0;
  for (const v of versions) {
    const rs = results.filter((r) => r.version === v);
    const ok = rs.filter((r) => r.problems.length === 0).length;
    bad += rs.length - ok;
    const sum = (f: (r: NftSmoke) => number) => rs.reduce((a, r) => a + f(r), 0);
    console.log(`nft-smoke v${v}: ${ok}/${rs.length} seeds pass; ${sum((r) => r.serviceChains)} service chains, ${sum((r) => r.endpointChains)} endpoint chains, ${sum((r) => r.numgen)} numgen rules`);
  }
  console.log(`nft-smoke: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return bad === 0 ? 0 : 1;
}

if (process.argv[1]?.endsWith('nft-smoke.js')) {
  main(process.argv.slice(2)).then(
    (c) => process.exit(c),
    (e) => {
      console.error(e);
      process.exit(3);
    },
  );
}


/**
 * npm run oracle -- [--versions 1.34,1.35,1.36,1.37] [--modes iptables,ipvs,nftables] [--seeds A-B]
 *                   [--jobs N] [--no-shrink] [--cases DIR | --no-cases] [--validation] [--endpointslices]
 *
 * Compiles each generated seed with kpc (node bin/kpc.js compile …) and with the oracle
 * (kube-proxy's own code, test/oracle/build.sh), prints one line per disagreement and last
 * `oracle: N/M agree`; exit 0 only when N = M. A disagreement is shrunk and written as a golden
 * case under fixtures/oracle/<version>-<mode>-<seed>/ (expected = the oracle's output).
 * kpc has no --kube-proxy-version yet (it is passed when `kpc compile --help` lists it): every
 * release is compared with kpc's current (v1.34) output.
 * --modes nftables: both tables as the kernel holds them (runner/nft.ts). While kpc refuses
 * --proxy-mode nftables, those comparisons are reported as "kpc unsupported" (not counted as
 * agreements or disagreements; the oracle still runs alone, and its exit codes are shown).
 * Exit 0 only when every comparison agrees and no release/mode was "kpc unsupported".
 * --validation: mutated inputs, kpc validate vs the API server's validation (validation.ts).
 * --endpointslices: clusters with Pods, kpc's derived EndpointSlices vs the EndpointSlice
 * controller's (endpointslices.ts); a shrunk disagreement goes to fixtures/endpointslices/.
 */

import { existsSync } from 'node:fs';
import { checkSeed, DEFAULT_CASE_ROOT, kpcHasVersionFlag, shrink, writeCase } from './campaign.js';
import { ALL_MODES, kpcBin, MODES, type Mode, oracleBinary, pool, runProcess, VERSIONS } from './common.js';
import { runValidationCampaign } from './validation.js';
import { runEndpointSlicesCampaign } from './endpointslices.js';

interface Args {
  versions: string[];
  modes: Mode[];
  seeds: [number, number];
  jobs: number;
  shrink: boolean;
  cases: string | undefined;
  validation: boolean;
  endpointslices: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { versions: [...VERSIONS], modes: [...MODES], seeds: [1, 50], jobs: 2, shrink: true, cases: DEFAULT_CASE_ROOT, validation: false, endpointslices: false };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i]!;
    const v = () => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${f} needs a value`);
      return x;
    };
    if (f === '--versions') a.versions = v().split(',').map((s) => s.replace(/^v/, ''));
    else if (f === '--modes') a.modes = v().split(',') as Mode[];
    else if (f === '--seeds') {
      const m = /^(\d+)(?:-(\d+))?$/.exec(v());
      if (!m) throw new Error('--seeds A-B');
      a.seeds = [Number(m[1]), Number(m[2] ?? m[1])];
    } else if (f === '--jobs') a.jobs = Number(v());
    else if (f === '--no-shrink') a.shrink = false;
    else if (f === '--cases') a.cases = v();
    else if (f === '--no-cases') a.cases = undefined;
    else if (f === '--validation') a.validation = true;
    else if (f === '--endpointslices') a.endpointslices = true;
    else throw new Error(`unknown flag ${f}`);
  }
  for (const m of a.modes) if (!(ALL_MODES as readonly string[]).includes(m)) throw new Error(`--modes: ${m}`);
  return a;
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  for (const v of args.versions) {
    if (!existsSync(oracleBinary(v))) {
      console.error(`oracle: ${oracleBinary(v)} is missing: run test/oracle/build.sh ${v}`);
      return 2;
    }
  }
  if (!existsSync(kpcBin())) {
    console.error('oracle: bin/kpc.js is missing: npm run build');
    return 2;
  }
  if (args.validation) return runValidationCampaign(args.versions, args.seeds, args.jobs);
  if (args.endpointslices) return runEndpointSlicesCampaign(args.versions, args.seeds, args.jobs, args.shrink, args.cases !== undefined);
  const t0 = Date.now();
  if (!(await kpcHasVersionFlag())) console.log('oracle: kpc has no --kube-proxy-version: every release is compared with kpc\'s current output (v1.34)');
  const oracleVersions = new Map<string, string>();
  for (const v of args.versions) oracleVersions.set(v, (await runProcess(oracleBinary(v), ['version'])).stdout.trim().split(' ').pop()!);
  const tasks: { version: string; mode: Mode; seed: number }[] = [];
  for (let seed = args.seeds[0]; seed <= args.seeds[1]; seed++) for (const mode of args.modes) for (const version of args.versions) tasks.push({ version, mode, seed });
  // A long campaign says where it is: every 400 comparisons, the tally so far (on stderr).
  let done = 0;
  const tally = new Map<string, { n: number; agree: number }>();
  const verdicts = await pool(tasks, args.jobs, async (t) => {
    const r = await checkSeed(t.version, t.mode, t.seed);
    if (!r.agree && !r.kpcUnsupported) console.log(`disagree v${t.version} ${t.mode} seed ${t.seed}: ${r.detail}`);
    const e = tally.get(`v${t.version} ${t.mode}`) ?? { n: 0, agree: 0 };
    e.n++;
    if (r.agree) e.agree++;
    tally.set(`v${t.version} ${t.mode}`, e);
    if (++done % 400 === 0) console.error(`oracle: ${done}/${tasks.length} compared, up to seed ${t.seed} (${((Date.now() - t0) / 1000).toFixed(0)} s): ${[...tally].map(([k, x]) => `${k} ${x.agree}/${x.n}`).join(', ')}`);
    return r;
  });
  const per = new Map<string, { n: number; agree: number; rejected: number; unsupported: number; oracleCodes: Map<number, number>; why?: string }>();
  for (const v of verdicts) {
    const k = `v${v.version} ${v.mode}`;
    const e = per.get(k) ?? { n: 0, agree: 0, rejected: 0, unsupported: 0, oracleCodes: new Map<number, number>() };
    e.n++;
    if (v.agree) e.agree++;
    if (v.bothRejected) e.rejected++;
    if (v.kpcUnsupported) {
      e.unsupported++;
      e.why ??= v.detail.replace(/; oracle exit \d+$/, '');
    }
    e.oracleCodes.set(v.oracle.code, (e.oracleCodes.get(v.oracle.code) ?? 0) + 1);
    per.set(k, e);
  }
  const wrote: string[] = [];
  if (args.shrink) {
    // One shrink per kind of disagreement (release, mode, and the first difference with its
    // line number left out); the other seeds of that kind are listed with it.
    const kinds = new Map<string, number[]>();
    const firsts: typeof verdicts = [];
    for (const v of verdicts.filter((x) => !x.agree && !x.kpcUnsupported)) {
      const kind = `${v.version} ${v.mode} ${v.detail.replace(/line \d+/, 'line N')}`;
      const seen = kinds.get(kind);
      if (seen) seen.push(v.seed);
      else {
        kinds.set(kind, [v.seed]);
        firsts.push(v);
      }
    }
    for (const [kind, seeds] of kinds) console.log(`kind (${seeds.length} seeds: ${seeds.slice(0, 12).join(',')}${seeds.length > 12 ? ',…' : ''}): v${kind.slice(0, 300)}`);
    for (const v of firsts) {
      const s = await shrink(v.version, v.mode, v.flags, v.items, v.config);
      const line = `shrunk v${v.version} ${v.mode} seed ${v.seed}: ${s.items.length} objects, ${s.flags.length} flag words: ${s.detail}`;
      console.log(line);
      if (args.cases) wrote.push(writeCase(args.cases, v.version, v.mode, v.seed, s, oracleVersions.get(v.version)!));
    }
  }
  for (const w of wrote) console.log(`wrote ${w}`);
  const codes = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]).map(([c, n]) => `exit ${c}: ${n}`).join(', ');
  for (const [k, e] of per) {
    if (e.unsupported === e.n) console.log(`oracle: ${k}: kpc unsupported on all ${e.n} seeds: ${e.why} — nothing compared; the oracle alone: ${codes(e.oracleCodes)}`);
    else console.log(`oracle: ${k}: ${e.agree}/${e.n - e.unsupported} agree${e.rejected ? ` (${e.rejected} of them: both refused the input)` : ''}${e.unsupported ? `; ${e.unsupported} more: kpc unsupported (${e.why})` : ''}`);
  }
  const compared = verdicts.filter((v) => !v.kpcUnsupported);
  const agree = compared.filter((v) => v.agree).length;
  const unsupported = verdicts.length - compared.length;
  console.log(`oracle: ${((Date.now() - t0) / 1000).toFixed(1)} s for ${verdicts.length} comparisons`);
  console.log(`oracle: ${agree}/${compared.length} agree${unsupported ? `; ${unsupported} not compared: kpc unsupported` : ''}`);
  return agree === compared.length && unsupported === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (c) => process.exit(c),
  (e) => {
    console.error(`oracle: ${(e as Error).stack ?? e}`);
    process.exit(3);
  },
);

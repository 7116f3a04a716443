/**
 * kpc dns's zone files in a real DNS server: nsd (Debian's package) loads each golden case's
 * zones (`kpc dns -o DIR`) and serves them on 127.0.0.1:53 inside a network namespace; dig asks
 * it, and the answers are compared with
 *   1. the hand-derived expected.zone, read as an authoritative server answers from it: every
 *      owner name x A, AAAA, SRV, CNAME, PTR, TXT, the empty non-terminals, the case's absent names;
 *   2. kpc's model of CoreDNS (src/dns/coredns.ts, written apart from the zone builder) for the
 *      same questions: equal, except where a zone file cannot say what CoreDNS computes - those
 *      differences (src/dns/README.md) are asserted one by one, so the list cannot go stale;
 *   3. `kpc dns resolve` for the case's resolve entries: the search list is walked here, each
 *      candidate asked of nsd, and kpc's steps, rcodes and answers must match that walk.
 * Root only (a namespace per case); skipped with a warning otherwise, failed under CI=true.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../../src/dns/coredns.js';
import type { DnsCluster } from '../../src/dns/model.js';
import { rrText } from '../../src/dns/rr.js';
import type { RRType } from '../../src/dns/rr.js';
import { runKpc } from '../helpers/run-kpc.js';
import { createNetns, deleteNetns, describeLab } from '../netns/lab.js';
import {
  authoritativeAnswer,
  caseArgv,
  clusterFor,
  emptyNonTerminals,
  expectedZones,
  loadDnsCases,
  reverseOf,
  searchCandidates,
  startNsd,
  zoneOf,
  type Answer,
  type ExpectedZone,
  type NsdServer,
} from './helpers.js';

const TYPES: RRType[] = ['A', 'AAAA', 'SRV', 'CNAME', 'PTR', 'TXT'];
const cases = loadDnsCases();
const tmp = mkdtempSync(join(tmpdir(), 'kpc-dns-server-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function modelAnswer(c: DnsCluster, name: string, type: RRType): Answer {
  const s = serve(c, name, type);
  return { rcode: s.rcode, answer: s.answer.map(rrText).sort() };
}

const isReverseZone = (z: ExpectedZone) => z.origin.endsWith('in-addr.arpa.') || z.origin.endsWith('ip6.arpa.');

/** The differences the README lists, by key; each must show up in some case (see the last test). */
const DIFFERENCES = {
  txt: 'CoreDNS answers TXT NXDOMAIN at every name but dns-version.<zone> and names with records of another type, which get NODATA (coredns/coredns#5737): so NXDOMAIN at the apex, a namespace, an empty non-terminal or a reverse name; a zone file answers NODATA where a name exists, and the CNAME at an ExternalName',
  reverseType: 'CoreDNS answers NXDOMAIN for any type but PTR in the reverse zones, and for reverse names that are not a whole address (parseRequest fails); a zone file answers NODATA where a name or a name below it exists',
  ent: 'an empty non-terminal (_tcp.<svc>...): NODATA from a zone file, NXDOMAIN from CoreDNS; only <ns>.svc.<zone> and svc.<zone> are NODATA in both',
  special: 'dns-version.<zone> (any type but TXT) and ns.dns.<zone> (PTR) fail parseRequest in CoreDNS: NXDOMAIN; a zone file answers NODATA',
  cnameType: 'CoreDNS answers SRV and PTR at an ExternalName name with NODATA (SRV drops CNAME targets; PTR needs an address); a zone file returns the CNAME',
  danglingCname: 'CoreDNS drops an in-zone CNAME whose target has no records of the type asked (NODATA); a zone file returns the CNAME (with NXDOMAIN when the target does not exist)',
} as const;
type DifferenceKey = keyof typeof DIFFERENCES;
const seenDifferences = new Map<DifferenceKey, number>();

/**
 * Where CoreDNS answers what a zone file cannot: the answer the model must give instead of the
 * server's, and which listed difference it is; undefined where the two must agree.
 */
function knownDifference(zones: readonly ExpectedZone[], cluster: DnsCluster, name: string, type: RRType, server: Answer): { expect: Answer; key: DifferenceKey } | undefined {
  const z = zoneOf(zones, name)!;
  const zone = cluster.options.zone;
  const at = z.records.filter((r) => r.name === name);
  const ent = at.length === 0 && z.records.some((r) => r.name.endsWith(`.${name}`));
  const NX: Answer = { rcode: 'NXDOMAIN', answer: [] };
  const NODATA: Answer = { rcode: 'NOERROR', answer: [] };
  const differs = (expect: Answer, key: DifferenceKey) => (JSON.stringify(expect) === JSON.stringify(server) ? undefined : { expect, key });
  if (type === 'TXT') {
    if (name === `dns-version.${zone}`) return undefined;
    const hasRecords = !isReverseZone(z) && at.length > 0 && name !== zone && name !== `ns.dns.${zone}`;
    return differs(hasRecords ? NODATA : NX, 'txt');
  }
  if (isReverseZone(z)) {
    if (type === 'PTR' && !ent) return undefined;
    return differs(NX, 'reverseType');
  }
  if (ent) {
    const nsName = name.endsWith(`.svc.${zone}`) && name.split('.').length === zone.split('.').length + 2;
    return name === `svc.${zone}` || nsName ? undefined : differs(NX, 'ent');
  }
  if (name === `dns-version.${zone}`) return differs(NX, 'special');
  if (name === `ns.dns.${zone}` && type === 'PTR') return differs(NX, 'special');
  const cname = at.find((r) => r.type === 'CNAME');
  if (cname) {
    if (type === 'SRV' || type === 'PTR') return differs(NODATA, 'cnameType');
    if ((type === 'A' || type === 'AAAA') && server.answer.length === 1 && cname.data.endsWith(`.${zone}`)) return differs(NODATA, 'danglingCname');
  }
  return undefined;
}

describeLab('kpc dns zone files served by nsd', { commands: ['nsd', 'nsd-checkzone', 'dig'] }, () => {
  for (const c of cases) {
    describe(c.name, () => {
      let ns: string | undefined;
      let server: NsdServer | undefined;
      let cluster: DnsCluster;
      const zones = expectedZones(c);
      beforeAll(async () => {
        const dir = join(tmp, c.name);
        const run = await runKpc(caseArgv(c, ['-o', dir]));
        if (run.code !== 0) throw new Error(`kpc dns -o failed: ${run.stderr}`);
        ns = await createNetns('dns');
        server = await startNsd(ns, dir);
        cluster = await clusterFor(c);
      }, 60_000);
      afterAll(async () => {
        await server?.stop();
        if (ns) await deleteNetns(ns);
      });

      it('nsd answers every name of expected.zone, each type, as the expected zone says', () => {
        const qs: { name: string; type: string }[] = [];
        for (const z of zones) {
          const names = [...new Set(z.records.map((r) => r.name)), ...emptyNonTerminals(z)];
          for (const name of names) for (const type of TYPES) qs.push({ name, type });
        }
        for (const name of c.absent) for (const type of TYPES) qs.push({ name, type });
        const got = server!.query(qs);
        const bad: string[] = [];
        qs.forEach((q, i) => {
          const want = authoritativeAnswer(zones, q.name, q.type)!;
          if (JSON.stringify(got[i]) !== JSON.stringify(want)) bad.push(`${q.name} ${q.type}: nsd ${JSON.stringify(got[i])}, expected ${JSON.stringify(want)}`);
        });
        for (const name of c.absent) expect(authoritativeAnswer(zones, name, 'A')!.rcode, name).toBe('NXDOMAIN');
        expect(bad, bad.join('\n')).toEqual([]);
        expect(qs.length).toBeGreaterThan(20);
      });

      it("kpc's CoreDNS model answers as nsd does, except for the listed differences", () => {
        const qs: { name: string; type: RRType }[] = [];
        for (const z of zones) {
          const names = [...new Set(z.records.map((r) => r.name)), ...emptyNonTerminals(z)].filter((n) => !(isReverseZone(z) && n === z.origin));
          for (const name of names) for (const type of TYPES) qs.push({ name, type });
        }
        for (const name of c.absent) for (const type of TYPES) qs.push({ name, type });
        const got = server!.query(qs);
        const bad: string[] = [];
        let differences = 0;
        qs.forEach((q, i) => {
          const model = modelAnswer(cluster, q.name, q.type);
          const known = knownDifference(zones, cluster, q.name, q.type, got[i]!);
          if (known) {
            differences++;
            seenDifferences.set(known.key, (seenDifferences.get(known.key) ?? 0) + 1);
            if (JSON.stringify(model) !== JSON.stringify(known.expect)) bad.push(`${q.name} ${q.type}: model ${JSON.stringify(model)}, nsd ${JSON.stringify(got[i])}; expected ${JSON.stringify(known.expect)} (${DIFFERENCES[known.key]})`);
          } else if (JSON.stringify(model) !== JSON.stringify(got[i])) bad.push(`${q.name} ${q.type}: model ${JSON.stringify(model)}, nsd ${JSON.stringify(got[i])}`);
        });
        expect(bad, bad.join('\n')).toEqual([]);
        expect(qs.length - differences).toBeGreaterThan(20);
      });

      it('kpc dns resolve walks the search list as a Pod does, and its answers are the server\'s', async () => {
        const zone = cluster.options.zone;
        for (const r of c.resolve.filter((x) => !x.oracleOnly)) {
          const run = await runKpc(['dns', 'resolve', r.name, r.type, '--from-namespace', r.from, ...caseArgv(c).slice(1), '-o', 'json']);
          expect(run.code, run.stderr).toBe(0);
          const out = JSON.parse(run.stdout) as { outcome: string; answeredBy?: number; steps: { name: string; rcode: string | null; answer: { name: string; ttl: number; type: string; data: string }[]; forwarded?: unknown[] }[] };
          const label = `${r.name} ${r.type} from ${r.from}`;
          expect(out.outcome, label).toBe(r.outcome);
          if (r.answeredBy !== undefined) expect(out.answeredBy, label).toBe(r.answeredBy);
          // The walk, done here against the server.
          const asked = r.type === 'PTR' && reverseOf(r.name) ? [reverseOf(r.name)!] : searchCandidates(r.name, r.from, zone);
          const walk: { name: string; served?: Answer }[] = [];
          for (const name of asked) {
            const served = zoneOf(zones, name) ? server!.query([{ name, type: r.type }])[0] : undefined;
            walk.push({ name, ...(served ? { served } : {}) });
            if (served && served.rcode === 'NOERROR' && served.answer.length > 0) break;
          }
          expect(out.steps.map((s) => s.name), label).toEqual(walk.map((w) => w.name));
          out.steps.forEach((s, i) => {
            const w = walk[i]!;
            if (!w.served) {
              expect(s.forwarded, `${label}: ${s.name} is outside the served zones`).toBeDefined();
              return;
            }
            const answer = s.answer.map((a) => `${a.name} ${a.ttl} IN ${a.type} ${a.data}`).sort();
            expect({ rcode: s.rcode, answer }, `${label}: step ${i + 1} ${s.name}`).toEqual(w.served);
          });
        }
      });
    });
  }
  it('every difference the README lists between CoreDNS and a zone file shows up in some case', () => {
    const missing = (Object.keys(DIFFERENCES) as DifferenceKey[]).filter((k) => !seenDifferences.has(k));
    expect(missing).toEqual([]);
  });
});

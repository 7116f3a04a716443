/**
 * The reference itself: CoreDNS (v1.15.0, the kubernetes plugin only: test/dns/coredns/main.go,
 * built from the Go module proxy and cached) reads each golden case's objects from a fake API
 * server (test/dns/coredns/apiserver.mjs) and answers every question the server test asks nsd:
 * each name of the expected zones, their empty non-terminals and the case's absent names, x A,
 * AAAA, SRV, CNAME, PTR, TXT. kpc's model of CoreDNS (src/dns/coredns.ts) must give the same
 * rcode and the same answer records for every one, and `kpc dns resolve`'s steps the answers
 * CoreDNS gives for them.
 *
 * What CoreDNS gets: the case's manifests with the API server's defaults that CoreDNS reads
 * (Service type and port protocol, clusterIPs, EndpointSlice port protocol and name), and a
 * Namespace for each namespace they name. Its own address (the plugin's localIPs: the
 * namespace's non-loopback addresses): --dns-pod-ip when the case gives one (added to lo, so its
 * NS records can be compared), else none (then NS and ns.dns.<zone>, which kpc cannot know, are
 * not compared). Not compared either: SOA (CoreDNS's
 * serial is a time). Cases with legacy Endpoints are not run: their slices come from the
 * mirroring controller, which this fake API server does not run.
 *
 * Root (a network namespace per case) and Go are needed; skipped with a warning otherwise, and
 * failed under CI=true (as is a failed build).
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { serve } from '../../src/dns/coredns.js';
import type { DnsCluster } from '../../src/dns/model.js';
import { rrText, type RRType } from '../../src/dns/rr.js';
import { runKpc } from '../helpers/run-kpc.js';
import { createNetns, deleteNetns, describeLab, exec, findCommand, isCI, labRequirements } from '../netns/lab.js';
import { buildCoreDNS } from './coredns/build.mjs';
import { caseArgv, clusterFor, emptyNonTerminals, expectedZones, flagValue, loadDnsCases, parseDig, type Answer, type DnsCase } from './helpers.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SRC = join(HERE, 'coredns');
const TYPES: RRType[] = ['A', 'AAAA', 'SRV', 'CNAME', 'PTR', 'TXT'];
const API_PORT = 8001;
const tmp = mkdtempSync(join(tmpdir(), 'kpc-dns-coredns-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The case's manifests as the API server would hand them to CoreDNS. */
function apiObjects(c: DnsCase): { services: unknown[]; endpointslices: unknown[]; namespaces: unknown[]; legacy: boolean } {
  const services: Record<string, any>[] = [];
  const endpointslices: Record<string, any>[] = [];
  const namespaces = new Set<string>();
  let legacy = false;
  const dir = join(c.dir, 'input');
  for (const f of readdirSync(dir).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8')) as unknown as { toJS(): any }[]) {
      const o = doc.toJS();
      if (!o) continue;
      o.metadata.namespace ??= 'default';
      o.metadata.resourceVersion = '1';
      o.metadata.uid = `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
      namespaces.add(o.metadata.namespace);
      if (o.kind === 'Service') {
        o.spec.type ??= 'ClusterIP';
        for (const p of o.spec.ports ?? []) p.protocol ??= 'TCP';
        if (o.spec.type !== 'ExternalName') o.spec.clusterIPs ??= [o.spec.clusterIP];
        services.push(o);
      } else if (o.kind === 'EndpointSlice') {
        for (const p of o.ports ?? []) {
          p.protocol ??= 'TCP';
          p.name ??= '';
        }
        endpointslices.push(o);
      } else if (o.kind === 'Endpoints') legacy = true;
    }
  }
  return {
    services,
    endpointslices,
    namespaces: [...namespaces].map((n) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n, resourceVersion: '1', uid: `Namespace/${n}` } })),
    legacy,
  };
}

function start(argv: string[]): { child: ChildProcess; log: () => string } {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  return { child, log: () => log };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

// Only where the lab can run (root, network namespaces): elsewhere describeLab skips or fails.
const LAB_OK = labRequirements({ commands: ['dig'] }).ok;
const built: { path?: string; why?: string } = LAB_OK ? buildCoreDNS() : { why: 'the netns lab cannot run here' };
if (LAB_OK && !built.path) {
  if (isCI()) {
    describe('kpc dns against CoreDNS itself', () => {
      it('builds CoreDNS', () => {
        throw new Error(`CI=true but CoreDNS cannot be built: ${built.why}`);
      });
    });
  } else console.warn(`\n*** SKIPPED "kpc dns against CoreDNS itself": ${built.why} ***\n`);
}

describeLab('kpc dns against CoreDNS itself', { commands: ['dig'] }, () => {
  for (const c of loadDnsCases()) {
    const objects = apiObjects(c);
    describe(c.name, () => {
      if (objects.legacy) {
        it.skip(`not run: legacy Endpoints become slices through the mirroring controller, which the fake API server does not run`, () => {});
        return;
      }
      let ns: string | undefined;
      let api: ChildProcess | undefined;
      let dns: ChildProcess | undefined;
      let cluster: DnsCluster;
      const zones = expectedZones(c);
      const podIP = flagValue(c.args, '--dns-pod-ip');
      const at = '127.0.0.1';
      const ask = (qs: readonly { name: string; type: string }[]): Answer[] => {
        const file = join(tmp, `${c.name}.queries`);
        writeFileSync(file, qs.map((q) => `${q.name} ${q.type}`).join('\n') + '\n');
        const r = spawnSync(findCommand('ip')!, ['netns', 'exec', ns!, findCommand('dig')!, `@${at}`, '+norec', '+tries=1', '+time=3', '+noall', '+question', '+answer', '+comments', '-f', file], { encoding: 'utf8' });
        const parsed = parseDig(r.stdout);
        if (parsed.length !== qs.length) throw new Error(`dig answered ${parsed.length} of ${qs.length}:\n${r.stdout}${r.stderr}`);
        return parsed.map((p) => ({ rcode: p.rcode, answer: p.answer }));
      };

      beforeAll(async () => {
        if (!built.path) return;
        cluster = await clusterFor(c);
        const zone = cluster.options.zone.slice(0, -1);
        const dir = join(tmp, c.name);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'objects.json'), JSON.stringify(objects));
        writeFileSync(
          join(dir, 'Corefile'),
          [`.:53 {`, `    kubernetes ${zone} in-addr.arpa ip6.arpa {`, `        endpoint http://127.0.0.1:${API_PORT}`, `        pods insecure`, `        ttl ${cluster.options.ttl}`, `    }`, `}`, ''].join('\n'),
        );
        ns = await createNetns('dnscore');
        if (podIP) {
          const add = await exec(['ip', '-n', ns, 'addr', 'add', `${podIP}/32`, 'dev', 'lo']);
          if (add.code !== 0) throw new Error(`ip addr add ${podIP}: ${add.stderr}`);
        }
        const a = start([findCommand('ip')!, 'netns', 'exec', ns, process.execPath, join(SRC, 'apiserver.mjs'), join(dir, 'objects.json'), String(API_PORT)]);
        api = a.child;
        for (let i = 0; !a.log().includes('listening'); i++) {
          if (i > 100 || api.exitCode !== null) throw new Error(`fake API server did not start: ${a.log()}`);
          await sleep(50);
        }
        const d = start([findCommand('ip')!, 'netns', 'exec', ns, built.path, '-conf', join(dir, 'Corefile')]);
        dns = d.child;
        // CoreDNS answers once its informers have synced.
        for (let i = 0; ; i++) {
          let r: Answer | undefined;
          try {
            r = ask([{ name: `dns-version.${zone}.`, type: 'TXT' }])[0];
          } catch {
            // not listening yet
          }
          if (r && r.answer.length > 0) break;
          if (i > 100 || dns.exitCode !== null) throw new Error(`CoreDNS did not start: ${d.log()}`);
          await sleep(100);
        }
      }, 60_000);
      afterAll(async () => {
        await stop(dns);
        await stop(api);
        if (ns) await deleteNetns(ns);
      });

      it("CoreDNS answers every question as kpc's model of it does", (ctx) => {
        if (!built.path) return ctx.skip();
        const zone = cluster.options.zone;
        const qs: { name: string; type: RRType }[] = [];
        for (const z of zones) {
          for (const name of [...new Set(z.records.map((r) => r.name)), ...emptyNonTerminals(z)]) {
            if (name === `ns.dns.${zone}` && !podIP) continue;
            for (const type of TYPES) qs.push({ name, type });
          }
        }
        for (const name of c.absent) for (const type of TYPES) qs.push({ name, type });
        if (podIP) qs.push({ name: zone, type: 'NS' as RRType });
        const got = ask(qs);
        const bad: string[] = [];
        qs.forEach((q, i) => {
          const s = serve(cluster, q.name, q.type);
          const model: Answer = { rcode: s.rcode, answer: s.answer.map(rrText).sort() };
          if (JSON.stringify(model) !== JSON.stringify(got[i])) bad.push(`${q.name} ${q.type}: CoreDNS ${JSON.stringify(got[i])}, kpc ${JSON.stringify(model)}`);
        });
        expect(bad, bad.join('\n')).toEqual([]);
        expect(qs.length).toBeGreaterThan(30);
      });

      it('kpc dns resolve: every step inside the cluster zones gets the answer CoreDNS gives', async (ctx) => {
        if (!built.path) return ctx.skip();
        for (const r of c.resolve) {
          const run = await runKpc(['dns', 'resolve', r.name, r.type, '--from-namespace', r.from, ...caseArgv(c).slice(1), '-o', 'json']);
          expect(run.code, run.stderr).toBe(0);
          const out = JSON.parse(run.stdout) as { outcome: string; answeredBy?: number; steps: { name: string; type: string; rcode: string | null; answer: { name: string; ttl: number; type: string; data: string }[] }[] };
          expect(out.outcome, `${r.name} ${r.type} from ${r.from}`).toBe(r.outcome);
          if (r.answeredBy !== undefined) expect(out.answeredBy, `${r.name} ${r.type} from ${r.from}`).toBe(r.answeredBy);
          const inZone = out.steps.filter((s) => s.rcode !== null);
          const got = ask(inZone.map((s) => ({ name: s.name, type: s.type })));
          inZone.forEach((s, i) => {
            const answer = s.answer.map((a) => `${a.name} ${a.ttl} IN ${a.type} ${a.data}`).sort();
            expect({ rcode: s.rcode, answer }, `${r.name} ${r.type} from ${r.from}: ${s.name}`).toEqual(got[i]);
          });
        }
      });
    });
  }
});

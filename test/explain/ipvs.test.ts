/**
 * `kpc explain --proxy-mode ipvs`: for every Service of every kube-proxy IPVS golden
 * (fixtures/kube-proxy/ipvs, expected/ from kube-proxy's own unit tests), the explanation lists
 * every virtual server and real server line of kube-proxy's expected ipvs.rules whose address
 * is one of the Service's (cluster IP, external IPs, load-balancer ingress IPs : port, or any
 * address : its node port), and every ipset entry of kube-proxy's expected ipset.rules keyed by
 * them. Expectations come from kube-proxy's files, not from kpc.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';

const cases = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'ipvs'), { bundles: true }).filter(
  (c) => c.exit === 0 && existsSync(join(c.dir, 'expected', 'ipvs.rules')) && existsSync(join(c.dir, 'input', 'services.yaml')),
);

type Obj = Record<string, any>;
let total = 0;

describe('kpc explain, ipvs', () => {
  it('finds the cases', () => expect(cases.length).toBeGreaterThan(10));
  for (const c of cases) {
    it(c.name, async () => {
      const ipvs = readFileSync(join(c.dir, 'expected', 'ipvs.rules'), 'utf8').split('\n').filter((l) => /^-[Aa] /.test(l));
      const ipset = existsSync(join(c.dir, 'expected', 'ipset.rules')) ? readFileSync(join(c.dir, 'expected', 'ipset.rules'), 'utf8').split('\n').filter((l) => l.startsWith('add ')) : [];
      const services = parseAllDocuments(readFileSync(join(c.dir, 'input', 'services.yaml'), 'utf8')).map((d) => d.toJSON() as Obj).filter((o) => o?.kind === 'Service');
      const argv = caseArgv(c).filter((a, i, all) => a !== '-o' && all[i - 1] !== '-o');
      let checked = 0;
      for (const svc of services) {
        const ref = `${svc.metadata.namespace ?? 'default'}/${svc.metadata.name}`;
        const r = await runKpc(['explain', ref, ...argv.slice(1)]);
        if (r.code !== 0) continue; // not in kube-proxy's view (headless, other family, …)
        const got = r.stdout.split('\n').map((l) => l.trim().replace(/^(ipvs|ipset)\s+/, ''));
        const ips: string[] = [...(svc.spec.clusterIPs ?? [svc.spec.clusterIP]), ...(svc.spec.externalIPs ?? []), ...((svc.status?.loadBalancer?.ingress ?? []) as Obj[]).map((i) => i.ip).filter(Boolean)];
        const hp = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
        for (const p of svc.spec.ports ?? []) {
          const addrs = ips.map((ip) => hp(ip, p.port));
          const wantVs = ipvs.filter((l) => {
            const a = l.split(' ')[2]!;
            return addrs.includes(a) || (p.nodePort && a.endsWith(`:${p.nodePort}`) && !ips.some((ip) => a === hp(ip, p.nodePort)));
          });
          const proto = (p.protocol ?? 'TCP').toLowerCase();
          const wantSet = ipset.filter((l) => {
            const e = l.split(' ')[2] ?? '';
            return ips.some((ip) => e === `${ip},${proto}:${p.port}` || e.startsWith(`${ip},${proto}:${p.port},`)) || (p.nodePort && e === String(p.nodePort) && l.includes(`-${proto.toUpperCase()} `));
          });
          for (const w of [...wantVs, ...wantSet]) {
            expect(got, `${ref}: ${w}\n${r.stdout}`).toContain(w);
            checked++;
          }
        }
      }
      total += checked;
    });
  }
  it('checked lines from kube-proxy\'s files', () => expect(total).toBeGreaterThan(50));
});

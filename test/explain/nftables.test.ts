/**
 * `kpc explain --proxy-mode nftables`: for every Service of kube-proxy's TestOverallNFTablesRules
 * (v1.37 and v1.34), the explanation lists every map/set element and every rule of kube-proxy's
 * own expected ruleset (expected.dump) that belongs to the Service — an element whose verdict
 * goes to one of its chains or whose comment names it, a rule of one of its chains — and
 * nothing of another Service. Expectations come from kube-proxy's dump, not from kpc.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';

const cases = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true }).filter((c) => /^v1\.3[47]\/TestOverallNFTablesRules$/.test(c.name));

describe('kpc explain, nftables', () => {
  it('finds the cases', () => expect(cases.length).toBe(2));
  for (const c of cases) {
    for (const svc of ['ns1/svc1', 'ns2/svc2', 'ns3/svc3', 'ns4/svc4', 'ns5/svc5']) {
      it(`${c.name} ${svc}`, async () => {
        const argv = caseArgv(c);
        const r = await runKpc(['explain', svc, ...argv.slice(1)]);
        expect(r.code, r.stderr).toBe(0);
        const owned = (name: string) => name.includes(`-${svc}/`);
        const dump = c.expectedDump!.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('add '));
        const wantElements = dump
          .filter((l) => l.startsWith('add element '))
          .filter((l) => {
            const m = /: (?:goto|jump) (\S+) \}$/.exec(l);
            return (m && owned(m[1]!)) || l.includes(`comment "${svc}:`);
          })
          .map((l) => l.replace(/^add element ip6? kube-proxy /, 'element '));
        const wantRules = dump.filter((l) => l.startsWith('add rule ') && owned(l.split(' ')[4]!)).map((l) => l.replace(/^add rule ip6? kube-proxy /, 'rule '));
        expect(wantElements.length + wantRules.length).toBeGreaterThan(0);
        const got = r.stdout.split('\n').map((l) => l.trim().replace(/^kube-proxy\s+/, ''));
        for (const w of [...wantElements, ...wantRules]) expect(got, `${svc}: ${w}`).toContain(w);
        // nothing of another Service
        for (const l of got.filter((x) => x.startsWith('rule ') || x.startsWith('element '))) {
          const other = /-(ns\d\/svc\d)\//.exec(l);
          if (other) expect(other[1], l).toBe(svc);
        }
      });
    }
  }
});

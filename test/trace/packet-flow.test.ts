/**
 * kube-proxy's packet-flow tests (pkg/proxy/iptables/proxier_test.go, the tests that call
 * runPacketFlowTests), ported as fixtures/packet-flow/: the same manifests and settings are
 * compiled by kpc in-process, and each flow is traced through kpc's own output. The endpoint
 * set, the verdict and the masquerade flag must be what kube-proxy's test expects.
 *
 * Golden human views: a flow with `golden: NAME` must render exactly as
 * fixtures/packet-flow/<Test>/golden/NAME.txt (UPDATE_GOLDEN=1 rewrites them).
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderTrace, traceRules, type TraceResult } from '../../src/trace/index.js';
import { runKpc } from '../helpers/run-kpc.js';
import { caseArgv, expectationOf, loadFlowFixtures, splitHostPort, type Flow, type FlowCase, type FlowFixture } from './flows.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';
const fixtures = loadFlowFixtures();

/**
 * Flows kpc is known to get wrong, with why. The test fails when a listed flow starts passing,
 * so the list cannot go stale. Key: "<Test>/<case>/<flow>".
 */
const KNOWN_FAILURES: Record<string, string> = {};

const rulesCache = new Map<string, Promise<string>>();

function rulesFor(f: FlowFixture, c: FlowCase): Promise<string> {
  const key = `${f.dir}\u0000${c.name}`;
  let p = rulesCache.get(key);
  if (!p) {
    p = (async () => {
      if (f.rules) return readFileSync(join(f.dir, f.rules), 'utf8');
      const run = await runKpc(caseArgv(f, c));
      if (run.code !== 0) throw new Error(`kpc ${caseArgv(f, c).join(' ')} exited ${run.code}:\n${run.stderr}`);
      return run.stdout;
    })();
    rulesCache.set(key, p);
  }
  return p;
}

function check(flow: Flow, r: TraceResult): string[] {
  const problems: string[] = [];
  const want = [...flow.endpoints].sort();
  const got = r.endpoints.map((e) => e.address).sort();
  if (JSON.stringify(want) !== JSON.stringify(got)) problems.push(`endpoints: want [${want.join(', ')}], got [${got.join(', ')}]`);
  if (r.verdict !== flow.verdict) problems.push(`verdict: want ${flow.verdict}, got ${r.verdict}`);
  if (r.masquerade !== flow.masq) problems.push(`masquerade: want ${flow.masq}, got ${r.masquerade}`);
  if (r.endpoints.length > 0) {
    // kube-proxy spreads new connections evenly over a chain's endpoints.
    for (const e of r.endpoints) {
      if (Math.abs(e.probability - 1 / r.endpoints.length) > 1e-9) problems.push(`probability of ${e.address}: ${e.probability}, want 1/${r.endpoints.length}`);
    }
  }
  if (flow.output === 'ACCEPT' && !r.branches.every((b) => b.verdict === 'ACCEPT' && !b.verdictBy.startsWith('policy'))) {
    problems.push(`kube-proxy's tracer saw an ACCEPT rule; kpc: ${r.branches.map((b) => b.verdictBy).join(', ')}`);
  }
  if (flow.output === '' && !r.branches.every((b) => !b.dnat && b.verdictBy.startsWith('policy'))) {
    problems.push(`kube-proxy's tracer saw no rule decide; kpc: ${r.branches.map((b) => `${b.destination} by ${b.verdictBy}`).join(', ')}`);
  }
  return problems;
}

describe('packet-flow fixtures', () => {
  it('finds them', () => {
    expect(fixtures.length).toBeGreaterThan(10);
  });

  it('each flow says what its kube-proxy output means', () => {
    for (const f of fixtures) {
      for (const c of f.cases) {
        for (const flow of c.flows) {
          const e = expectationOf(flow.output);
          expect([...flow.endpoints].sort(), `${f.test}/${c.name}/${flow.name}`).toEqual([...e.endpoints].sort());
          expect(flow.verdict, `${f.test}/${c.name}/${flow.name}`).toBe(e.verdict);
        }
      }
    }
  });
});

for (const f of fixtures) {
  describe(`${f.test}${f.derived ? ' (derived)' : ''}`, () => {
    for (const c of f.cases) {
      describe(c.name || 'flows', () => {
        for (const flow of c.flows) {
          const key = `${f.test}/${c.name}/${flow.name}`;
          it(flow.name, async () => {
            const rules = await rulesFor(f, c);
            const [destination, port] = splitHostPort(flow.destination);
            const r = traceRules(rules, { source: flow.source, destination, port, protocol: flow.protocol ?? 'tcp' }, { ips: f.nodeIPs });
            const problems = check(flow, r);
            const known = KNOWN_FAILURES[key];
            if (known !== undefined) {
              expect(problems, `${key} is listed as a known failure (${known}) but now passes: remove it from KNOWN_FAILURES`).not.toEqual([]);
              return;
            }
            expect(problems, `${problems.join('\n')}\n\n${renderTrace(r)}`).toEqual([]);
            if (flow.golden) {
              const file = join(f.dir, 'golden', `${flow.golden}.txt`);
              const text = renderTrace(r);
              if (UPDATE || !existsSync(file)) {
                if (!UPDATE) throw new Error(`missing golden ${file} (run with UPDATE_GOLDEN=1)`);
                mkdirSync(join(f.dir, 'golden'), { recursive: true });
                writeFileSync(file, text);
              }
              expect(text).toBe(readFileSync(file, 'utf8'));
            }
          });
        }
      });
    }
  });
}

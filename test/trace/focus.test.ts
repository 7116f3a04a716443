/**
 * trace and explain from manifests read a focused iptables text (modes/iptables.ts rulesText
 * with `focus`: the shared chains and the focused service ports' own chains; the others' own
 * chains only counted, as blank lines): it must hold the whole output's lines at the same line
 * numbers, and trace and explain must say through it what they say through the whole output.
 * The whole output is the reference (the golden tests pin it to kube-proxy's).
 */

import { describe, expect, it } from 'vitest';
import { iptablesBackend } from '../../src/modes/iptables.js';
import { reachableServicePorts } from '../../src/trace/focus.js';
import { traceThrough } from '../../src/trace/rules.js';
import { explainService } from '../../src/explain/explain.js';
import type { ProxyIR } from '../../src/ir/model.js';
import { loadGoldenCases } from '../helpers/fixtures.js';
import { compileCaseIR } from '../ipvs/helpers/compile-case.js';

function textOf(rules: ReturnType<NonNullable<typeof iptablesBackend.traceRules>>): string {
  if (rules.form !== 'iptables') throw new Error(`expected iptables rules, got ${rules.form}`);
  return rules.text;
}

/** Every line of `focused` is blank or the whole output's line at that number. */
function expectSameLines(focused: string, whole: string, where: string): void {
  const f = focused.split('\n');
  const w = whole.split('\n');
  expect(f.length, where).toBe(w.length);
  const differing = f.flatMap((l, i) => (l === '' || l === w[i] ? [] : [`line ${i + 1}: ${l} vs ${w[i]}`]));
  expect(differing, where).toEqual([]);
}

async function caseIRs(): Promise<Array<{ name: string; ir: ProxyIR }>> {
  const out: Array<{ name: string; ir: ProxyIR }> = [];
  for (const c of loadGoldenCases()) {
    if (c.exit !== 0 || c.args[0] !== 'compile' || c.args.some((a) => a === 'ipvs' || a === 'nftables')) continue;
    try {
      const ir = await compileCaseIR(c);
      if (ir.servicePorts.length > 0) out.push({ name: c.name, ir });
    } catch {
      // a case whose input kpc refuses
    }
  }
  return out;
}

describe('the focused iptables text of trace and explain', async () => {
  const cases = await caseIRs();

  it('finds the cases it compares', () => {
    expect(cases.length).toBeGreaterThan(40);
  });

  it('traces every service port\'s cluster IP, node port and external IPs as the whole output does', () => {
    let traced = 0;
    for (const { name, ir } of cases) {
      for (const standalone of [false, true]) {
        const whole = textOf(iptablesBackend.traceRules!(ir, { standalone }));
        for (const sp of ir.servicePorts.slice(0, 12)) {
          const protocol = sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
          const dests = [{ ip: sp.clusterIP, port: sp.port }, ...sp.externalIPs.map((ip) => ({ ip, port: sp.port })), ...(sp.nodePort !== 0 ? [{ ip: ir.node.ips[0] ?? '127.0.0.1', port: sp.nodePort }] : [])];
          for (const dest of dests) {
            if (dest.ip.includes(':') !== (ir.family === 'IPv6')) continue;
            const focused = textOf(iptablesBackend.traceRules!(ir, { standalone }, reachableServicePorts(dest)));
            expectSameLines(focused, whole, `${name} ${dest.ip}:${dest.port}`);
            for (const source of [undefined, sp.endpoints[0]?.ip]) {
              const packet = { destination: dest.ip, port: dest.port, protocol, ...(source !== undefined ? { source } : {}) };
              const node = { ips: ir.node.ips };
              const run = (text: string) => {
                try {
                  return traceThrough({ form: 'iptables', text }, packet, node).result;
                } catch (e) {
                  return { error: (e as Error).message };
                }
              };
              expect(run(focused), `${name} ${JSON.stringify(packet)}`).toEqual(run(whole));
              traced++;
            }
          }
        }
      }
    }
    expect(traced).toBeGreaterThan(500);
  }, 120_000);

  it('explains every Service as through the whole output', () => {
    let explained = 0;
    for (const { name, ir } of cases) {
      const rules = iptablesBackend.explainRules!(ir);
      if (rules.form !== 'iptables') throw new Error('expected iptables rules');
      const whole = rules.text;
      const services = new Map(ir.servicePorts.map((sp) => [`${sp.namespace}/${sp.name}`, sp]));
      for (const sp of [...services.values()].slice(0, 12)) {
        const focusedRules = iptablesBackend.explainRules!(ir, (p) => p.namespace === sp.namespace && p.name === sp.name);
        if (focusedRules.form !== 'iptables') throw new Error('expected iptables rules');
        expectSameLines(focusedRules.text, whole, `${name} ${sp.namespace}/${sp.name}`);
        expect(explainService(ir, focusedRules.text, sp.namespace, sp.name), `${name} ${sp.namespace}/${sp.name}`).toEqual(explainService(ir, whole, sp.namespace, sp.name));
        explained++;
      }
    }
    expect(explained).toBeGreaterThan(80);
  }, 120_000);
});

/**
 * trace and explain from manifests in nftables mode follow a focused transaction
 * (emit/nftables buildFocusedTransaction: the fixed part and the focused service ports'
 * operations; the other ports written through the same element store and let go): they must
 * say through it what they say through the whole transaction. The whole transaction is the
 * reference (the nftables golden tests pin it to kube-proxy's).
 */

import { describe, expect, it } from 'vitest';
import { buildFocusedTransaction, buildTransaction } from '../../src/emit/nftables/index.js';
import { explainThrough } from '../../src/explain/rules.js';
import type { ProxyIR, ServicePort } from '../../src/ir/model.js';
import { nftablesBackend } from '../../src/modes/nftables.js';
import { reachableServicePorts } from '../../src/trace/focus.js';
import { traceThrough, type TraceRules } from '../../src/trace/rules.js';
import { loadNftablesGoldenCases } from '../helpers/fixtures.js';
import { compileCaseIR } from '../ipvs/helpers/compile-case.js';

async function caseIRs(): Promise<Array<{ name: string; ir: ProxyIR }>> {
  const out: Array<{ name: string; ir: ProxyIR }> = [];
  for (const c of loadNftablesGoldenCases()) {
    if (c.exit !== 0 || c.args[0] !== 'compile') continue;
    try {
      const ir = await compileCaseIR(c);
      if (ir.servicePorts.length > 0) out.push({ name: c.name, ir });
    } catch {
      // a case whose input kpc refuses
    }
  }
  return out;
}

/** The destinations a test sends to for one port: its cluster IP, external and load-balancer IPs, node port, and an address no one has. */
function destinations(ir: ProxyIR, sp: ServicePort): Array<{ ip: string; port: number }> {
  const v6 = ir.family === 'IPv6';
  const all = [
    { ip: sp.clusterIP, port: sp.port },
    { ip: sp.clusterIP, port: sp.port + 1 },
    ...sp.externalIPs.map((ip) => ({ ip, port: sp.port })),
    ...sp.loadBalancerVIPs.map((ip) => ({ ip, port: sp.port })),
    ...(sp.nodePort !== 0 ? [{ ip: ir.node.ips[0] ?? (v6 ? '::1' : '127.0.0.1'), port: sp.nodePort }] : []),
    { ip: v6 ? 'fd00:ffff::1' : '10.255.255.1', port: sp.port },
  ];
  return all.filter((d) => d.ip !== '' && d.ip.includes(':') === v6);
}

describe('the focused nftables transaction of trace and explain', async () => {
  const cases = await caseIRs();

  it('finds the cases it compares', () => {
    expect(cases.length).toBeGreaterThan(30);
  });

  it('traces every service port\'s addresses and node port as the whole transaction does', () => {
    let traced = 0;
    for (const { name, ir } of cases) {
      for (const standalone of [false, true]) {
        const whole = nftablesBackend.traceRules!(ir, { standalone });
        for (const sp of ir.servicePorts.slice(0, 12)) {
          const protocol = sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
          for (const dest of destinations(ir, sp)) {
            const focused = nftablesBackend.traceRules!(ir, { standalone }, reachableServicePorts(dest));
            for (const source of [undefined, sp.endpoints[0]?.ip]) {
              const packet = { destination: dest.ip, port: dest.port, protocol, ...(source !== undefined ? { source } : {}) };
              const run = (rules: TraceRules) => {
                try {
                  return traceThrough(rules, packet, { ips: ir.node.ips }).result;
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

  it('keeps fewer operations than the whole transaction when it leaves ports out', () => {
    const { ir } = cases.find(({ ir }) => new Set(ir.servicePorts.map((sp) => sp.clusterIP)).size > 2)!;
    const sp = ir.servicePorts[0]!;
    const whole = buildTransaction(ir, { standalone: false }).ops.length;
    expect(buildFocusedTransaction(ir, { standalone: false }, reachableServicePorts({ ip: sp.clusterIP, port: sp.port })).ops.length).toBeLessThan(whole);
    expect(buildFocusedTransaction(ir, { standalone: false }, () => true).ops.length).toBe(whole);
  });

  it('traces a port whose element another port replaces (the same cluster IP and port) as the whole transaction does', () => {
    const { ir } = cases.find(({ ir }) => ir.servicePorts.some((sp) => sp.endpoints.length > 0 && sp.nodePort !== 0)) ?? cases.find(({ ir }) => ir.servicePorts.some((sp) => sp.endpoints.length > 0))!;
    const sp = ir.servicePorts.find((p) => p.endpoints.length > 0)!;
    // Another Service on the same cluster IP and port: its service-ips element replaces the first's.
    const twin: ServicePort = { ...sp, name: `${sp.name}-twin`, spn: `${sp.spn}-twin`, nodePort: 0, healthCheckNodePort: 0 };
    const both: ProxyIR = { ...ir, servicePorts: [...ir.servicePorts, twin] };
    expect(buildTransaction(both, { standalone: false }).ops.some((op) => op.verb === 'delete')).toBe(true);
    const protocol = sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
    for (const dest of destinations(both, sp)) {
      const packet = { destination: dest.ip, port: dest.port, protocol };
      const run = (rules: TraceRules) => traceThrough(rules, packet, { ips: both.node.ips }).result;
      expect(run(nftablesBackend.traceRules!(both, { standalone: false }, reachableServicePorts(dest))), JSON.stringify(dest)).toEqual(run(nftablesBackend.traceRules!(both, { standalone: false })));
    }
  });

  it('explains every Service as through the whole transaction', () => {
    let explained = 0;
    for (const { name, ir } of cases) {
      const whole = nftablesBackend.explainRules!(ir);
      const services = new Map(ir.servicePorts.map((sp) => [`${sp.namespace}/${sp.name}`, sp]));
      for (const sp of [...services.values()].slice(0, 12)) {
        const focused = nftablesBackend.explainRules!(ir, (p) => p.namespace === sp.namespace && p.name === sp.name);
        expect(explainThrough(focused, ir, sp.namespace, sp.name), `${name} ${sp.namespace}/${sp.name}`).toEqual(explainThrough(whole, ir, sp.namespace, sp.name));
        explained++;
      }
    }
    expect(explained).toBeGreaterThan(60);
  }, 120_000);
});

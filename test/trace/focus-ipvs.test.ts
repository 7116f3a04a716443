/**
 * trace and explain from manifests in IPVS mode follow a focused bundle (emit/ipvs
 * emitFocusedIpvs: only the virtual servers the focused service ports could have written;
 * every ipset entry, iptables rule and kube-ipvs0 address): they must say through it what they
 * say through the whole bundle. The whole bundle is the reference (the IPVS golden tests pin
 * it to kube-proxy's).
 */

import { describe, expect, it } from 'vitest';
import { emitFocusedIpvs, emitIpvs } from '../../src/emit/ipvs/index.js';
import { explainThrough } from '../../src/explain/rules.js';
import type { ProxyIR, ServicePort } from '../../src/ir/model.js';
import { ipvsBackend } from '../../src/modes/ipvs.js';
import { reachableServicePorts } from '../../src/trace/focus.js';
import { traceThrough, type TraceRules } from '../../src/trace/rules.js';
import { loadGoldenCases } from '../helpers/fixtures.js';
import { compileCaseIR } from '../ipvs/helpers/compile-case.js';

async function caseIRs(): Promise<Array<{ name: string; ir: ProxyIR }>> {
  const out: Array<{ name: string; ir: ProxyIR }> = [];
  for (const c of loadGoldenCases(undefined, { bundles: true })) {
    if (c.exit !== 0 || c.args[0] !== 'compile' || !c.args.includes('ipvs')) continue;
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

describe('the focused IPVS bundle of trace and explain', async () => {
  const cases = await caseIRs();

  it('finds the cases it compares', () => {
    expect(cases.length).toBeGreaterThan(20);
  });

  it('traces every service port\'s addresses and node port as the whole bundle does', () => {
    let traced = 0;
    for (const { name, ir } of cases) {
      for (const standalone of [false, true]) {
        const whole = ipvsBackend.traceRules!(ir, { standalone });
        for (const sp of ir.servicePorts.slice(0, 12)) {
          const protocol = sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
          for (const dest of destinations(ir, sp)) {
            const focused = ipvsBackend.traceRules!(ir, { standalone }, reachableServicePorts(dest));
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

  it('keeps fewer virtual servers than the whole bundle when it leaves ports out, and all of them when it keeps every port', () => {
    const lines = (text: string) => text.split('\n').length;
    let smaller = 0;
    for (const { ir } of cases) {
      const sp = ir.servicePorts[0]!;
      const whole = emitIpvs(ir, { standalone: false });
      const focused = lines(emitFocusedIpvs(ir, { standalone: false }, reachableServicePorts({ ip: sp.clusterIP, port: sp.port })).ipvsRules);
      expect(focused).toBeLessThanOrEqual(lines(whole.ipvsRules));
      if (focused < lines(whole.ipvsRules)) smaller++;
      expect(emitFocusedIpvs(ir, { standalone: false }, () => true)).toEqual(whole);
    }
    expect(smaller).toBeGreaterThan(1);
  });

  it('traces a port whose virtual server another port overwrites (the same cluster IP and port) as the whole bundle does', () => {
    const { ir } = cases.find(({ ir }) => ir.servicePorts.some((sp) => sp.endpoints.length > 0))!;
    const sp = ir.servicePorts.find((p) => p.endpoints.length > 0)!;
    const twin: ServicePort = { ...sp, name: `${sp.name}-twin`, spn: `${sp.spn}-twin`, nodePort: 0, healthCheckNodePort: 0, endpoints: [] };
    const both: ProxyIR = { ...ir, servicePorts: [...ir.servicePorts, twin] };
    const protocol = sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
    for (const dest of destinations(both, sp)) {
      const packet = { destination: dest.ip, port: dest.port, protocol };
      const run = (rules: TraceRules) => traceThrough(rules, packet, { ips: both.node.ips }).result;
      expect(run(ipvsBackend.traceRules!(both, { standalone: false }, reachableServicePorts(dest))), JSON.stringify(dest)).toEqual(run(ipvsBackend.traceRules!(both, { standalone: false })));
    }
    for (const s of [sp, twin]) {
      const focused = ipvsBackend.explainRules!(both, (p) => p.namespace === s.namespace && p.name === s.name);
      expect(explainThrough(focused, both, s.namespace, s.name)).toEqual(explainThrough(ipvsBackend.explainRules!(both), both, s.namespace, s.name));
    }
  });

  it('explains every Service as through the whole bundle', () => {
    let explained = 0;
    for (const { name, ir } of cases) {
      const whole = ipvsBackend.explainRules!(ir);
      const services = new Map(ir.servicePorts.map((sp) => [`${sp.namespace}/${sp.name}`, sp]));
      for (const sp of [...services.values()].slice(0, 12)) {
        const focused = ipvsBackend.explainRules!(ir, (p) => p.namespace === sp.namespace && p.name === sp.name);
        expect(explainThrough(focused, ir, sp.namespace, sp.name), `${name} ${sp.namespace}/${sp.name}`).toEqual(explainThrough(whole, ir, sp.namespace, sp.name));
        explained++;
      }
    }
    expect(explained).toBeGreaterThan(30);
  }, 120_000);
});

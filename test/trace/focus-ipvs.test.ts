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
import { caseIRs, destinations, expectFocusedExplanations, expectFocusedTraces, protocolOf } from './focus-compare.js';

describe('the focused IPVS bundle of trace and explain', async () => {
  const cases = await caseIRs(loadGoldenCases(undefined, { bundles: true }).filter((c) => c.args.includes('ipvs')));

  it('finds the cases it compares', () => {
    expect(cases.length).toBeGreaterThan(20);
  });

  it('traces every service port\'s addresses and node port as the whole bundle does', () => {
    expect(expectFocusedTraces(cases, ipvsBackend)).toBeGreaterThan(500);
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
    for (const dest of destinations(both, sp)) {
      const packet = { destination: dest.ip, port: dest.port, protocol: protocolOf(sp) };
      const run = (rules: TraceRules) => traceThrough(rules, packet, { ips: both.node.ips }).result;
      expect(run(ipvsBackend.traceRules!(both, { standalone: false }, reachableServicePorts(dest))), JSON.stringify(dest)).toEqual(run(ipvsBackend.traceRules!(both, { standalone: false })));
    }
    for (const s of [sp, twin]) {
      const focused = ipvsBackend.explainRules!(both, (p) => p.namespace === s.namespace && p.name === s.name);
      expect(explainThrough(focused, both, s.namespace, s.name)).toEqual(explainThrough(ipvsBackend.explainRules!(both), both, s.namespace, s.name));
    }
  });

  it('explains every Service as through the whole bundle', () => {
    expect(expectFocusedExplanations(cases, ipvsBackend)).toBeGreaterThan(30);
  }, 120_000);
});

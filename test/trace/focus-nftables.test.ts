/**
 * trace and explain from manifests in nftables mode follow a focused transaction
 * (emit/nftables buildFocusedTransaction: the whole transaction without the chains of the
 * service ports the focus leaves out; every element kept): they must
 * say through it what they say through the whole transaction. The whole transaction is the
 * reference (the nftables golden tests pin it to kube-proxy's).
 */

import { describe, expect, it } from 'vitest';
import { buildFocusedTransaction, buildTransaction } from '../../src/emit/nftables/index.js';
import type { ProxyIR, ServicePort } from '../../src/ir/model.js';
import { nftablesBackend } from '../../src/modes/nftables.js';
import { reachableServicePorts } from '../../src/trace/focus.js';
import { traceThrough, type TraceRules } from '../../src/trace/rules.js';
import { loadNftablesGoldenCases } from '../helpers/fixtures.js';
import { caseIRs, destinations, expectFocusedExplanations, expectFocusedTraces, protocolOf } from './focus-compare.js';

describe('the focused nftables transaction of trace and explain', async () => {
  const cases = await caseIRs(loadNftablesGoldenCases());

  it('finds the cases it compares', () => {
    expect(cases.length).toBeGreaterThan(30);
  });

  it('traces every service port\'s addresses and node port as the whole transaction does', () => {
    expect(expectFocusedTraces(cases, nftablesBackend)).toBeGreaterThan(500);
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
    for (const dest of destinations(both, sp)) {
      const packet = { destination: dest.ip, port: dest.port, protocol: protocolOf(sp) };
      const run = (rules: TraceRules) => traceThrough(rules, packet, { ips: both.node.ips }).result;
      expect(run(nftablesBackend.traceRules!(both, { standalone: false }, reachableServicePorts(dest))), JSON.stringify(dest)).toEqual(run(nftablesBackend.traceRules!(both, { standalone: false })));
    }
  });

  it('explains every Service as through the whole transaction', () => {
    expect(expectFocusedExplanations(cases, nftablesBackend)).toBeGreaterThan(60);
  }, 120_000);
});

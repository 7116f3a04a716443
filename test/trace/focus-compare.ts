/**
 * What the focus tests of every mode share (focus.test.ts, focus-nftables.test.ts,
 * focus-ipvs.test.ts): the golden cases' IRs, the destinations sent to, and the comparison of
 * trace and explain through a backend's focused rules with the same through its whole rules.
 */

import { expect } from 'vitest';
import { explainThrough, type ExplainRules } from '../../src/explain/rules.js';
import type { ProxyIR, ServicePort } from '../../src/ir/model.js';
import type { ModeBackend } from '../../src/modes/backend.js';
import { reachableServicePorts } from '../../src/trace/focus.js';
import { traceThrough, type TraceRules } from '../../src/trace/rules.js';
import type { GoldenCase } from '../helpers/fixtures.js';
import { compileCaseIR } from '../ipvs/helpers/compile-case.js';

export interface CaseIR {
  name: string;
  ir: ProxyIR;
}

/** The IRs of the compile cases among `cases` that kpc accepts and that hold a service port. */
export async function caseIRs(cases: readonly GoldenCase[]): Promise<CaseIR[]> {
  const out: CaseIR[] = [];
  for (const c of cases) {
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

/** Where a test sends to for one port: its cluster IP (and the port beside it), external and load-balancer IPs, node port, and an address no one has. */
export function destinations(ir: ProxyIR, sp: ServicePort): Array<{ ip: string; port: number }> {
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

/**
 * Each case's first 12 service ports, at each destination, from nowhere and from the port's
 * first endpoint, standalone or not: traced through the backend's focused rules as through its
 * whole rules (`check`, when given, compares the rules themselves). How many were traced.
 */
export function expectFocusedTraces(cases: readonly CaseIR[], backend: ModeBackend, check?: (focused: TraceRules, whole: TraceRules, where: string) => void): number {
  let traced = 0;
  for (const { name, ir } of cases) {
    for (const standalone of [false, true]) {
      const whole = backend.traceRules!(ir, { standalone });
      for (const sp of ir.servicePorts.slice(0, 12)) {
        for (const dest of destinations(ir, sp)) {
          const focused = backend.traceRules!(ir, { standalone }, reachableServicePorts(dest));
          check?.(focused, whole, `${name} ${dest.ip}:${dest.port}`);
          for (const source of [undefined, sp.endpoints[0]?.ip]) {
            const packet = { destination: dest.ip, port: dest.port, protocol: protocolOf(sp), ...(source !== undefined ? { source } : {}) };
            expect(traceOutcome(focused, packet, ir), `${name} ${JSON.stringify(packet)}`).toEqual(traceOutcome(whole, packet, ir));
            traced++;
          }
        }
      }
    }
  }
  return traced;
}

/** Each case's first 12 Services explained through the backend's rules focused on the Service as through its whole rules. How many were explained. */
export function expectFocusedExplanations(cases: readonly CaseIR[], backend: ModeBackend, check?: (focused: ExplainRules, whole: ExplainRules, where: string) => void): number {
  let explained = 0;
  for (const { name, ir } of cases) {
    const whole = backend.explainRules!(ir);
    const services = new Map(ir.servicePorts.map((sp) => [`${sp.namespace}/${sp.name}`, sp]));
    for (const sp of [...services.values()].slice(0, 12)) {
      const where = `${name} ${sp.namespace}/${sp.name}`;
      const focused = backend.explainRules!(ir, (p) => p.namespace === sp.namespace && p.name === sp.name);
      check?.(focused, whole, where);
      expect(explainThrough(focused, ir, sp.namespace, sp.name), where).toEqual(explainThrough(whole, ir, sp.namespace, sp.name));
      explained++;
    }
  }
  return explained;
}

export function protocolOf(sp: ServicePort): 'tcp' | 'udp' | 'sctp' {
  return sp.protocol.toLowerCase() as 'tcp' | 'udp' | 'sctp';
}

/** The trace's result, or the error it ended in. */
function traceOutcome(rules: TraceRules, packet: Parameters<typeof traceThrough>[1], ir: ProxyIR): unknown {
  try {
    return traceThrough(rules, packet, { ips: ir.node.ips }).result;
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/**
 * iptables mode: the IR in, kube-proxy's iptables-restore input out (a full sync).
 * A pure function: same IR, same bytes.
 */

import type { ProxyIR, ServicePort } from '../../ir/model.js';
import { cidrContains, formatIP, isLoopback, parseCIDR, parseIP } from '../../net/ip.js';
import { writeFixedHead, writeFixedTail } from './fixed-rules.js';
import { renderRuleset, renderRulesetText } from '../../lang/iptables/print.js';
import { newRuleset, type ChainRules, type Ruleset, type Table } from '../../lang/iptables/ruleset.js';
import { iptablesPortPlan, writeServicePort, type SyncContext } from './service-rules.js';
import { planContext, planServicePort } from '../../ir/plan.js';
import { KUBE_MARK_MASQ } from '../../lang/iptables/chains.js';
import { detectorIfNotLocal } from '../common/local-detector.js';
import { writeStandaloneJumps } from './standalone.js';

export interface IptablesOptions {
  /** Also write the jumps from the built-in chains (for a fresh node or namespace). */
  standalone: boolean;
}

/** kube-proxy switches to "large cluster mode" above this many endpoints. */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

export function isLargeCluster(ir: ProxyIR): boolean {
  let total = 0;
  for (const sp of ir.servicePorts) {
    total += sp.endpoints.length;
    // Stop early: on a big input the full count means reading every service port cold.
    if (total > LARGE_CLUSTER_ENDPOINTS_THRESHOLD) return true;
  }
  return false;
}

/**
 * The node's addresses that node ports are served on when --nodeport-addresses is set:
 * its addresses (plus loopback) inside those CIDRs, sorted (kube-proxy: map order).
 */
export function nodePortIPs(ir: ProxyIR): string[] {
  const cidrs = ir.knobs.nodePortAddresses.map((c) => parseCIDR(c)!.cidr);
  const candidates = [...ir.node.ips, ir.family === 'IPv4' ? '127.0.0.1' : '::1'];
  const out = new Set<string>();
  for (const text of candidates) {
    const ip = parseIP(text)!.ip;
    if (!cidrs.some((c) => cidrContains(c, ip))) continue;
    // Localhost node ports never work on IPv6, and on IPv4 only when enabled.
    if (isLoopback(ip) && (ir.family === 'IPv6' || !ir.knobs.iptables.localhostNodePorts)) continue;
    out.add(formatIP(ip));
  }
  return [...out].sort();
}

export function buildRuleset(ir: ProxyIR, options: IptablesOptions): Ruleset {
  return writeRuleset(ir, options, undefined);
}

/**
 * The ruleset for kpc trace and kpc explain, which read only the shared chains and the
 * per-service chains of the service ports `focus` picks (`kept`): see lang/iptables/print.ts
 * renderFocusedText. It is the one buildRuleset makes, except that the other ports' own
 * chains keep only their rule counts (the lines they take), not their rules.
 */
export function buildFocusedRuleset(ir: ProxyIR, options: IptablesOptions, focus: (sp: ServicePort) => boolean): { rs: Ruleset; kept: Set<ChainRules> } {
  const kept = new Set<ChainRules>();
  const rs = writeRuleset(ir, options, (sp, write, nat) => {
    if (!focus(sp)) return nat.withNewChainsCounted(write);
    const before = nat.declaredCount();
    write();
    for (const c of nat.declaredSince(before)) kept.add(c);
  });
  return { rs, kept };
}

/**
 * buildRuleset, with `around` called for each service port with the write of its rules (kpc
 * watch counts each port's rules in the shared chains). The same ruleset.
 */
export function buildObservedRuleset(ir: ProxyIR, options: IptablesOptions, around: (sp: ServicePort, write: () => void, rs: Ruleset) => void): Ruleset {
  return writeRuleset(ir, options, (sp, write, _nat, rs) => around(sp, write, rs));
}

/** The full sync; `around`, when given, is called for each service port with the write of its rules. */
function writeRuleset(ir: ProxyIR, options: IptablesOptions, around: ((sp: ServicePort, write: () => void, nat: Table, rs: Ruleset) => void) | undefined): Ruleset {
  const rs = newRuleset();
  const ctx: SyncContext = {
    ir,
    largeClusterMode: isLargeCluster(ir),
    masqueradeIfNotLocal: ir.knobs.localDetector ? `${detectorIfNotLocal(ir.knobs.localDetector)} -j ${KUBE_MARK_MASQ}` : undefined,
  };
  const planning = planContext(ir);
  writeFixedHead(rs, ir);
  if (around === undefined) {
    for (const sp of ir.servicePorts) writeServicePort(rs, iptablesPortPlan(planServicePort(sp, planning), ctx), ctx);
  } else {
    for (const sp of ir.servicePorts) around(sp, () => writeServicePort(rs, iptablesPortPlan(planServicePort(sp, planning), ctx), ctx), rs.nat, rs);
  }
  writeFixedTail(rs, ir, nodePortIPs(ir));
  if (options.standalone) writeStandaloneJumps(rs);
  return rs;
}

/** The restore input as text chunks (write them in turn for the whole file). */
export function emitIptables(ir: ProxyIR, options: IptablesOptions): string[] {
  return Array.from(renderRuleset(buildRuleset(ir, options)));
}

/** The restore input as one string (for small outputs). */
export function emitIptablesText(ir: ProxyIR, options: IptablesOptions): string {
  return renderRulesetText(buildRuleset(ir, options));
}

/**
 * A full sync cut into its parts, for a caller that re-renders only some service ports (kpc
 * watch): one service port's rules (`writePort`, into a ruleset `declare`d like a full one). buildRuleset writes the fixed head, then each service port in IR order,
 * then the tail: so each shared chain holds the service ports' rules in IR order followed by
 * the fixed rules. `largeClusterMode` is the one fact about all service ports the rules of
 * one depend on (besides the IR's node and knobs).
 */
export interface IptablesSync {
  readonly largeClusterMode: boolean;
  declare(rs: Ruleset): void;
  writePort(rs: Ruleset, sp: ServicePort): void;
}

export function iptablesSync(ir: ProxyIR, largeClusterMode = isLargeCluster(ir)): IptablesSync {
  const ctx: SyncContext = {
    ir,
    largeClusterMode,
    masqueradeIfNotLocal: ir.knobs.localDetector ? `${detectorIfNotLocal(ir.knobs.localDetector)} -j ${KUBE_MARK_MASQ}` : undefined,
  };
  const planning = planContext(ir);
  const empty: ProxyIR = { ...ir, servicePorts: [] };
  return {
    largeClusterMode,
    declare: (rs) => writeFixedHead(rs, empty),
    writePort: (rs, sp) => writeServicePort(rs, iptablesPortPlan(planServicePort(sp, planning), ctx), ctx),
  };
}

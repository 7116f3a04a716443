/**
 * What a trace says, whatever the rule language it followed (iptables: tracer.ts, nftables:
 * nftables.ts, IPVS: ipvs.ts): the packet asked about, the node, and the result with its
 * branches; the summary of finished branches every tracer ends with; the error of a packet
 * or rules a tracer cannot follow.
 */

import { KpcError } from '../errors.js';

export type Protocol = 'tcp' | 'udp' | 'sctp';
export type Verdict = 'ACCEPT' | 'DROP' | 'REJECT';
export type Origin = 'node' | 'network';

export interface PacketSpec {
  /** Source address; omitted = the node itself (its first address of the destination's family). */
  source?: string;
  destination: string;
  port: number;
  /** Default tcp. */
  protocol?: Protocol;
  /**
   * Where the connection starts. Default: `node` when the source is one of the node's
   * addresses or a loopback address (nat OUTPUT), else `network` (nat PREROUTING).
   */
  origin?: Origin;
  /** The interface a packet from the network arrives on (for `-i` matches); unknown if omitted. */
  inInterface?: string;
  /** The interface the packet leaves by (for `-o` matches); unknown if omitted. */
  outInterface?: string;
  /** The client's port (for `--sport` matches); unknown if omitted. */
  sourcePort?: number;
}

export interface NodeSpec {
  /** The node's addresses (any family); with 127.0.0.0/8 and ::1 they are addrtype LOCAL. */
  ips: string[];
}

export interface TraceStep {
  table: string;
  chain: string;
  /** The rule that matched; absent for a chain's policy. */
  rule?: { index: number; line: number; spec: string; comment?: string; implicit?: boolean };
  /** What happened: "-j KUBE-SVC-…", "DNAT to 10.180.0.1:80", "policy ACCEPT", ... */
  action: string;
  /** For a `-m statistic` rule: the probability text as written. */
  probability?: string;
}

export interface TraceBranch {
  probability: number;
  verdict: Verdict;
  /** The rule (or chain policy) that decided the verdict, e.g. "filter/KUBE-NODEPORTS #1", "policy of filter/FORWARD". */
  verdictBy: string;
  /** Where the packet goes: `ip:port` after DNAT, or the original destination. */
  destination: string;
  dnat: boolean;
  masquerade: boolean;
  steps: TraceStep[];
  chains: string[];
}

export interface TraceEndpoint {
  address: string;
  probability: number;
  masquerade: boolean;
}

export interface AffinityNote {
  /** The `recent` list name (kube-proxy names it after the endpoint's chain). */
  name: string;
  seconds?: number;
  /** Where the check is: "nat/KUBE-SVC-… #2". */
  rule: string;
  /** The endpoint a returning client is sent back to, if the check's chain DNATs. */
  endpoint?: string;
}

export interface TraceResult {
  packet: { source: string; destination: string; port: number; protocol: Protocol; origin: Origin };
  verdict: Verdict;
  /** Probability of each verdict reached. */
  verdicts: Partial<Record<Verdict, number>>;
  endpoints: TraceEndpoint[];
  masquerade: boolean;
  path: string[];
  branches: TraceBranch[];
  affinity: AffinityNote[];
  notes: string[];
}

/** A packet or a rules text the tracer cannot follow (a loop, an unknown chain). */
export function traceError(message: string): KpcError {
  return new KpcError('usage', 'query.unanswerable', message);
}

/** A probability rounded to 10 decimals, so that sums of branches print as people expect. */
export function roundProbability(p: number): number {
  return Math.round(p * 1e10) / 1e10;
}

/**
 * The result of a trace from its finished branches, whatever the rule language: the verdicts
 * with their probabilities (DROP, then REJECT, decides the headline), the endpoints reached,
 * the chains in the order first met.
 */
export function summarizeBranches(branches: TraceBranch[], packet: TraceResult['packet'], affinity: Iterable<AffinityNote>, notes: string[]): TraceResult {
  const verdicts: Partial<Record<Verdict, number>> = {};
  for (const b of branches) verdicts[b.verdict] = (verdicts[b.verdict] ?? 0) + b.probability;
  for (const k of Object.keys(verdicts) as Verdict[]) verdicts[k] = roundProbability(verdicts[k]!);
  const verdict: Verdict = verdicts.DROP !== undefined ? 'DROP' : verdicts.REJECT !== undefined ? 'REJECT' : 'ACCEPT';

  const byAddress = new Map<string, TraceEndpoint>();
  for (const b of branches) {
    if (b.verdict !== 'ACCEPT' || !b.dnat) continue;
    const e = byAddress.get(b.destination) ?? { address: b.destination, probability: 0, masquerade: false };
    e.probability += b.probability;
    e.masquerade ||= b.masquerade;
    byAddress.set(b.destination, e);
  }
  const endpoints = [...byAddress.values()].map((e) => ({ ...e, probability: roundProbability(e.probability) }));

  const path: string[] = [];
  const seen = new Set<string>();
  for (const b of branches) {
    for (const c of b.chains) {
      if (!seen.has(c)) {
        seen.add(c);
        path.push(c);
      }
    }
  }
  return {
    packet,
    verdict,
    verdicts,
    endpoints,
    masquerade: branches.some((b) => b.verdict === 'ACCEPT' && b.masquerade),
    path,
    branches: branches.map((b) => ({ ...b, probability: roundProbability(b.probability) })),
    affinity: [...affinity],
    notes,
  };
}

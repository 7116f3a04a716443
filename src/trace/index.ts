/**
 * `kpc trace`: follow a new connection through iptables rules (kpc's output or a node's
 * iptables-save) and say where it goes. Pure functions; the CLI does the I/O.
 */

export { readRules } from '../lang/iptables/read.js';
export { tokenize, type Token } from '../lang/iptables/tokenize.js';
export { parseRuleArgs } from '../lang/iptables/parse-rule.js';
export { implicitBuiltinChain, implicitJumpLines } from '../lang/iptables/builtin-jumps.js';
export { traceRules, traceRuleSet, type BalanceOutcome, type PacketView, type TraceExtension } from './tracer.js';
export {
  type AffinityNote,
  type NodeSpec,
  type Origin,
  type PacketSpec,
  type Protocol,
  type TraceBranch,
  type TraceEndpoint,
  type TraceResult,
  type TraceStep,
  type Verdict,
} from './result.js';
export { reachableServicePorts } from './focus.js';
export { renderTrace, formatPercent, type TraceStyle } from './render.js';
export type { Chain, Match, Rule, RuleSet, Table, Target } from '../lang/iptables/model.js';

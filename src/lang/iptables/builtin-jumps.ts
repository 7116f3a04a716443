/**
 * The jumps from the built-in chains into kube-proxy's chains. kube-proxy installs them with
 * single `iptables -I` calls (proxier.go iptablesJumpChains + iptablesKubeletJumpChains), so
 * its restore input (and kpc's output without --standalone) does not contain them. When a
 * rules text does not declare a built-in chain, the tracer assumes these rules in it, in the
 * order they end up on a node (each is prepended, so the last ensured comes first): the same
 * rules `kpc compile --standalone` writes (a test checks the two agree).
 *
 * A text that declares the built-in chain (an `iptables-save` of a node, or --standalone
 * output) is taken as it is: an empty INPUT there really has no jump to kube-proxy's chains.
 */

import type { Chain, Rule } from './model.js';
import { IPTABLES_BUILTIN_JUMPS, jumpArgs, type BuiltinJump } from './chains.js';
import { parseRuleArgs } from './parse-rule.js';
import { tokenize } from './tokenize.js';

/** The built-in chain as kube-proxy leaves it on a node whose chain was empty before (`jumps`: IPVS mode's, or iptables mode's by default). */
export function implicitBuiltinChain(table: string, chain: string, jumps: readonly BuiltinJump[] = IPTABLES_BUILTIN_JUMPS): Chain {
  const rules: Rule[] = [];
  for (const jump of [...jumps].reverse()) {
    if (jump.table !== table || jump.from !== chain) continue;
    const args = jumpArgs(jump);
    const parsed = parseRuleArgs(tokenize(args), () => true);
    rules.push({ table, chain, index: rules.length + 1, line: 0, spec: args, ...parsed, implicit: true });
  }
  return { name: chain, builtin: true, policy: 'ACCEPT', rules, line: 0 };
}

/** The implicit jumps as `-A` lines, for tests and documentation. */
export function implicitJumpLines(table: string): string[] {
  const out: string[] = [];
  for (const chain of ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']) {
    for (const r of implicitBuiltinChain(table, chain).rules) out.push(`-A ${chain} ${r.spec}`);
  }
  return out;
}

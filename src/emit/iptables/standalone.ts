/**
 * The jumps from the built-in chains into kube-proxy's chains. kube-proxy installs these
 * with single `iptables -I` calls (lang/iptables/chains.ts), not through iptables-restore;
 * `--standalone` adds them so one restore of kpc's output sets up a fresh node or namespace.
 */

import type { Ruleset } from '../../lang/iptables/ruleset.js';
import { IPTABLES_BUILTIN_JUMPS, jumpArgs } from '../../lang/iptables/chains.js';

export function writeStandaloneJumps(rs: Ruleset): void {
  // Each is prepended on a node: written in reverse, they end up in the node's order.
  for (const jump of [...IPTABLES_BUILTIN_JUMPS].reverse()) {
    const table = rs[jump.table];
    table.declare(jump.from);
    table.declare(jump.to); // KUBE-FIREWALL is not declared on IPv6 or without localhost node ports
    table.append(jump.from, jumpArgs(jump));
  }
}

/**
 * The iptables chains of IPVS mode (proxier.go iptablesChains): five in nat, six in filter,
 * declared on every sync. They are small and constant-size (a rule per non-empty set, not per
 * Service), so a delta rewrites a changed one whole; they are never deleted. Everything else
 * in the tables (built-in chains and their jumps, other components' chains) is never touched.
 */

import type { ChainPolicy } from '../iptables/delta.js';
import { IPVS_CHAINS } from '../../emit/ipvs/iptables-rules.js';

const OWNED = new Set(IPVS_CHAINS.map((c) => `${c.table}/${c.chain}`));

export function isIpvsModeChain(table: string, name: string): boolean {
  return OWNED.has(`${table}/${name}`);
}

export const IPVS_CHAIN_POLICY: ChainPolicy = {
  owned: isIpvsModeChain,
  stale: () => false,
  topLevel: new Set(),
};

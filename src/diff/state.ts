/**
 * The iptables state kpc compares: per table (filter, nat), per chain, the rules in order,
 * each as its canonical key (canonical.ts) and the text to write it back with.
 *
 * Read from any rules text the trace reader understands: kpc's own output or a node's
 * `iptables-save`, which also holds other components' chains (those are kept, never touched).
 */

import { readRules } from '../trace/read.js';
import { canonicalRule } from './canonical.js';

export interface RuleState {
  /** Canonical form: equal keys = the same kernel rule. */
  key: string;
  /** The rule's arguments as the text had them (valid for -A, -I and -D). */
  spec: string;
  /** The `-m comment` text, if any. */
  comment?: string;
  /** The chain it jumps or goes to, if its target is a chain. */
  jump?: string;
  /** DNAT's `--to-destination`, if that is its target. */
  dnat?: string;
}

export interface ChainState {
  name: string;
  builtin: boolean;
  rules: RuleState[];
}

export type TableState = Map<string, ChainState>;

/** Tables by name; only the tables kube-proxy writes are read. */
export type IptablesState = Map<'filter' | 'nat', TableState>;

const TABLES = ['filter', 'nat'] as const;

export function readState(text: string, family: 'IPv4' | 'IPv6'): IptablesState {
  const ruleset = readRules(text);
  const state: IptablesState = new Map();
  for (const name of TABLES) {
    const table = ruleset.tables.get(name);
    const chains: TableState = new Map();
    for (const chain of table?.chains.values() ?? []) {
      chains.set(chain.name, {
        name: chain.name,
        builtin: chain.builtin,
        rules: chain.rules
          .filter((r) => !r.implicit)
          .map((r) => ({
            key: canonicalRule(r, family),
            spec: r.spec,
            ...(r.comment !== undefined ? { comment: r.comment } : {}),
            ...(r.target?.kind === 'chain' ? { jump: r.target.chain } : {}),
            ...(r.target?.kind === 'DNAT' ? { dnat: r.target.to } : {}),
          })),
      });
    }
    state.set(name, chains);
  }
  return state;
}

/** kube-proxy's per-service chains in nat (proxier.go isServiceChainName): the ones it deletes when stale. */
export function isServiceChain(name: string): boolean {
  return /^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(name);
}

/** The long top-level chains that hold one or more rules per service port: diffed rule by rule. */
export const TOP_LEVEL_CHAINS: ReadonlySet<string> = new Set(['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL']);

export function sameRules(a: ChainState | undefined, b: ChainState | undefined): boolean {
  if (!a || !b || a.rules.length !== b.rules.length) return false;
  return a.rules.every((r, k) => r.key === b.rules[k]!.key);
}

/** kube-proxy's fixed chains: rewritten whole when they differ, never deleted. */
const FIXED_CHAINS: Readonly<Record<string, ReadonlySet<string>>> = {
  filter: new Set(['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL', 'KUBE-FIREWALL']),
  nat: new Set(['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']),
};

/** The chains kpc compares and changes: kube-proxy's fixed chains and its per-service chains. */
export function isKubeProxyChain(table: string, name: string): boolean {
  return (FIXED_CHAINS[table]?.has(name) ?? false) || (table === 'nat' && isServiceChain(name));
}

/**
 * The iptables-restore --noflush input that turns a previous state into a new one, touching
 * as little as possible:
 *
 *   - kube-proxy's per-service chains (KUBE-SVC/SVL/EXT/FW/SEP-) that are new or changed are
 *     declared (which flushes them) and written in full; those that are gone are flushed and
 *     deleted (`-X`), last, after every reference to them is gone;
 *   - the long top-level chains (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES,
 *     KUBE-PROXY-FIREWALL) get rule-level `-D` and `-I` lines, so one changed Service costs a
 *     few lines instead of a rewrite of every Service's rules (kube-proxy's partial sync
 *     rewrites them whole);
 *   - kube-proxy's other fixed chains (KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FORWARD,
 *     KUBE-FIREWALL) are rewritten when they differ;
 *   - chains that are not kube-proxy's (DOCKER, CNI chains, KUBE-PROXY-CANARY, ...) and the
 *     built-in chains are never touched.
 *
 * With `full`, every chain of the new state is written whole (kube-proxy's full sync), plus
 * the deletions.
 *
 * `chains` replaces the iptables-mode chain rules above for another proxy mode: IPVS mode owns
 * eleven small fixed helper chains (src/diff/ipvs/chains.ts), rewritten whole when they differ
 * and never deleted.
 */

import { isKubeProxyChain, isServiceChain, ruleEditScript, sameRules, TOP_LEVEL_CHAINS, type ChainState, type IptablesState, type TableState } from './state.js';
import { append } from '../../arrays.js';

export interface DeltaOptions {
  full: boolean;
  /** Beyond this many edits in one top-level chain, rewrite it instead. */
  maxEdits?: number;
  /** Which chains are kube-proxy's and how to change them (default: iptables mode's). */
  chains?: ChainPolicy;
}

/** The chains a proxy mode owns, and how the delta changes them. */
export interface ChainPolicy {
  /** Chains compared and, when they differ, changed. */
  owned(table: 'filter' | 'nat', name: string): boolean;
  /** Owned chains deleted (`-X`) when the new state no longer has them. */
  stale(table: 'filter' | 'nat', name: string): boolean;
  /** Chains changed rule by rule (`-D`/`-I`) rather than rewritten. */
  topLevel: ReadonlySet<string>;
}

/** iptables mode: kube-proxy's fixed chains and its per-service chains (deleted when gone). */
export const IPTABLES_CHAIN_POLICY: ChainPolicy = {
  owned: isKubeProxyChain,
  stale: (table, name) => table === 'nat' && isServiceChain(name),
  topLevel: TOP_LEVEL_CHAINS,
};

interface TableDelta {
  declare: string[];
  edits: string[];
  rewrites: string[];
  deletes: string[];
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -D/-I lines for one top-level chain, or undefined when a rewrite is the better deal. */
function ruleEdits(chain: string, before: ChainState, after: ChainState, maxEdits: number): string[] | undefined {
  const script = ruleEditScript(before.rules, after.rules, maxEdits);
  if (!script) return undefined;
  const lines: string[] = [];
  // Deletions by rule text (robust to position drift); then insertions at their final
  // positions in ascending order, which rebuilds the new order exactly.
  for (const e of script) if (e.op === 'delete') lines.push(`-D ${chain} ${before.rules[e.oldIndex]!.spec}`);
  const offset = after.window?.offset ?? 0;
  for (const e of script) if (e.op === 'insert') lines.push(`-I ${chain} ${offset + e.newIndex + 1} ${after.rules[e.newIndex]!.spec}`);
  return lines.length * 2 < (after.window?.total ?? after.rules.length) + 2 ? lines : undefined;
}

function writeChain(out: TableDelta, chain: ChainState): void {
  out.declare.push(chain.name);
  for (const r of chain.rules) out.rewrites.push(`-A ${chain.name} ${r.spec}`);
}

function tableDelta(name: 'filter' | 'nat', before: TableState, after: TableState, options: DeltaOptions): TableDelta {
  const out: TableDelta = { declare: [], edits: [], rewrites: [], deletes: [] };
  const maxEdits = options.maxEdits ?? 2000;
  const policy = options.chains ?? IPTABLES_CHAIN_POLICY;
  // Find the chains that change first, then sort just those: a 20,000-Service state has
  // 250,000 chains and a small delta touches a handful.
  const changed: string[] = [];
  for (const [chainName, next] of after) {
    if (!policy.owned(name, chainName)) continue;
    const prev = before.get(chainName);
    if (options.full || !prev || !sameRules(prev, next)) changed.push(chainName);
  }
  for (const chainName of changed.sort(compareNames)) {
    const next = after.get(chainName)!;
    const prev = before.get(chainName);
    const edits = prev && !options.full && policy.topLevel.has(chainName) ? ruleEdits(chainName, prev, next, maxEdits) : undefined;
    if (edits) append(out.edits, edits);
    else if (next.window || prev?.window) throw new Error(`internal error: chain ${chainName} is a window of its rules and cannot be rewritten whole`);
    else writeChain(out, next);
  }
  // The jumps from the built-in chains (only in --standalone output): ensured as kube-proxy
  // does (iptables -I … 1 when missing), never by declaring the chain, which would flush it.
  for (const chain of [...after.values()].filter((c) => c.builtin).sort((a, b) => compareNames(a.name, b.name))) {
    const have = new Set((before.get(chain.name)?.rules ?? []).map((r) => r.key));
    for (const rule of [...chain.rules].reverse()) {
      if (options.full || !have.has(rule.key)) out.edits.push(`-I ${chain.name} 1 ${rule.spec}`);
    }
  }
  // Stale per-service chains: flushed by their declaration, deleted after the references to
  // them (in rewritten or edited chains) are gone.
  const stale = [...before.keys()].filter((c) => policy.owned(name, c) && policy.stale(name, c) && !after.has(c)).sort(compareNames);
  for (const chainName of stale) {
    out.declare.push(chainName);
    out.deletes.push(`-X ${chainName}`);
  }
  return out;
}

/** The delta as restore text (empty when nothing changes). */
export function renderDelta(before: IptablesState, after: IptablesState, options: DeltaOptions): string {
  let text = '';
  for (const name of ['filter', 'nat'] as const) {
    const d = tableDelta(name, before.get(name) ?? new Map(), after.get(name) ?? new Map(), options);
    if (d.declare.length + d.edits.length + d.deletes.length === 0) continue;
    text += `*${name}\n`;
    for (const c of d.declare) text += `:${c} - [0:0]\n`;
    for (const line of [...d.edits, ...d.rewrites, ...d.deletes]) text += `${line}\n`;
    text += 'COMMIT\n';
  }
  return text;
}

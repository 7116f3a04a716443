/**
 * The `nft -f` transaction that turns a previous state of kube-proxy's table into the new one
 * (both src/lang/nftables/state.ts), touching as little as possible. One transaction: nft
 * applies it atomically or not at all.
 *
 *   1. the table, if its comment changed; new counters;
 *   2. chains: a new one is added (and flushed, as kube-proxy does, so that a stray chain of
 *      that name cannot keep old rules); a changed one is flushed (it exists in the previous
 *      state: if it does not on the node, the whole transaction fails rather than doing
 *      something else); a base chain whose hook, type or priority changed is flushed, deleted
 *      and added again;
 *   3. sets and maps: new ones added; one whose declaration changed is deleted and added again
 *      (every chain whose rules name it is rewritten, so nothing references it then);
 *   4. elements, per set and map: a changed one (value or comment) deleted and added, a new
 *      one added; elements of the sets the data plane fills (affinity sets) are never touched;
 *   5. the rules of the new and changed chains, in order;
 *   6. elements that are gone, deleted;
 *   7. what is gone: maps deleted, then chains (the referring ones first, so no chain is
 *      deleted while another stale chain still jumps to it; a deleted chain's rules go with it),
 *      then sets (an endpoint chain's rule names its affinity set), then counters.
 *
 * kube-proxy's partial sync (pkg/proxy/nftables/proxier.go syncProxyRules) does the same per
 * Service, but adds+flushes every changed chain, and flushes stale chains in one transaction and
 * deletes them in a later one (after a second): this delta is never longer.
 *
 * With `full`, every chain is rewritten and every element and set re-added (kube-proxy's full
 * sync), plus the deletions. A previous state without the table gets the full transaction.
 */

import {
  NftTransaction,
  isDynamicSet,
  ruleTokens,
  sameChainDeclaration,
  sameElement,
  sameRules,
  sameSetDeclaration,
  type NftSet,
  type NftState,
  type StateChain,
  type StateSet,
} from '../../lang/nftables/index.js';

export interface NftDeltaOptions {
  full: boolean;
}

function chainObject(c: StateChain) {
  return { kind: 'chain' as const, name: c.name, ...(c.base ? { base: c.base } : {}), ...(c.comment !== undefined ? { comment: c.comment } : {}) };
}

function setObject(s: StateSet): NftSet {
  return {
    kind: s.kind,
    name: s.name,
    type: s.type,
    ...(s.flags.length > 0 || isDynamicSet(s) ? { flags: isDynamicSet(s) ? ['dynamic', ...s.flags.filter((f) => f !== 'dynamic')] : s.flags } : {}),
    ...(s.timeout !== undefined ? { timeout: s.timeout } : {}),
    ...(s.comment !== undefined ? { comment: s.comment } : {}),
  };
}

/** The chains a chain's rules jump or go to, and the sets and maps they name (`@x`). */
function references(c: StateChain): { chains: Set<string>; sets: Set<string> } {
  const chains = new Set<string>();
  const sets = new Set<string>();
  for (const r of c.rules) {
    const toks = ruleTokens(r.key);
    toks.forEach((t, i) => {
      if ((t === 'goto' || t === 'jump') && toks[i + 1]) chains.add(toks[i + 1]!);
      if (t.startsWith('@')) sets.add(t.slice(1));
    });
  }
  return { chains, sets };
}

/**
 * Stale chains in an order where each is deleted before the chains it refers to (Kahn's
 * algorithm: a queue read by an index, so linear in the chains and their references), and the
 * references of each stale chain (computed once, for the caller's cycle check and flushes).
 */
function deletionOrder(stale: StateChain[]): { order: string[]; refs: Map<string, ReturnType<typeof references>> } {
  const names = new Set(stale.map((c) => c.name));
  const refs = new Map(stale.map((c) => [c.name, references(c)]));
  const within = new Map([...refs].map(([n, r]) => [n, [...r.chains].filter((t) => names.has(t) && t !== n)]));
  const referredBy = new Map<string, number>([...names].map((n) => [n, 0]));
  for (const targets of within.values()) for (const t of targets) referredBy.set(t, referredBy.get(t)! + 1);
  const sorted = [...names].sort();
  const ready = sorted.filter((n) => referredBy.get(n) === 0);
  const placed = new Set<string>();
  for (let head = 0; head < ready.length; head++) {
    const n = ready[head]!;
    placed.add(n);
    for (const t of within.get(n)!) {
      referredBy.set(t, referredBy.get(t)! - 1);
      if (referredBy.get(t) === 0) ready.push(t);
    }
  }
  // A cycle cannot come from kube-proxy's table; if one is there, its chains go last (each
  // was flushed first, see below, so nothing refers to them any more).
  for (const n of sorted) if (!placed.has(n)) ready.push(n);
  return { order: ready, refs };
}

export function nftDelta(before: NftState, after: NftState, afterFull: NftTransaction, options: NftDeltaOptions): NftTransaction {
  if (!before.exists) return afterFull;
  const tx = new NftTransaction(after.family, after.table);
  const { full } = options;

  // 1. the table and counters
  if (full || (before.commentsKnown && before.comment !== after.comment)) tx.add({ kind: 'table', ...(after.comment !== undefined ? { comment: after.comment } : {}) });
  for (const name of after.counters) if (full || !before.counters.has(name)) tx.add({ kind: 'counter', name });

  // Sets to declare again: every chain naming one is rewritten.
  const redeclared = new Set<string>();
  for (const [name, s] of after.sets) {
    const prev = before.sets.get(name);
    if (prev && !sameSetDeclaration(prev, s)) redeclared.add(name);
  }
  const staleChains = [...before.chains.values()].filter((c) => !after.chains.has(c.name));
  const cyclic = new Set<string>();
  const { order: staleOrder, refs: staleRefs } = deletionOrder(staleChains);
  {
    // A stale chain deleted after a chain it refers to (only in a cycle) is flushed first.
    const pos = new Map(staleOrder.map((n, i) => [n, i]));
    for (const c of staleChains) for (const t of staleRefs.get(c.name)!.chains) if (pos.has(t) && pos.get(t)! < pos.get(c.name)!) cyclic.add(c.name);
  }

  // 2. chains
  const rewrite: StateChain[] = [];
  for (const [name, c] of after.chains) {
    const prev = before.chains.get(name);
    const namesRedeclared = prev !== undefined && redeclared.size > 0 && [...references(prev).sets].some((s) => redeclared.has(s));
    if (!prev) {
      tx.add(chainObject(c));
      tx.flush({ kind: 'chain', name });
      rewrite.push(c);
    } else if (!sameChainDeclaration(prev, c, false)) {
      tx.flush({ kind: 'chain', name });
      tx.delete({ kind: 'chain', name });
      tx.add(chainObject(c));
      rewrite.push(c);
    } else if (full) {
      tx.add(chainObject(c));
      tx.flush({ kind: 'chain', name });
      rewrite.push(c);
    } else if (!sameRules(prev, c) || namesRedeclared) {
      tx.flush({ kind: 'chain', name });
      rewrite.push(c);
    }
  }
  // Stale chains that name a redeclared set or a stale map (maps are deleted before chains,
  // their elements may go to them), or are in a reference cycle: flushed now.
  const staleMaps = new Set([...before.sets.values()].filter((s) => s.kind === 'map' && !after.sets.has(s.name)).map((s) => s.name));
  for (const c of staleChains) {
    if (cyclic.has(c.name) || [...staleRefs.get(c.name)!.sets].some((s) => redeclared.has(s) || staleMaps.has(s))) tx.flush({ kind: 'chain', name: c.name });
  }

  // 3. sets and maps
  for (const [name, s] of after.sets) {
    const prev = before.sets.get(name);
    if (redeclared.has(name)) tx.delete({ kind: s.kind, name, type: s.type });
    if (!prev || redeclared.has(name) || full) tx.add(setObject(s));
  }

  // 4. elements added or changed
  const gone: Array<{ set: StateSet; key: string }> = [];
  for (const [name, s] of after.sets) {
    if (isDynamicSet(s)) continue;
    const prev = redeclared.has(name) ? undefined : before.sets.get(name);
    // One set in both states (read beside the new one): no element to add, change or delete.
    if (prev === s && !full) continue;
    for (const el of s.elements.values()) {
      const was = prev?.elements.get(el.key);
      if (was && sameElement(was, el) && !full) continue;
      const object = { kind: 'element' as const, container: name, key: el.key.split(' . '), ...(el.value !== '' ? { value: el.value.split(' . ') } : {}), ...(el.comment !== undefined ? { comment: el.comment } : {}) };
      if (was && !sameElement(was, el)) tx.delete(object);
      tx.add(object);
    }
    if (prev) for (const key of prev.elements.keys()) if (!s.elements.has(key)) gone.push({ set: s, key });
  }

  // 5. rules
  for (const c of rewrite) for (const r of c.rules) tx.add({ kind: 'rule', chain: c.name, rule: r.text, ...(r.comment !== undefined ? { comment: r.comment } : {}) });

  // 6. elements that are gone
  for (const { set, key } of gone) tx.delete({ kind: 'element', container: set.name, key: key.split(' . ') });

  // 7. stale sets and maps, chains, counters
  // Maps first (their elements may go to stale chains), sets last (stale chains' rules may
  // name them: an affinity set and its endpoint chain).
  for (const name of staleMaps) tx.delete({ kind: 'map', name, type: before.sets.get(name)!.type });
  for (const name of staleOrder) tx.delete({ kind: 'chain', name });
  for (const [name, s] of before.sets) if (s.kind === 'set' && !after.sets.has(name)) tx.delete({ kind: 'set', name, type: s.type });
  for (const name of before.counters) if (!after.counters.has(name)) tx.delete({ kind: 'counter', name });
  return tx;
}

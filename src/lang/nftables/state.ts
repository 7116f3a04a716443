/**
 * One nftables table as a state: what the kernel holds after a transaction, or what a node's
 * `nft list table` / `nft -j list table` shows. Deltas and diffs compare two states
 * (src/diff/nftables); the readers (read.ts) build them from kpc's own output, nft's listing
 * and nft's JSON.
 *
 * Rules keep two texts: `text` as the source wrote it (a delta writes the new state's rules
 * in kpc's own form) and `key`, the canonical form (canonical.ts) in which a knftables text,
 * nft's listing and nft's JSON of the same rule are equal.
 */

import { canonicalRule } from './canonical.js';
import type { NftBaseChainSpec, NftFamily, NftTransaction } from './model.js';

export interface StateRule {
  text: string;
  key: string;
  comment?: string;
}

export interface StateChain {
  name: string;
  base?: NftBaseChainSpec;
  comment?: string;
  rules: StateRule[];
}

export interface StateElement {
  /** Key words joined by ` . `. */
  key: string;
  /** A map element's value (`goto X`, `drop`), words joined by ` . `; '' for a set element. */
  value: string;
  comment?: string;
}

export interface StateSet {
  kind: 'set' | 'map';
  name: string;
  type: string;
  /** Without `dynamic` (nft sets it itself on a set a rule updates, and its JSON omits it). */
  flags: string[];
  timeout?: number;
  comment?: string;
  /** By key. Not compared for sets the data plane fills (timeout sets). */
  elements: Map<string, StateElement>;
}

export interface NftState {
  family: NftFamily;
  table: string;
  /** False: the source held no such table. */
  exists: boolean;
  comment?: string;
  /** False for nft's JSON (1.0.x omits table and chain comments). */
  commentsKnown: boolean;
  chains: Map<string, StateChain>;
  sets: Map<string, StateSet>;
  counters: Set<string>;
}

/** A state's chains or sets by name, as a reader of the state looks at them: a Map, or objects made when asked for. */
export interface StateObjects<T> {
  readonly size: number;
  get(name: string): T | undefined;
  has(name: string): boolean;
  keys(): Iterable<string>;
  values(): Iterable<T>;
  [Symbol.iterator](): Iterator<[string, T]>;
}

/** A state whose chains and sets may be made only when asked for (diff/nftables/aligned.ts readBeside). */
export interface NftStateView extends Omit<NftState, 'chains' | 'sets'> {
  chains: StateObjects<StateChain>;
  sets: StateObjects<StateSet>;
}

export function emptyState(family: NftFamily, table: string): NftState {
  return { family, table, exists: false, commentsKnown: true, chains: new Map(), sets: new Map(), counters: new Set() };
}

/** A set the data plane fills (affinity sets): its elements are not kube-proxy's. */
export function isDynamicSet(s: StateSet): boolean {
  return s.timeout !== undefined || s.flags.includes('timeout');
}

/**
 * A rule whose canonical key is worked out when first asked for. The key is a function of the
 * text alone, so rules with equal texts have equal keys (sameRules compares texts first): two
 * states of 550,000 rules that differ in one Service canonicalize only that Service's rules.
 */
class TextRule implements StateRule {
  private canonical: string | undefined = undefined;
  declare comment?: string;

  constructor(
    readonly text: string,
    comment: string | undefined,
  ) {
    if (comment !== undefined) this.comment = comment;
  }

  get key(): string {
    return (this.canonical ??= canonicalRule(this.text));
  }
}

export function stateRule(text: string, comment: string | undefined): StateRule {
  return new TextRule(text, comment);
}

/** A transaction's operations applied, in order, to a state (what `nft -f` would leave). */
export function applyTransaction(state: NftState, tx: NftTransaction): NftState {
  if (tx.family !== state.family || tx.table !== state.table) return state;
  for (const { verb, object: o } of tx.ops) {
    switch (o.kind) {
      case 'table':
        if (verb === 'add') {
          state.exists = true;
          if (o.comment !== undefined) state.comment = o.comment;
        } else if (verb === 'delete') {
          state.exists = false;
          delete state.comment;
          state.chains.clear();
          state.sets.clear();
          state.counters.clear();
        } else {
          for (const c of state.chains.values()) c.rules = [];
        }
        break;
      case 'chain': {
        const c = state.chains.get(o.name);
        if (verb === 'add') {
          if (!c) state.chains.set(o.name, { name: o.name, ...(o.base ? { base: o.base } : {}), ...(o.comment !== undefined ? { comment: o.comment } : {}), rules: [] });
          else if (o.comment !== undefined) c.comment = o.comment;
        } else if (verb === 'flush') {
          if (c) c.rules = [];
        } else state.chains.delete(o.name);
        break;
      }
      case 'set':
      case 'map': {
        const s = state.sets.get(o.name);
        if (verb === 'add') {
          if (!s) {
            state.sets.set(o.name, {
              kind: o.kind,
              name: o.name,
              type: o.type,
              flags: (o.flags ?? []).filter((f) => f !== 'dynamic'),
              ...(o.timeout !== undefined ? { timeout: o.timeout } : {}),
              ...(o.comment !== undefined ? { comment: o.comment } : {}),
              elements: new Map(),
            });
          }
        } else if (verb === 'flush') {
          s?.elements.clear();
        } else state.sets.delete(o.name);
        break;
      }
      case 'counter':
        if (verb === 'add') state.counters.add(o.name);
        else if (verb === 'delete') state.counters.delete(o.name);
        break;
      case 'element': {
        const s = state.sets.get(o.container);
        if (!s) break;
        const key = o.key.join(' . ');
        if (verb === 'add') {
          if (!s.elements.has(key)) s.elements.set(key, { key, value: (o.value ?? []).join(' . '), ...(o.comment !== undefined ? { comment: o.comment } : {}) });
        } else if (verb === 'delete') s.elements.delete(key);
        break;
      }
      case 'rule': {
        const c = state.chains.get(o.chain);
        if (c && verb === 'add') c.rules.push(stateRule(o.rule, o.comment));
        break;
      }
    }
  }
  return state;
}

function sameBase(a: NftBaseChainSpec | undefined, b: NftBaseChainSpec | undefined): boolean {
  if (!a || !b) return a === b;
  return a.type === b.type && a.hook === b.hook && a.priority === b.priority;
}

/** Same rules (canonical forms and comments, in order). */
export function sameRules(a: StateChain, b: StateChain): boolean {
  // One chain in both states (a previous state read beside the new one: diff/nftables/aligned.ts).
  if (a === b) return true;
  if (a.rules.length !== b.rules.length) return false;
  // Equal texts have equal keys (stateRule): the key is worked out only where the texts differ.
  return a.rules.every((r, i) => r.comment === b.rules[i]!.comment && (r.text === b.rules[i]!.text || r.key === b.rules[i]!.key));
}

/** Same declaration: type, flags, timeout, comment. */
export function sameSetDeclaration(a: StateSet, b: StateSet): boolean {
  return a.kind === b.kind && a.type === b.type && a.flags.join(',') === b.flags.join(',') && a.timeout === b.timeout && a.comment === b.comment;
}

export function sameElement(a: StateElement, b: StateElement): boolean {
  return a.key === b.key && a.value === b.value && a.comment === b.comment;
}

export function sameChainDeclaration(a: StateChain, b: StateChain, comments: boolean): boolean {
  return sameBase(a.base, b.base) && (!comments || a.comment === b.comment);
}

/**
 * What differs between two states, one line per difference (empty: the same table). Table and
 * chain comments are compared only when both states know them (not nft's JSON); the elements
 * of sets the data plane fills (isDynamicSet) are not compared.
 */
export function stateDifferences(a: NftState, b: NftState): string[] {
  const out: string[] = [];
  const comments = a.commentsKnown && b.commentsKnown;
  if (a.exists !== b.exists) out.push(`table: ${a.exists ? 'present' : 'absent'} vs ${b.exists ? 'present' : 'absent'}`);
  if (comments && a.comment !== b.comment) out.push(`table comment: ${JSON.stringify(a.comment)} vs ${JSON.stringify(b.comment)}`);
  for (const name of new Set([...a.chains.keys(), ...b.chains.keys()])) {
    const x = a.chains.get(name);
    const y = b.chains.get(name);
    if (!x || !y) {
      out.push(`chain ${name}: only in the ${x ? 'first' : 'second'}`);
      continue;
    }
    if (!sameChainDeclaration(x, y, comments)) out.push(`chain ${name}: declaration ${JSON.stringify([x.base, x.comment])} vs ${JSON.stringify([y.base, y.comment])}`);
    if (!sameRules(x, y)) {
      out.push(`chain ${name}: rules\n    ${x.rules.map((r) => `${r.key} #${r.comment ?? ''}`).join('\n    ')}\n  vs\n    ${y.rules.map((r) => `${r.key} #${r.comment ?? ''}`).join('\n    ')}`);
    }
  }
  for (const name of new Set([...a.sets.keys(), ...b.sets.keys()])) {
    const x = a.sets.get(name);
    const y = b.sets.get(name);
    if (!x || !y) {
      out.push(`${(x ?? y)!.kind} ${name}: only in the ${x ? 'first' : 'second'}`);
      continue;
    }
    if (!sameSetDeclaration(x, y)) out.push(`${x.kind} ${name}: declaration ${JSON.stringify([x.type, x.flags, x.timeout, x.comment])} vs ${JSON.stringify([y.type, y.flags, y.timeout, y.comment])}`);
    if (isDynamicSet(x) && isDynamicSet(y)) continue;
    for (const key of new Set([...x.elements.keys(), ...y.elements.keys()])) {
      const ex = x.elements.get(key);
      const ey = y.elements.get(key);
      if (!ex || !ey) out.push(`${x.kind} ${name}: element ${key} only in the ${ex ? 'first' : 'second'}`);
      else if (!sameElement(ex, ey)) out.push(`${x.kind} ${name}: element ${key}: ${JSON.stringify([ex.value, ex.comment])} vs ${JSON.stringify([ey.value, ey.comment])}`);
    }
  }
  for (const name of new Set([...a.counters, ...b.counters])) {
    if (a.counters.has(name) !== b.counters.has(name)) out.push(`counter ${name}: only in the ${a.counters.has(name) ? 'first' : 'second'}`);
  }
  return out;
}

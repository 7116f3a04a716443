/**
 * What every mode's `kpc diff` report shares: changes grouped by Service port (or "node" for
 * what belongs to none), their order, the paint of the human view and its chain and endpoint
 * lines, and the JSON form. Each mode (diff/iptables, diff/nftables, diff/ipvs) decides what
 * belongs to which port from its own state.
 */

export interface RuleRef {
  table: string;
  chain: string;
  rule: string;
}

export interface ChainChange {
  /** `table/chain` (iptables) or the chain's name (nftables). */
  chain: string;
  rulesAdded: string[];
  rulesRemoved: string[];
}

export interface PortChange {
  /** `ns/name:port`, or `node` for what belongs to no Service port. */
  servicePort: string;
  chainsAdded: string[];
  chainsRemoved: string[];
  chainsChanged: ChainChange[];
  rulesAdded: RuleRef[];
  rulesRemoved: RuleRef[];
  endpointsAdded: string[];
  endpointsRemoved: string[];
}

/** How the human view marks what was added, removed, changed, and each port's heading. */
export interface Paint {
  added(s: string): string;
  removed(s: string): string;
  changed(s: string): string;
  heading(s: string): string;
}

export const NO_PAINT: Paint = { added: (s) => s, removed: (s) => s, changed: (s) => s, heading: (s) => s };

/** Service ports by name, "node" last. */
export function sortServicePorts<T extends { servicePort: string }>(ports: Iterable<T>): T[] {
  return [...ports].sort((x, y) => (x.servicePort === 'node' ? 1 : y.servicePort === 'node' ? -1 : x.servicePort < y.servicePort ? -1 : 1));
}

/** The endpoints each Service port gained and lost, added to its change. */
export function addEndpointChanges<T extends PortChange>(before: Map<string, Set<string>>, after: Map<string, Set<string>>, changeOf: (port: string) => T): void {
  for (const port of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(port) ?? new Set<string>();
    const is = after.get(port) ?? new Set<string>();
    const added = [...is].filter((e) => !was.has(e)).sort();
    const removed = [...was].filter((e) => !is.has(e)).sort();
    if (added.length + removed.length === 0) continue;
    const c = changeOf(port);
    c.endpointsAdded.push(...added);
    c.endpointsRemoved.push(...removed);
  }
}

/** The human view's endpoint lines of one port. */
export function endpointLines(c: PortChange, paint: Paint): string {
  let out = '';
  for (const e of c.endpointsAdded) out += paint.added(`  + endpoint ${e}`) + '\n';
  for (const e of c.endpointsRemoved) out += paint.removed(`  - endpoint ${e}`) + '\n';
  return out;
}

/** The human view's chain lines of one port: added, removed, and changed with their rules. */
export function chainLines(c: PortChange, paint: Paint): string {
  let out = '';
  for (const ch of c.chainsAdded) out += paint.added(`  + chain ${ch}`) + '\n';
  for (const ch of c.chainsRemoved) out += paint.removed(`  - chain ${ch}`) + '\n';
  for (const ch of c.chainsChanged) {
    out += paint.changed(`  ~ chain ${ch.chain}`) + '\n';
    for (const r of ch.rulesRemoved) out += paint.removed(`      - ${r}`) + '\n';
    for (const r of ch.rulesAdded) out += paint.added(`      + ${r}`) + '\n';
  }
  return out;
}

/** `-o json`: stable keys, no colour. */
export function reportJSON(report: { changed: boolean; servicePorts: readonly PortChange[] }): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** What differingNames reads of a map. */
export interface NamedObjects<T> {
  get(name: string): T | undefined;
  has(name: string): boolean;
  keys(): Iterable<string>;
  [Symbol.iterator](): Iterator<[string, T]>;
}

/**
 * The names in either map whose objects are not `same` (or are in one map only), sorted: a
 * state of 260,000 chains that differs in a few is compared without sorting every name.
 */
export function differingNames<T>(before: NamedObjects<T>, after: NamedObjects<T>, same: (prev: T, next: T) => boolean): string[] {
  const out: string[] = [];
  for (const [name, prev] of before) {
    const next = after.get(name);
    if (next === undefined || !same(prev, next)) out.push(name);
  }
  for (const name of after.keys()) if (!before.has(name)) out.push(name);
  return out.sort();
}

/** differingNames where only `candidates` can differ (any other name is the same object in both, or in neither). */
export function differingAmong<T>(candidates: Iterable<string>, before: NamedObjects<T>, after: NamedObjects<T>, same: (prev: T, next: T) => boolean): string[] {
  const out: string[] = [];
  for (const name of new Set(candidates)) {
    const prev = before.get(name);
    const next = after.get(name);
    if (prev === undefined ? next !== undefined : next === undefined || !same(prev, next)) out.push(name);
  }
  return out.sort();
}

/**
 * knftables' Fake, for tests: apply the operations of a transaction text (knftables' syntax,
 * one command a line) to an in-memory table and print the result as Fake.Dump() does
 * (fixtures/kube-proxy/nftables/PROVENANCE.md §10: table, chains, sets, maps, counters each
 * sorted by name, then rules by chain name in chain order, then set and map elements). Written
 * from knftables' fake.go semantics, independently of kpc's emitter:
 *
 *   add table/chain/set/map/counter   create when missing (an existing one is kept as is)
 *   flush chain                        drop its rules;  flush set|map: drop its elements
 *   delete X                           remove it (a table: everything)
 *   add element                        insert (an existing key keeps its entry)
 *   delete element                     remove the key
 *   add rule                           append
 *
 * Only what kube-proxy's full syncs use; anything else throws.
 */

interface Container {
  line: string;
  elements: Map<string, string>;
}

export interface FakeTable {
  table?: string;
  chains: Map<string, { line: string; rules: string[] }>;
  sets: Map<string, Container>;
  maps: Map<string, Container>;
  counters: Map<string, string>;
}

export function newFakeTable(): FakeTable {
  return { chains: new Map(), sets: new Map(), maps: new Map(), counters: new Map() };
}

/** The key of an element line: the words between `{ ` and the comment or ` : `. */
function elementKey(line: string): { container: string; key: string } {
  const w = line.split(' ');
  const container = w[4]!;
  const body = line.slice(line.indexOf('{ ') + 2, line.lastIndexOf(' }'));
  const key = body.split(/ comment "| : /)[0]!;
  return { container, key };
}

export function applyTransaction(t: FakeTable, text: string): void {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const w = line.split(' ');
    const [verb, kind] = w;
    const name = w[4] ?? '';
    if (verb === 'add' && kind === 'table') t.table ??= line;
    else if (verb === 'delete' && kind === 'table') {
      // knftables Fake: `fake.Table = nil` — the table's own line (comment) goes too
      delete t.table;
      Object.assign(t, newFakeTable());
    }
    else if (kind === 'chain') {
      if (verb === 'add') {
        if (!t.chains.has(name)) t.chains.set(name, { line, rules: [] });
      } else if (verb === 'flush') {
        const c = t.chains.get(name);
        if (!c) throw new Error(`flush of a missing chain: ${line}`);
        c.rules = [];
      } else if (verb === 'delete') {
        if (!t.chains.delete(name)) throw new Error(`delete of a missing chain: ${line}`);
      } else throw new Error(`unsupported: ${line}`);
    } else if (kind === 'set' || kind === 'map') {
      const m = kind === 'set' ? t.sets : t.maps;
      if (verb === 'add') {
        if (!m.has(name)) m.set(name, { line, elements: new Map() });
      } else if (verb === 'flush') {
        const c = m.get(name);
        if (!c) throw new Error(`flush of a missing ${kind}: ${line}`);
        c.elements.clear();
      } else if (verb === 'delete') {
        if (!m.delete(name)) throw new Error(`delete of a missing ${kind}: ${line}`);
      } else throw new Error(`unsupported: ${line}`);
    } else if (kind === 'counter') {
      if (verb === 'add') {
        if (!t.counters.has(name)) t.counters.set(name, line);
      } else if (verb === 'delete') {
        if (!t.counters.delete(name)) throw new Error(`delete of a missing counter: ${line}`);
      } else throw new Error(`unsupported: ${line}`);
    } else if (kind === 'element') {
      const { container, key } = elementKey(line);
      const c = t.sets.get(container) ?? t.maps.get(container);
      if (!c) throw new Error(`element of a missing set or map: ${line}`);
      if (verb === 'add') {
        if (!c.elements.has(key)) c.elements.set(key, line);
      } else if (verb === 'delete') {
        if (!c.elements.delete(key)) throw new Error(`delete of a missing element: ${line}`);
      } else throw new Error(`unsupported: ${line}`);
    } else if (kind === 'rule') {
      if (verb !== 'add') throw new Error(`unsupported: ${line}`);
      const c = t.chains.get(name);
      if (!c) throw new Error(`rule in a missing chain: ${line}`);
      c.rules.push(line);
    } else throw new Error(`unsupported: ${line}`);
  }
}

const byName = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Fake.Dump(): the table's objects as `add` commands. */
export function dumpFakeTable(t: FakeTable): string {
  const out: string[] = [];
  if (t.table) out.push(t.table);
  for (const [, c] of byName(t.chains)) out.push(c.line);
  for (const [, s] of byName(t.sets)) out.push(s.line);
  for (const [, s] of byName(t.maps)) out.push(s.line);
  for (const [, c] of byName(t.counters)) out.push(c);
  for (const [, c] of byName(t.chains)) out.push(...c.rules);
  for (const [, s] of byName(t.sets)) out.push(...s.elements.values());
  for (const [, s] of byName(t.maps)) out.push(...s.elements.values());
  return out.join('\n') + '\n';
}

/** The Dump() after running the transactions on an empty table. */
export function dumpAfter(...transactions: string[]): string {
  const t = newFakeTable();
  for (const tx of transactions) applyTransaction(t, tx);
  return dumpFakeTable(t);
}

/**
 * `kpc diff`: what changed between two iptables states, grouped by Service port — chains
 * added, removed and changed, rules added and removed in the top-level chains, endpoints
 * added and removed.
 *
 * Which Service port a chain belongs to is read from the rules themselves, so a node's
 * iptables-save works as well as kpc's output: a top-level rule's comment names the port
 * (`"ns/svc:http cluster IP"`, or the bare name in KUBE-NODEPORTS), and every chain reached
 * from that rule by jumps belongs to the same port. What belongs to no port (KUBE-POSTROUTING,
 * KUBE-FORWARD, ...) is reported under "node".
 */

import { addEndpointChanges, chainLines, endpointLines, NO_PAINT, reportJSON as portReportJSON, sortServicePorts, type Paint, type PortChange } from '../port-report.js';
import { commentedServiceJumps, serviceJumps } from './jumps.js';
import { isBuiltTable, isKubeProxyChain, isServiceChain, ruleEditScript, sameRules, TextChain, TOP_LEVEL_CHAINS, type ChainLookup, type ChainState, type IptablesState, type TableState } from './state.js';

export type { ChainChange, PortChange, RuleRef } from '../port-report.js';

export interface DiffReport {
  changed: boolean;
  servicePorts: PortChange[];
}

const SPN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/;

/** The Service port a top-level rule's comment names, if any. */
function portOfComment(comment: string | undefined): string | undefined {
  if (comment === undefined) return undefined;
  const first = comment.split(' ')[0]!;
  return SPN.test(first) ? first : undefined;
}

/** The commented top-level rules' jumps to per-service chains, in the walk's order. */
export function topJumps(chains: ChainLookup): Array<[port: string, chain: string]> {
  const out: Array<[string, string]> = [];
  for (const top of TOP_LEVEL_CHAINS) {
    const chain = chains.get(top);
    if (chain === undefined) continue;
    for (const [comment, jump] of commentedServiceJumps(chain)) {
      const port = portOfComment(comment);
      if (port) out.push([port, jump]);
    }
  }
  return out;
}

/** Chain → Service port in one table, and whether some chain is reached from two ports. */
export interface Walked {
  owner: Map<string, string>;
  contended: boolean;
}

/**
 * Which Service port owns each chain reached from `starts`: the jumped-to chain first, then
 * every chain reached from it by jumps; a chain reached from two ports keeps the first
 * (`contended` says it happened: then which is first depends on every rule of the table).
 */
export function walk(chains: ChainLookup, starts: Iterable<[string, string]>): Walked {
  const owner = new Map<string, string>();
  let contended = false;
  const queue: string[] = []; // chains whose owner is set and whose jumps are not followed yet
  for (const [port, jump] of starts) {
    const was = owner.get(jump);
    if (was === undefined) {
      owner.set(jump, port);
      queue.push(jump);
    } else if (was !== port) contended = true;
  }
  while (queue.length > 0) {
    const name = queue.pop()!;
    const chain = chains.get(name);
    if (chain === undefined) continue;
    const port = owner.get(name)!;
    for (const jump of serviceJumps(chain)) {
      const was = owner.get(jump);
      if (was === undefined) {
        owner.set(jump, port);
        queue.push(jump);
      } else if (was !== port) contended = true;
    }
  }
  return { owner, contended };
}

/** One table's owners: each chain's Service port, and the chains of some ports. */
interface TableOwners {
  owner(name: string): string | undefined;
  /** The chains owned by one of `ports`, with their port. */
  ownedBy(ports: ReadonlySet<string>): Iterable<[string, string]>;
}

function wholeOwners(w: Walked): TableOwners {
  return {
    owner: (name) => w.owner.get(name),
    *ownedBy(ports) {
      for (const e of w.owner) if (ports.has(e[1])) yield e;
    },
  };
}

/**
 * The previous table's owners from the new table's, where every chain has one owner in it and
 * the top-level chains are the same: only the ports whose chains reach a differing chain are
 * walked again. A port none of whose chains differs reaches the same chains over the same
 * jumps in both tables (a jump into a differing chain would make its chain's port one of the
 * walked), so it owns the same chains. Undefined where that does not hold (the whole walk).
 */
function ownersBeside(
  b: ChainLookup,
  a: ChainLookup,
  starts: Array<[string, string]>,
  differing: readonly string[],
  after: Walked,
  /** The port of a chain `after` did not walk, when it is a walk of some ports only. */
  unwalked?: (name: string) => string | undefined,
): { owners: TableOwners; walked: Set<string> } | undefined {
  if (after.contended) return undefined;
  for (const top of TOP_LEVEL_CHAINS) {
    const prev = b.get(top);
    const next = a.get(top);
    if ((prev !== undefined || next !== undefined) && prev !== next && !sameRules(prev, next)) return undefined;
  }
  const ports = new Set<string>();
  for (const name of differing) {
    const port = after.owner.get(name);
    if (port !== undefined) ports.add(port);
  }
  // The same top-level chains: the same jumps from them.
  const again = walk(b, starts.filter(([port]) => ports.has(port)));
  if (again.contended) return undefined;
  for (const [name] of again.owner) {
    const was = after.owner.get(name) ?? unwalked?.(name);
    if (was !== undefined && !ports.has(was)) return undefined; // reached from two ports
  }
  return {
    walked: ports,
    owners: {
      owner(name) {
        const port = again.owner.get(name);
        if (port !== undefined) return port;
        const other = after.owner.get(name);
        return other !== undefined && !ports.has(other) ? other : undefined;
      },
      ownedBy: (only) => [...again.owner].filter(([, port]) => only.has(port)),
    },
  };
}

/** A chain's name and its state on each side (undefined: not on that side). */
type Sides = [name: string, prev: ChainState | undefined, next: ChainState | undefined];

/**
 * One table, before and after, as the report reads it. `differing` holds every chain that is
 * not the same object on both sides: a chain shared by both states is the same chain, and two
 * kpc outputs share almost all. `every` goes over every name, for the one step that looks at
 * unchanged chains too (portsWithEndpointChanges); it is undefined when the sides know only
 * the differing chains and look the others up in the new ruleset (diffChangedStates).
 */
interface TablePair {
  before: ChainLookup;
  after: ChainLookup;
  /** `after` is made from the emitter's ruleset (see walkOfDiffering). */
  built: boolean;
  differing: readonly Sides[];
  every?: () => Iterable<Sides>;
}

const TABLES = ['filter', 'nat'] as const;
type TablePairs = Record<(typeof TABLES)[number], TablePair>;

/** The pair of two whole tables. */
function pairOfTables(b: TableState, a: TableState): TablePair {
  const differing: Sides[] = [];
  for (const [name, prev] of b) {
    const next = a.get(name);
    if (prev !== next) differing.push([name, prev, next]);
  }
  for (const [name, next] of a) if (!b.has(name)) differing.push([name, undefined, next]);
  function* every(): Iterable<Sides> {
    for (const [name, prev] of b) yield [name, prev, a.get(name)];
    for (const [name, next] of a) if (!b.has(name)) yield [name, undefined, next];
  }
  return { before: b, after: a, built: isBuiltTable(a), differing, every };
}

/**
 * Each per-service chain that differs between the sides or is in the new one only: what
 * ownersBeside walks again the ports of. A SEP chain whose rules are equal but not by text is
 * one too (its DNAT is compared).
 */
function differingServiceChains(pair: TablePair): string[] {
  const names: string[] = [];
  for (const [name, prev, next] of pair.differing) {
    if (!isServiceChain(name)) continue;
    if (prev === undefined || next === undefined || !sameRules(prev, next) || (name.startsWith('KUBE-SEP-') && !sameSpecs(prev, next))) names.push(name);
  }
  return names;
}

/** The service port the emitter built a chain of `table` for (undefined for a fixed chain). */
function builtPort(table: ChainLookup, name: string): string | undefined {
  const chain = table.get(name);
  return chain instanceof TextChain ? chain.port : undefined;
}

/**
 * The whole walk of a table kpc's emitter built (isBuiltTable), as far as the report looks:
 * the walk of the ports that own a differing chain only (at 20,000 Services, following the
 * jumps of 263,000 chains to learn the owners of a few was most of `kpc diff`'s own time).
 * The emitter writes each service port's own chains apart, declared before any jump to them
 * and jumped to only from that port's top-level rules and chains, and tags each with its port
 * (Table.declareNew): so no chain is reached from two ports, and the chains a port's walk
 * reaches are the ones the whole walk gives it. The walk checks itself against the tags
 * (every start's jump and every chain reached); undefined when one disagrees (then the whole
 * walk). test/diff/iptables/built-walk.test.ts holds the emitter to it.
 */
export function walkOfDiffering(a: ChainLookup, starts: Array<[string, string]>, differing: readonly string[]): Walked | undefined {
  for (const [port, jump] of starts) if (builtPort(a, jump) !== port) return undefined;
  const ports = new Set<string>();
  for (const name of differing) {
    if (!a.has(name)) continue; // in the previous table only: no owner here
    const port = builtPort(a, name);
    if (port === undefined) return undefined; // a per-service chain without its tag
    ports.add(port);
  }
  const walked = walk(a, starts.filter(([port]) => ports.has(port)));
  if (walked.contended) return undefined;
  for (const [name, port] of walked.owner) if (builtPort(a, name) !== port) return undefined;
  return walked;
}

function portChange(map: Map<string, PortChange>, port: string): PortChange {
  let c = map.get(port);
  if (!c) {
    c = { servicePort: port, chainsAdded: [], chainsRemoved: [], chainsChanged: [], rulesAdded: [], rulesRemoved: [], endpointsAdded: [], endpointsRemoved: [] };
    map.set(port, c);
  }
  return c;
}

/** The endpoints (DNAT destinations of the SEP chains) of each of `ports`. */
function endpointsOf(chains: ChainLookup, owners: TableOwners, ports: ReadonlySet<string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [name, port] of owners.ownedBy(ports)) {
    const chain = chains.get(name);
    if (chain === undefined || !name.startsWith('KUBE-SEP-')) continue;
    for (const r of chain.rules) if (r.dnat) (out.get(port) ?? out.set(port, new Set()).get(port)!).add(r.dnat);
  }
  return out;
}

/** The same rule texts (so the same DNAT destinations: sameRules also takes rules equal by canonical form). */
function sameSpecs(a: ChainState, b: ChainState): boolean {
  if (a === b || (a.text !== undefined && a.text === b.text)) return true;
  return a.rules.length === b.rules.length && a.rules.every((r, k) => r.spec === b.rules[k]!.spec);
}

/**
 * The ports whose endpoints may differ: the owners, on either side, of each SEP chain that
 * differs, is on one side only, or changed owner. Any other port's SEP chains are the same
 * chains with the same owner on both sides, so the same endpoints (and parsing the DNAT rule
 * of every SEP chain of 20,000 Services twice is skipped).
 */
function portsWithEndpointChanges(every: Iterable<Sides>, ownBefore: TableOwners, ownAfter: TableOwners): Set<string> {
  const ports = new Set<string>();
  for (const [name, prev, next] of every) {
    if (!name.startsWith('KUBE-SEP-')) continue;
    const was = ownBefore.owner(name);
    const is = ownAfter.owner(name);
    if (was === is && prev !== undefined && next !== undefined && sameSpecs(prev, next)) continue;
    if (was !== undefined) ports.add(was);
    if (is !== undefined) ports.add(is);
  }
  return ports;
}

function ruleDiff(before: ChainState, after: ChainState): { added: string[]; removed: string[] } {
  const script = ruleEditScript(before.rules, after.rules) ?? [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const e of script) {
    if (e.op === 'insert') added.push(after.rules[e.newIndex]!.spec);
    else if (e.op === 'delete') removed.push(before.rules[e.oldIndex]!.spec);
  }
  return { added, removed };
}

/**
 * Whether every chain the report looks at is the same in both states: kube-proxy's chains and
 * the top-level ones (whose jumps decide which Service port owns which chain), present in both
 * with the same rules, or in neither. Then the report is empty, and working out the owners and
 * endpoints of 250,000 chains (parsing every rule) can be skipped.
 */
function sameReportedChains(pairs: TablePairs): boolean {
  for (const table of TABLES) {
    const looked = (n: string) => isKubeProxyChain(table, n) || TOP_LEVEL_CHAINS.has(n);
    for (const [name, prev, next] of pairs[table].differing) if (looked(name) && !sameRules(prev, next)) return false;
  }
  return true;
}

/**
 * The names of kube-proxy's chains (other components' chains are not kpc's business) that
 * differ between the sides, or are on one only, sorted.
 */
function differingChains(table: string, pair: TablePair): Sides[] {
  return pair.differing.filter(([name, prev, next]) => !sameRules(prev, next) && isKubeProxyChain(table, name)).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
}

export function diffStates(before: IptablesState, after: IptablesState): DiffReport {
  const table = (state: IptablesState, name: 'filter' | 'nat') => state.get(name) ?? new Map<string, ChainState>();
  const pairs = { filter: pairOfTables(table(before, 'filter'), table(after, 'filter')), nat: pairOfTables(table(before, 'nat'), table(after, 'nat')) };
  return reportOf(pairs)!; // whole tables: `every` is known
}

/**
 * diffStates of the whole states, from the chains that differ (readChangedChains) and the new
 * ruleset's chains looked up by name (BuiltChains): every other chain is the same text on both
 * sides, so it is the new one's on both. The report walks only the ports of the differing
 * chains, so it makes states for those few; where it would look at every chain (the top-level
 * chains differ, or a walk disagrees with the tags), it is made from `whole()` instead.
 */
export function diffChangedStates(
  changed: { before: IptablesState; after: IptablesState },
  built: (table: 'filter' | 'nat') => ChainLookup,
  whole: () => { before: IptablesState; after: IptablesState },
): DiffReport {
  const pairOf = (name: 'filter' | 'nat'): TablePair => {
    const was = changed.before.get(name) ?? new Map<string, ChainState>();
    const is = changed.after.get(name) ?? new Map<string, ChainState>();
    const chains = built(name);
    const differing: Sides[] = [];
    for (const [chain, prev] of was) differing.push([chain, prev, chains.get(chain)]);
    for (const chain of is.keys()) if (!was.has(chain)) differing.push([chain, undefined, chains.get(chain)]);
    // A chain that differs is the previous text's; one in the new text only is not there; any other is the new one.
    const previous = (chain: string): ChainState | undefined => was.get(chain) ?? (is.has(chain) ? undefined : chains.get(chain));
    return { before: { get: previous, has: (chain) => previous(chain) !== undefined }, after: chains, built: true, differing };
  };
  const report = reportOf({ filter: pairOf('filter'), nat: pairOf('nat') });
  if (report !== undefined) return report;
  const states = whole();
  return diffStates(states.before, states.after);
}

/**
 * Each rule text's comment, of its first rule with that text: looked up per added or removed
 * rule, and when every cluster IP moves KUBE-SERVICES has as many of those as rules (110,000).
 */
function commentsBySpec(chain: ChainState): Map<string, string | undefined> {
  const comments = new Map<string, string | undefined>();
  for (const r of chain.rules) if (!comments.has(r.spec)) comments.set(r.spec, r.comment);
  return comments;
}

/** The report of both tables; undefined when it needs `every` and a pair has none. */
function reportOf(pairs: TablePairs): DiffReport | undefined {
  if (sameReportedChains(pairs)) return { changed: false, servicePorts: [] };
  const ownBefore = new Map<string, TableOwners>();
  const ownAfter = new Map<string, TableOwners>();
  // The ports whose endpoints may differ in nat, when only they were walked again.
  let walkedAgain: Set<string> | undefined;
  for (const table of TABLES) {
    const pair = pairs[table];
    const { before: b, after: a } = pair;
    const starts = topJumps(a);
    // A built table's owners beside the previous one's: a walk of the differing ports on each side.
    const differing = differingServiceChains(pair);
    const partial = pair.built ? walkOfDiffering(a, starts, differing) : undefined;
    let beside = partial && ownersBeside(b, a, starts, differing, partial, (name) => builtPort(a, name));
    // The whole walks follow every chain: only for whole tables.
    if (!beside && pair.every === undefined) return undefined;
    const walkedAfter = beside ? partial! : walk(a, starts);
    if (!beside) beside = ownersBeside(b, a, starts, differing, walkedAfter);
    ownAfter.set(table, wholeOwners(walkedAfter));
    ownBefore.set(table, beside?.owners ?? wholeOwners(walk(b, topJumps(b))));
    if (table === 'nat') walkedAgain = beside?.walked;
  }
  const ports = new Map<string, PortChange>();
  const portOf = (table: string, name: string) => ownAfter.get(table)!.owner(name) ?? ownBefore.get(table)!.owner(name) ?? 'node';

  for (const table of TABLES) {
    for (const [name, prev, next] of differingChains(table, pairs[table])) {
      const key = `${table}/${name}`;
      // A fixed chain the new output does not write (KUBE-FIREWALL on IPv6 or without
      // localhost node ports) is left alone, by kube-proxy and by the delta: not a removal.
      if (!next && !isServiceChain(name)) continue;
      if (!prev) {
        portChange(ports, portOf(table, name)).chainsAdded.push(key);
      } else if (!next) {
        portChange(ports, portOf(table, name)).chainsRemoved.push(key);
      } else if (TOP_LEVEL_CHAINS.has(name)) {
        // Top-level rules are attributed to the Service port their comment names.
        const { added, removed } = ruleDiff(prev, next);
        const after = commentsBySpec(next);
        const before = commentsBySpec(prev);
        for (const rule of added) portChange(ports, portOfComment(after.get(rule)) ?? 'node').rulesAdded.push({ table, chain: name, rule });
        for (const rule of removed) portChange(ports, portOfComment(before.get(rule)) ?? 'node').rulesRemoved.push({ table, chain: name, rule });
      } else {
        const { added, removed } = ruleDiff(prev, next);
        portChange(ports, portOf(table, name)).chainsChanged.push({ chain: key, rulesAdded: added, rulesRemoved: removed });
      }
    }
  }

  const nat = pairs.nat;
  // Walked again: every other port owns the same chains, unchanged, on both sides.
  const changing = walkedAgain ?? (nat.every && portsWithEndpointChanges(nat.every(), ownBefore.get('nat')!, ownAfter.get('nat')!));
  if (changing === undefined) return undefined;
  const epBefore = endpointsOf(nat.before, ownBefore.get('nat')!, changing);
  const epAfter = endpointsOf(nat.after, ownAfter.get('nat')!, changing);
  addEndpointChanges(epBefore, epAfter, (port) => portChange(ports, port));

  const servicePorts = sortServicePorts(ports.values());
  return { changed: servicePorts.length > 0, servicePorts };
}

/** The human view: one block per Service port. */
export function renderReport(report: DiffReport, paint: Paint = NO_PAINT): string {
  if (!report.changed) return 'no differences\n';
  let out = '';
  for (const c of report.servicePorts) {
    out += `${paint.heading(c.servicePort === 'node' ? 'node-wide chains' : c.servicePort)}\n`;
    out += endpointLines(c, paint);
    out += chainLines(c, paint);
    for (const r of c.rulesRemoved) out += paint.removed(`  - rule ${r.table}/${r.chain}: ${r.rule}`) + '\n';
    for (const r of c.rulesAdded) out += paint.added(`  + rule ${r.table}/${r.chain}: ${r.rule}`) + '\n';
  }
  return out;
}

/** `-o json`: stable keys, no colour. */
export function reportJSON(report: DiffReport): string {
  return portReportJSON(report);
}

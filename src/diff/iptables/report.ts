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

import { addEndpointChanges, chainLines, differingNames, endpointLines, NO_PAINT, reportJSON as portReportJSON, sortServicePorts, type Paint, type PortChange } from '../port-report.js';
import { commentedServiceJumps, serviceJumps } from './jumps.js';
import { isBuiltTable, isKubeProxyChain, isServiceChain, ruleEditScript, sameRules, TextChain, TOP_LEVEL_CHAINS, type ChainState, type IptablesState, type TableState } from './state.js';

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
export function topJumps(chains: TableState): Array<[port: string, chain: string]> {
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
export function walk(chains: TableState, starts: Iterable<[string, string]>): Walked {
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
  b: TableState,
  a: TableState,
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

/**
 * Each per-service chain that differs between `b` and `a` or is in `a` only: what ownersBeside
 * walks again the ports of. A SEP chain whose rules are equal but not by text is one too (its
 * DNAT is compared).
 */
function differingServiceChains(b: TableState, a: TableState): string[] {
  const names: string[] = [];
  for (const [name, prev] of b) {
    const next = a.get(name);
    if (isServiceChain(name) && prev !== next && (!sameRules(prev, next) || (name.startsWith('KUBE-SEP-') && !sameSpecs(prev, next!)))) names.push(name);
  }
  for (const name of a.keys()) if (!b.has(name) && isServiceChain(name)) names.push(name);
  return names;
}

/** The service port the emitter built a chain of `table` for (undefined for a fixed chain). */
function builtPort(table: TableState, name: string): string | undefined {
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
export function walkOfDiffering(a: TableState, starts: Array<[string, string]>, differing: readonly string[]): Walked | undefined {
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
function endpointsOf(chains: TableState, owners: TableOwners, ports: ReadonlySet<string>): Map<string, Set<string>> {
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
function portsWithEndpointChanges(before: TableState, after: TableState, ownBefore: TableOwners, ownAfter: TableOwners): Set<string> {
  const ports = new Set<string>();
  const look = (name: string, prev: ChainState | undefined, next: ChainState | undefined): void => {
    if (!name.startsWith('KUBE-SEP-')) return;
    const was = ownBefore.owner(name);
    const is = ownAfter.owner(name);
    if (was === is && prev !== undefined && next !== undefined && sameSpecs(prev, next)) return;
    if (was !== undefined) ports.add(was);
    if (is !== undefined) ports.add(is);
  };
  for (const [name, prev] of before) look(name, prev, after.get(name));
  for (const [name, next] of after) if (!before.has(name)) look(name, undefined, next);
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
function sameReportedChains(before: IptablesState, after: IptablesState): boolean {
  for (const table of ['filter', 'nat'] as const) {
    const b = before.get(table) ?? new Map<string, ChainState>();
    const a = after.get(table) ?? new Map<string, ChainState>();
    const looked = (n: string) => isKubeProxyChain(table, n) || TOP_LEVEL_CHAINS.has(n);
    for (const [name, prev] of b) if (looked(name) && !sameRules(prev, a.get(name))) return false;
    for (const name of a.keys()) if (looked(name) && !b.has(name)) return false;
  }
  return true;
}

/**
 * The names of kube-proxy's chains (other components' chains are not kpc's business) that
 * differ between `b` and `a`, or are in one only, sorted.
 */
function differingChains(table: string, b: TableState, a: TableState): string[] {
  return differingNames(b, a, sameRules).filter((name) => isKubeProxyChain(table, name));
}

export function diffStates(before: IptablesState, after: IptablesState): DiffReport {
  if (sameReportedChains(before, after)) return { changed: false, servicePorts: [] };
  const ownBefore = new Map<string, TableOwners>();
  const ownAfter = new Map<string, TableOwners>();
  // The ports whose endpoints may differ in nat, when only they were walked again.
  let walkedAgain: Set<string> | undefined;
  for (const table of ['filter', 'nat'] as const) {
    const b = before.get(table) ?? new Map<string, ChainState>();
    const a = after.get(table) ?? new Map<string, ChainState>();
    const starts = topJumps(a);
    // A built table's owners beside the previous one's: a walk of the differing ports on each side.
    const differing = differingServiceChains(b, a);
    const partial = isBuiltTable(a) ? walkOfDiffering(a, starts, differing) : undefined;
    let beside = partial && ownersBeside(b, a, starts, differing, partial, (name) => builtPort(a, name));
    const walkedAfter = beside ? partial! : walk(a, starts);
    if (!beside) beside = ownersBeside(b, a, starts, differing, walkedAfter);
    ownAfter.set(table, wholeOwners(walkedAfter));
    ownBefore.set(table, beside?.owners ?? wholeOwners(walk(b, topJumps(b))));
    if (table === 'nat') walkedAgain = beside?.walked;
  }
  const ports = new Map<string, PortChange>();
  const portOf = (table: string, name: string) => ownAfter.get(table)!.owner(name) ?? ownBefore.get(table)!.owner(name) ?? 'node';

  for (const table of ['filter', 'nat'] as const) {
    const b = before.get(table) ?? new Map<string, ChainState>();
    const a = after.get(table) ?? new Map<string, ChainState>();
    for (const name of differingChains(table, b, a)) {
      const key = `${table}/${name}`;
      const prev = b.get(name);
      const next = a.get(name);
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
        const byComment = (spec: string, rules: ChainState) => portOfComment(rules.rules.find((r) => r.spec === spec)?.comment) ?? 'node';
        for (const rule of added) portChange(ports, byComment(rule, next)).rulesAdded.push({ table, chain: name, rule });
        for (const rule of removed) portChange(ports, byComment(rule, prev)).rulesRemoved.push({ table, chain: name, rule });
      } else {
        const { added, removed } = ruleDiff(prev, next);
        portChange(ports, portOf(table, name)).chainsChanged.push({ chain: key, rulesAdded: added, rulesRemoved: removed });
      }
    }
  }

  const natBefore = before.get('nat') ?? new Map<string, ChainState>();
  const natAfter = after.get('nat') ?? new Map<string, ChainState>();
  // Walked again: every other port owns the same chains, unchanged, on both sides.
  const changing = walkedAgain ?? portsWithEndpointChanges(natBefore, natAfter, ownBefore.get('nat')!, ownAfter.get('nat')!);
  const epBefore = endpointsOf(natBefore, ownBefore.get('nat')!, changing);
  const epAfter = endpointsOf(natAfter, ownAfter.get('nat')!, changing);
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

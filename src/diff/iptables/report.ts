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
import { serviceJumps } from './jumps.js';
import { isKubeProxyChain, isServiceChain, ruleEditScript, sameRules, TOP_LEVEL_CHAINS, type ChainState, type IptablesState, type TableState } from './state.js';

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

/** Per table, chain → Service port. */
type Owners = Map<string, Map<string, string>>;

/** Which Service port owns each chain, by following jumps from the commented top-level rules. */
function ownership(state: IptablesState): Owners {
  const owners: Owners = new Map();
  for (const [table, chains] of state) {
    const owner = new Map<string, string>();
    owners.set(table, owner);
    const queue: string[] = []; // chains whose owner is set and whose jumps are not followed yet
    for (const top of TOP_LEVEL_CHAINS) {
      for (const r of chains.get(top)?.rules ?? []) {
        const port = portOfComment(r.comment);
        if (port && r.jump && isServiceChain(r.jump) && !owner.has(r.jump)) {
          owner.set(r.jump, port);
          queue.push(r.jump);
        }
      }
    }
    while (queue.length > 0) {
      const name = queue.pop()!;
      const chain = chains.get(name);
      if (chain === undefined) continue;
      const port = owner.get(name)!;
      for (const jump of serviceJumps(chain)) {
        if (!owner.has(jump)) {
          owner.set(jump, port);
          queue.push(jump);
        }
      }
    }
  }
  return owners;
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
function endpointsOf(chains: TableState, owner: Map<string, string> | undefined, ports: ReadonlySet<string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [name, chain] of chains) {
    const port = owner?.get(name);
    if (!port || !ports.has(port) || !name.startsWith('KUBE-SEP-')) continue;
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
function portsWithEndpointChanges(before: TableState, after: TableState, ownBefore: Map<string, string> | undefined, ownAfter: Map<string, string> | undefined): Set<string> {
  const ports = new Set<string>();
  const look = (name: string, prev: ChainState | undefined, next: ChainState | undefined): void => {
    if (!name.startsWith('KUBE-SEP-')) return;
    const was = ownBefore?.get(name);
    const is = ownAfter?.get(name);
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
  const names: string[] = [];
  for (const [name, prev] of b) {
    const next = a.get(name);
    if (next !== undefined && sameRules(prev, next)) continue;
    if (isKubeProxyChain(table, name)) names.push(name);
  }
  for (const name of a.keys()) if (!b.has(name) && isKubeProxyChain(table, name)) names.push(name);
  return names.sort();
}

export function diffStates(before: IptablesState, after: IptablesState): DiffReport {
  if (sameReportedChains(before, after)) return { changed: false, servicePorts: [] };
  const ownBefore = ownership(before);
  const ownAfter = ownership(after);
  const ports = new Map<string, PortChange>();
  const portOf = (table: string, name: string) => ownAfter.get(table)?.get(name) ?? ownBefore.get(table)?.get(name) ?? 'node';

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
  const changing = portsWithEndpointChanges(natBefore, natAfter, ownBefore.get('nat'), ownAfter.get('nat'));
  const epBefore = endpointsOf(natBefore, ownBefore.get('nat'), changing);
  const epAfter = endpointsOf(natAfter, ownAfter.get('nat'), changing);
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

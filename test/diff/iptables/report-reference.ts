/**
 * The `kpc diff` report by its definition, for tests: every rule parsed, owners by following
 * every jump, every port's endpoints collected on both sides (src/diff/iptables/report.ts as
 * first written, before it scanned kpc's own chains and looked only at the ports whose
 * endpoint chains differ). src/diff/iptables/report.ts must give the same report.
 */

import { addEndpointChanges, sortServicePorts, type PortChange } from '../../../src/diff/port-report.js';
import type { DiffReport } from '../../../src/diff/iptables/report.js';
import { isKubeProxyChain, isServiceChain, ruleEditScript, sameRules, TOP_LEVEL_CHAINS, type ChainState, type IptablesState, type TableState } from '../../../src/diff/iptables/state.js';

const SPN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/;

/** The Service port a top-level rule's comment names, if any. */
function portOfComment(comment: string | undefined): string | undefined {
  if (comment === undefined) return undefined;
  const first = comment.split(' ')[0]!;
  return SPN.test(first) ? first : undefined;
}

/** table/chain → Service port, by following jumps from the commented top-level rules. */
function ownership(state: IptablesState): Map<string, string> {
  const owner = new Map<string, string>();
  for (const [table, chains] of state) {
    const queue: Array<[string, string]> = [];
    for (const top of TOP_LEVEL_CHAINS) {
      for (const r of chains.get(top)?.rules ?? []) {
        const port = portOfComment(r.comment);
        if (port && r.jump && isServiceChain(r.jump) && !owner.has(`${table}/${r.jump}`)) {
          owner.set(`${table}/${r.jump}`, port);
          queue.push([r.jump, port]);
        }
      }
    }
    while (queue.length > 0) {
      const [chain, port] = queue.pop()!;
      for (const r of chains.get(chain)?.rules ?? []) {
        if (r.jump && isServiceChain(r.jump) && !owner.has(`${table}/${r.jump}`)) {
          owner.set(`${table}/${r.jump}`, port);
          queue.push([r.jump, port]);
        }
      }
    }
  }
  return owner;
}

function portChange(map: Map<string, PortChange>, port: string): PortChange {
  let c = map.get(port);
  if (!c) {
    c = { servicePort: port, chainsAdded: [], chainsRemoved: [], chainsChanged: [], rulesAdded: [], rulesRemoved: [], endpointsAdded: [], endpointsRemoved: [] };
    map.set(port, c);
  }
  return c;
}

function endpointsOf(chains: TableState, owner: Map<string, string>, table: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [name, chain] of chains) {
    const port = owner.get(`${table}/${name}`);
    if (!port || !name.startsWith('KUBE-SEP-')) continue;
    for (const r of chain.rules) if (r.dnat) (out.get(port) ?? out.set(port, new Set()).get(port)!).add(r.dnat);
  }
  return out;
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

export function referenceDiff(before: IptablesState, after: IptablesState): DiffReport {
  if (sameReportedChains(before, after)) return { changed: false, servicePorts: [] };
  const ownBefore = ownership(before);
  const ownAfter = ownership(after);
  const ports = new Map<string, PortChange>();
  const portOf = (key: string) => ownAfter.get(key) ?? ownBefore.get(key) ?? 'node';

  for (const table of ['filter', 'nat'] as const) {
    const b = before.get(table) ?? new Map<string, ChainState>();
    const a = after.get(table) ?? new Map<string, ChainState>();
    // Only kube-proxy's chains are compared; other components' chains are not kpc's business.
    const names = new Set([...b.keys(), ...a.keys()].filter((n) => isKubeProxyChain(table, n)));
    for (const name of [...names].sort()) {
      const key = `${table}/${name}`;
      const prev = b.get(name);
      const next = a.get(name);
      if (prev && next && sameRules(prev, next)) continue;
      // A fixed chain the new output does not write (KUBE-FIREWALL on IPv6 or without
      // localhost node ports) is left alone, by kube-proxy and by the delta: not a removal.
      if (!next && !isServiceChain(name)) continue;
      if (!prev) {
        portChange(ports, portOf(key)).chainsAdded.push(key);
      } else if (!next) {
        portChange(ports, portOf(key)).chainsRemoved.push(key);
      } else if (TOP_LEVEL_CHAINS.has(name)) {
        // Top-level rules are attributed to the Service port their comment names.
        const { added, removed } = ruleDiff(prev, next);
        const byComment = (spec: string, rules: ChainState) => portOfComment(rules.rules.find((r) => r.spec === spec)?.comment) ?? 'node';
        for (const rule of added) portChange(ports, byComment(rule, next)).rulesAdded.push({ table, chain: name, rule });
        for (const rule of removed) portChange(ports, byComment(rule, prev)).rulesRemoved.push({ table, chain: name, rule });
      } else {
        const { added, removed } = ruleDiff(prev, next);
        portChange(ports, portOf(key)).chainsChanged.push({ chain: key, rulesAdded: added, rulesRemoved: removed });
      }
    }
  }

  const epBefore = endpointsOf(before.get('nat') ?? new Map(), ownBefore, 'nat');
  const epAfter = endpointsOf(after.get('nat') ?? new Map(), ownAfter, 'nat');
  addEndpointChanges(epBefore, epAfter, (port) => portChange(ports, port));

  const servicePorts = sortServicePorts(ports.values());
  return { changed: servicePorts.length > 0, servicePorts };
}


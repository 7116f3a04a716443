/**
 * `kpc diff` in nftables mode: what changed between two states of kube-proxy's table, grouped
 * by Service port — map and set elements added and removed, chains added, removed and changed
 * (with their rules), endpoints added and removed. The shape of the iptables report
 * (src/diff/iptables/report.ts: the same fields, the same human view and exit codes), plus
 * `elementsAdded` / `elementsRemoved`.
 *
 * Which Service port an object belongs to is read from the state itself, so a node's
 * `nft list table` works as well as kpc's output:
 *   - a per-service chain or affinity set by its name (`service-HASH-ns/name/proto/port`,
 *     `endpoint-HASH-ns/name/proto/port__IP/PORT`, kube-proxy's servicePortChainNameBase);
 *   - a map element by the chain its verdict goes to, or by its comment (`ns/name:port`, the
 *     no-endpoint maps), or by its key (a ClusterIP in cluster-ips, a node port in
 *     localhost-nodeport-reject-ports, an endpoint in hairpin-connections) through the other
 *     elements and rules of the same state.
 * What belongs to no Service port (the fixed chains, node port IPs) is reported under "node".
 */

import { editScript } from '../sequence.js';
import { ruleTokens, isDynamicSet, sameElement, sameRules, type NftStateView, type StateChain, type StateElement, type StateSet } from '../../lang/nftables/index.js';
import { addEndpointChanges, chainLines, differingAmong, differingNames, endpointLines, NO_PAINT, reportJSON, sortServicePorts, type Paint, type PortChange } from '../port-report.js';

export interface ElementRef {
  /** The set or map. */
  set: string;
  /** `KEY [comment "C"] [: VALUE]`, as nft writes it. */
  element: string;
}

/** A Service port's changes, with the map and set elements nftables mode adds to them. */
export interface NftPortChange extends PortChange {
  elementsAdded: ElementRef[];
  elementsRemoved: ElementRef[];
}

export interface NftDiffReport {
  changed: boolean;
  servicePorts: NftPortChange[];
}

// kube-proxy's per-service object names: PREFIX-HASH8-ns/name/proto/port[__IP/PORT]
const PER_PORT_PREFIX = '^(?:service|local|external|firewall|endpoint|affinity)-[A-Z2-7]{8}-';
const OBJECT_NAME = new RegExp(`${PER_PORT_PREFIX}([a-z0-9][-a-z0-9.]*)/([a-z0-9][-a-z0-9.]*)/(tcp|udp|sctp)/([^_/]*?)(?:__(.+))?$`);

/** The Service port (`ns/name:port`) a kube-proxy chain or set name belongs to. */
export function servicePortOfName(name: string): string | undefined {
  const m = OBJECT_NAME.exec(name);
  if (!m) return undefined;
  return m[4] === '' ? `${m[1]}/${m[2]}` : `${m[1]}/${m[2]}:${m[4]}`;
}

const SPN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/;

function elementText(el: StateElement): string {
  return `${el.key}${el.comment !== undefined ? ` comment "${el.comment}"` : ''}${el.value !== '' ? ` : ${el.value}` : ''}`;
}

/** The chain a verdict (`goto X`, `jump X`) names. */
function verdictChain(value: string): string | undefined {
  const m = /^(?:goto|jump)\s+(\S+)$/.exec(value);
  return m?.[1];
}

/**
 * What is worked out of a chain or set once, however many states hold it (a previous state
 * read beside the new one shares its equal objects with it: diff/nftables/aligned.ts).
 */
const chainEndpoints = new WeakMap<StateChain, ChainEndpoint[]>();

interface ChainEndpoint {
  /** `IP:PORT`, `[IPv6]:PORT`. */
  endpoint: string;
  /** `IP . PORT`, as a hairpin element's key words 0 and 3 name it. */
  key: string | undefined;
}
const chainTargets = new WeakMap<StateChain, string[]>();

/** Endpoints (`IP:PORT`, `[IPv6]:PORT`) a chain's rules DNAT to. */
function endpointsOfChain(c: StateChain): ChainEndpoint[] {
  let out = chainEndpoints.get(c);
  if (!out) {
    out = readEndpoints(c).map((endpoint) => {
      const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(endpoint);
      return { endpoint, key: m ? `${m[1]} . ${m[2]}` : undefined };
    });
    chainEndpoints.set(c, out);
  }
  return out;
}

/** The chains a chain's rules jump or go to, in order. */
function targetsOfChain(c: StateChain): string[] {
  let out = chainTargets.get(c);
  if (!out) {
    out = [];
    for (const r of c.rules) {
      const toks = ruleTokens(r.key);
      for (let i = 0; i + 1 < toks.length; i++) if (toks[i] === 'goto' || toks[i] === 'jump') out.push(toks[i + 1]!);
    }
    chainTargets.set(c, out);
  }
  return out;
}

interface MapEntry {
  el: StateElement;
  /** The chain its verdict goes to. */
  verdict: string | undefined;
  /** Its key's words. */
  words: string[];
}
const setEntries = new WeakMap<StateSet, MapEntry[]>();

/** A map's elements with their verdict chains and key words. */
function mapEntries(s: StateSet): MapEntry[] {
  let out = setEntries.get(s);
  if (!out) {
    out = [...s.elements.values()].map((el) => ({ el, verdict: verdictChain(el.value), words: el.key.split(' . ') }));
    setEntries.set(s, out);
  }
  return out;
}

function readEndpoints(c: StateChain): string[] {
  const out: string[] = [];
  const fmt = (ip: string, port: string) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
  for (const r of c.rules) {
    const toks = ruleTokens(r.key);
    const i = toks.indexOf('dnat');
    if (i < 0) continue;
    const to = toks.indexOf('to', i);
    if (to < 0) continue;
    if (toks[to + 1] === 'numgen') {
      // numgen random mod N map { 0 : IP . PORT, 1 : … }
      const open = toks.indexOf('{', to);
      const close = toks.indexOf('}', open);
      const inner = toks.slice(open + 1, close);
      const parts: string[][] = [[]];
      for (const t of inner) {
        if (t === ',') parts.push([]);
        else parts[parts.length - 1]!.push(t);
      }
      for (const p of parts) {
        // [index, ':', IP, '.', PORT]
        if (p.length === 5 && p[1] === ':' && p[3] === '.') out.push(fmt(p[2]!, p[4]!));
      }
    } else {
      const t = toks[to + 1];
      if (t) out.push(t);
    }
  }
  return out;
}

/** A name with the prefix and hash kube-proxy gives its per-service-port chains and sets. */
const PER_PORT_NAME = new RegExp(PER_PORT_PREFIX);

/**
 * The Service port a per-service-port object's name says, when it says it whole: a name
 * hashAndTruncate cut (`...` at the end) may have lost its port name.
 */
function portOfReadableName(name: string): string | undefined {
  return name.endsWith('...') ? undefined : servicePortOfName(name);
}

/**
 * Who owns what in one state, worked out for the objects asked about (a report of one changed
 * Service port reads that port's chains, not the 40,000 others).
 *
 * A chain kube-proxy names per Service port belongs to that port: by its name, or, where the
 * name does not say it (cut short), by the port whose chains jump to it. The fixed chains
 * (services, mark-for-masquerade, …) belong to no port, though every port's chains jump to some
 * of them. When no name is cut short, ownership is the name's alone, and a port's endpoints are
 * the DNAT targets of its own chains; otherwise the jump walk runs over the whole state.
 */
class Ownership {
  /** Chains by port: the port their names say (one pass over the names), and the jump walk's. */
  private named?: Map<string, string[]>;
  /** Every per-port chain's port, by name or by the jump walk: only when some name is cut short. */
  private walked?: Map<string, string> | null;
  private readonly endpointsOfPort = new Map<string, Set<string>>();
  private byIP?: Map<string, Set<string>>;
  private byNodePort?: Map<string, string>;
  private byEndpoint?: Map<string, string>;

  constructor(readonly state: NftStateView) {}

  /** The port a chain belongs to, if any. */
  chainPort(name: string): string | undefined {
    const walked = this.walk();
    return walked ? walked.get(name) : this.state.chains.has(name) ? portOfReadableName(name) : undefined;
  }

  /** The port a set or map belongs to, if any (by its name: affinity sets). */
  setPort(name: string): string | undefined {
    return this.state.sets.has(name) ? portOfReadableName(name) : undefined;
  }

  /** Whether ownership needs the jump walk: whether some per-port chain's name does not say its port. */
  get walks(): boolean {
    return this.walk() !== null;
  }

  private index(): Map<string, string[]> {
    if (this.named) return this.named;
    const named = new Map<string, string[]>();
    let unreadable = false;
    for (const name of this.state.chains.keys()) {
      if (!PER_PORT_NAME.test(name)) continue;
      const port = portOfReadableName(name);
      if (port === undefined) unreadable = true;
      else (named.get(port) ?? named.set(port, []).get(port)!).push(name);
    }
    this.named = named;
    if (!unreadable) this.walked = null;
    return named;
  }

  private walk(): Map<string, string> | null {
    if (this.walked !== undefined) return this.walked;
    const named = this.index();
    if (this.walked === null) return null;
    // Chains reached from an owned chain belong to the same port (names cut short).
    const walked = new Map<string, string>();
    for (const [port, names] of named) for (const name of names) walked.set(name, port);
    const queue = [...walked.entries()];
    while (queue.length > 0) {
      const [name, port] = queue.pop()!;
      const chain = this.state.chains.get(name);
      for (const target of chain ? targetsOfChain(chain) : []) {
        if (this.state.chains.has(target) && PER_PORT_NAME.test(target) && !walked.has(target)) {
          walked.set(target, port);
          named.get(port)!.push(target);
          queue.push([target, port]);
        }
      }
    }
    this.walked = walked;
    return walked;
  }

  /** The endpoints a port's chains DNAT to. */
  endpoints(port: string): Set<string> {
    let out = this.endpointsOfPort.get(port);
    if (out) return out;
    out = new Set();
    this.walk(); // the chains it reaches are added to their ports'
    const names = this.index().get(port) ?? [];
    for (const name of names) for (const { endpoint } of endpointsOfChain(this.state.chains.get(name)!)) out.add(endpoint);
    this.endpointsOfPort.set(port, out);
    return out;
  }

  /** Every port's endpoints (the jump walk's case: a chain may change owner without changing). */
  allEndpoints(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    this.walk();
    for (const port of this.index().keys()) {
      const eps = this.endpoints(port);
      if (eps.size > 0) out.set(port, eps);
    }
    return out;
  }

  /** The port of a map element whose verdict goes to `chain`. */
  private ofVerdict(el: StateElement, chain: string | undefined): string | undefined {
    const port = chain !== undefined ? this.chainPort(chain) : undefined;
    if (port) return port;
    if (el.comment !== undefined && SPN.test(el.comment)) return el.comment;
    return undefined;
  }

  /** The ports of the ClusterIPs and node ports the dispatch maps send to a port's chains. */
  private readMaps(): void {
    this.byIP = new Map();
    this.byNodePort = new Map();
    for (const s of this.state.sets.values()) {
      if (s.kind !== 'map') continue;
      for (const { el, verdict, words } of mapEntries(s)) {
        const port = this.ofVerdict(el, verdict);
        if (!port) continue;
        if (words.length === 3) (this.byIP.get(words[0]!) ?? this.byIP.set(words[0]!, new Set()).get(words[0]!)!).add(port);
        if (words.length === 2 && (s.name === 'service-nodeports' || s.name === 'no-endpoint-nodeports')) this.byNodePort.set(el.key, port);
      }
    }
  }

  /** The port of each endpoint (`IP . PORT`) some port's chain DNATs to. */
  private readEndpointKeys(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [name, c] of this.state.chains) {
      const port = this.chainPort(name);
      if (!port) continue;
      for (const { key } of endpointsOfChain(c)) if (key !== undefined) out.set(key, port);
    }
    return out;
  }

  /** The port of an element of set/map `set`, if any. */
  ofElement(set: string, el: StateElement): string | undefined {
    const own = this.ofVerdict(el, verdictChain(el.value));
    if (own) return own;
    if (set === 'cluster-ips') {
      if (!this.byIP) this.readMaps();
      // One port: that port's; several: the Service's (`ns/name`).
      const ports = [...(this.byIP!.get(el.key) ?? [])];
      return ports.length === 1 ? ports[0] : ports.length > 1 ? ports[0]!.split(':')[0] : undefined;
    }
    if (set === 'localhost-nodeport-reject-ports') {
      if (!this.byNodePort) this.readMaps();
      return this.byNodePort!.get(el.key);
    }
    const words = el.key.split(' . ');
    if (set === 'hairpin-connections' && words.length === 4) {
      this.byEndpoint ??= this.readEndpointKeys();
      return this.byEndpoint.get(`${words[0]} . ${words[3]}`);
    }
    return undefined;
  }
}

/**
 * The endpoint changes of the ports whose chains changed: with ownership by name, a port's
 * endpoints differ only where one of its own chains was added, removed or changed.
 */
function endpointChanges(ob: Ownership, oa: Ownership, changedChains: string[], changeOf: (port: string) => NftPortChange): void {
  if (ob.walks || oa.walks) {
    addEndpointChanges(ob.allEndpoints(), oa.allEndpoints(), changeOf);
    return;
  }
  const ports = new Set<string>();
  for (const name of changedChains) {
    for (const port of [ob.chainPort(name), oa.chainPort(name)]) if (port) ports.add(port);
  }
  const only = (o: Ownership) => new Map([...ports].map((p) => [p, o.endpoints(p)] as const).filter(([, eps]) => eps.size > 0));
  addEndpointChanges(only(ob), only(oa), changeOf);
}

function portChange(map: Map<string, NftPortChange>, port: string): NftPortChange {
  let c = map.get(port);
  if (!c) {
    c = { servicePort: port, chainsAdded: [], chainsRemoved: [], chainsChanged: [], rulesAdded: [], rulesRemoved: [], endpointsAdded: [], endpointsRemoved: [], elementsAdded: [], elementsRemoved: [] };
    map.set(port, c);
  }
  return c;
}

function ruleDiff(before: StateChain, after: StateChain): { added: string[]; removed: string[] } {
  const show = (r: { text: string; comment?: string }) => (r.comment !== undefined ? `${r.text} comment "${r.comment}"` : r.text);
  const script = editScript(before.rules.map((r) => `${r.key}\u0000${r.comment ?? ''}`), after.rules.map((r) => `${r.key}\u0000${r.comment ?? ''}`)) ?? [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const e of script) {
    if (e.op === 'insert') added.push(show(after.rules[e.newIndex]!));
    else if (e.op === 'delete') removed.push(show(before.rules[e.oldIndex]!));
  }
  return { added, removed };
}

/**
 * The report between two states. `differing`, when given, holds every chain and set name whose
 * object is not the same one in both (diff/nftables/aligned.ts readBeside): only those are
 * compared, and objects nobody asks about are never made.
 */
export function diffNftStates(before: NftStateView, after: NftStateView, differing?: { chains: readonly string[]; sets: readonly string[] }): NftDiffReport {
  const ob = new Ownership(before);
  const oa = new Ownership(after);
  const ports = new Map<string, NftPortChange>();
  const chainPort = (name: string) => oa.chainPort(name) ?? ob.chainPort(name) ?? 'node';
  const changedChains: string[] = [];

  const sameChain = (prev: StateChain, next: StateChain) => prev === next || (sameRules(prev, next) && JSON.stringify(prev.base) === JSON.stringify(next.base));
  const chains = differing ? differingAmong(differing.chains, before.chains, after.chains, sameChain) : differingNames(before.chains, after.chains, sameChain);
  for (const name of chains) {
    const prev = before.chains.get(name);
    const next = after.chains.get(name);
    changedChains.push(name);
    const port = chainPort(name);
    if (!prev) portChange(ports, port).chainsAdded.push(name);
    else if (!next) portChange(ports, port).chainsRemoved.push(name);
    else {
      const { added, removed } = ruleDiff(prev, next);
      portChange(ports, port).chainsChanged.push({ chain: name, rulesAdded: added, rulesRemoved: removed });
    }
  }

  // One set in both states (read beside the new one): nothing changed in it.
  const sameSet = (prev: StateSet, next: StateSet) => prev === next;
  const sets = differing ? differingAmong(differing.sets, before.sets, after.sets, sameSet) : differingNames(before.sets, after.sets, sameSet);
  for (const name of sets) {
    const prev = before.sets.get(name);
    const next = after.sets.get(name);
    const own = oa.setPort(name) ?? ob.setPort(name);
    if (!prev || !next) {
      // A per-endpoint affinity set appears or goes with its endpoint chain; a fixed map with its feature.
      const list = !prev ? portChange(ports, own ?? 'node').elementsAdded : portChange(ports, own ?? 'node').elementsRemoved;
      list.push({ set: name, element: `(${(prev ?? next)!.kind} ${!prev ? 'added' : 'removed'})` });
      if (!(prev ?? next)!.elements.size || isDynamicSet((prev ?? next)!)) continue;
    }
    if ((prev && isDynamicSet(prev)) || (next && isDynamicSet(next))) continue;
    const pe = prev?.elements ?? new Map<string, StateElement>();
    const ne = next?.elements ?? new Map<string, StateElement>();
    for (const [key, el] of ne) {
      const was = pe.get(key);
      if (was && sameElement(was, el)) continue;
      if (was) portChange(ports, ob.ofElement(name, was) ?? oa.ofElement(name, was) ?? 'node').elementsRemoved.push({ set: name, element: elementText(was) });
      portChange(ports, oa.ofElement(name, el) ?? ob.ofElement(name, el) ?? 'node').elementsAdded.push({ set: name, element: elementText(el) });
    }
    for (const [key, el] of pe) {
      if (ne.has(key)) continue;
      portChange(ports, ob.ofElement(name, el) ?? oa.ofElement(name, el) ?? 'node').elementsRemoved.push({ set: name, element: elementText(el) });
    }
  }

  endpointChanges(ob, oa, changedChains, (port) => portChange(ports, port));
  for (const name of [...new Set([...before.counters, ...after.counters])].sort()) {
    if (before.counters.has(name) === after.counters.has(name)) continue;
    (after.counters.has(name) ? portChange(ports, 'node').elementsAdded : portChange(ports, 'node').elementsRemoved).push({ set: name, element: '(counter)' });
  }
  if (before.exists !== after.exists) portChange(ports, 'node')[after.exists ? 'chainsAdded' : 'chainsRemoved'].unshift(`(table ${after.family} ${after.table})`);

  const servicePorts = sortServicePorts(ports.values());
  return { changed: servicePorts.length > 0, servicePorts };
}

/** The human view: one block per Service port. */
export function renderNftReport(report: NftDiffReport, paint: Paint = NO_PAINT): string {
  if (!report.changed) return 'no differences\n';
  let out = '';
  for (const c of report.servicePorts) {
    out += `${paint.heading(c.servicePort === 'node' ? 'node-wide objects' : c.servicePort)}\n`;
    out += endpointLines(c, paint);
    for (const e of c.elementsAdded) out += paint.added(`  + element ${e.set} { ${e.element} }`) + '\n';
    for (const e of c.elementsRemoved) out += paint.removed(`  - element ${e.set} { ${e.element} }`) + '\n';
    out += chainLines(c, paint);
  }
  return out;
}

/** `-o json`: stable keys, no colour. */
export function nftReportJSON(report: NftDiffReport): string {
  return reportJSON(report);
}

/**
 * kpc watch's fast path for iptables mode: the delta of a change to a few Services (a Service
 * or EndpointSlice event) without building the whole ruleset again.
 *
 * What is kept between events (no rule text of the per-service chains):
 *   - the service ports in IR order (their keys, for finding a Service's ports);
 *   - the full rule lists of the shared chains (KUBE-SERVICES, KUBE-NODEPORTS,
 *     KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL), with how many rules each service port
 *     has in each, so a port's rules are found by adding up the counts before it;
 *   - kube-proxy's other fixed chains and the built-in chains' jumps (they do not depend on
 *     the Services).
 *
 * Per change: the touched Services' old service ports and new ones are each written alone
 * (emit/iptables iptablesSync().writePort, the function a full build runs for each port, so
 * the same rules), the shared chains' new lists spliced together, and the delta computed by
 * diff/iptables renderDelta — compile --previous's own function — on two partial states: the
 * fixed and shared chains whole, plus the per-service chains of the touched ports (old and new).
 * Every per-service chain of an untouched port is the same on both sides (its name is a hash
 * of its own service port or endpoint, and its rules depend only on that port, the node, the
 * knobs and largeClusterMode), so renderDelta of the whole states would find nothing else:
 * the bytes are those of the full comparison.
 *
 * A change that flips largeClusterMode (1,000 endpoints in all), or anything else (a Node,
 * the configuration), goes through `rebuild`: the old state from the old service ports, the
 * new from the new IR, compared whole.
 */

import { buildObservedRuleset, buildRuleset, iptablesSync, LARGE_CLUSTER_ENDPOINTS_THRESHOLD, type IptablesSync } from '../emit/iptables/index.js';
import { renderRulesetText } from '../lang/iptables/print.js';
import { newRuleset, type Ruleset, type TableName } from '../lang/iptables/ruleset.js';
import { BUILTIN_CHAIN_NAMES } from '../lang/iptables/chains.js';
import { renderDelta } from '../diff/iptables/delta.js';
import { countServiceRules, ownText, RuleFacts, RuleState, stateOfRuleset, type ChainState, type IptablesState, type TableState } from '../diff/iptables/state.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import { serviceRanges, servicePortKey, type FastPath, type FastStep } from './fast.js';

const SHARED: ReadonlyArray<readonly [TableName, string]> = [
  ['filter', 'KUBE-SERVICES'],
  ['filter', 'KUBE-EXTERNAL-SERVICES'],
  ['filter', 'KUBE-NODEPORTS'],
  ['filter', 'KUBE-PROXY-FIREWALL'],
  ['nat', 'KUBE-SERVICES'],
  ['nat', 'KUBE-NODEPORTS'],
];
const TABLES: readonly TableName[] = ['filter', 'nat'];

interface SharedChain {
  table: TableName;
  name: string;
  /** Every rule of the chain, in order: the head's, each service port's (IR order), the tail's. */
  rules: RuleState[];
  /** Rules before the first service port's. */
  head: number;
  /** counts[i]: the rules of service port i. */
  counts: number[];
}

/** One shared chain as a state compares it: whole, or the window a change is in. */
type SharedPart = Pick<ChainState, 'rules' | 'window'>;

function totalEndpoints(ports: readonly ServicePort[]): number {
  let n = 0;
  for (const sp of ports) n += sp.endpoints.length;
  return n;
}

/** The chains of a ruleset that are not declared by name (the per-service chains), as states. */
function ownChains(rs: Ruleset, facts: RuleFacts, into: Map<TableName, ChainState[]>): void {
  for (const t of TABLES) {
    const table = rs[t];
    for (const chain of table.allChains()) {
      if (table.isNamed(chain)) continue;
      const prefix = `-A ${chain.name} `.length;
      into.get(t)!.push({ name: chain.name, builtin: false, rules: chain.lines().map((l) => new RuleState(l.slice(prefix), facts)) });
    }
  }
}

export class IptablesWatch implements FastPath {
  private readonly facts: RuleFacts;
  private ir!: ProxyIR;
  private sync!: IptablesSync;
  private keys: string[] = [];
  private shared: SharedChain[] = [];
  /** The fixed chains other than the shared ones, and the built-in chains (standalone). */
  private fixed: Map<TableName, ChainState[]> = new Map();
  private endpoints = 0;

  /** The state of the last full build (for rebuild's comparison), until taken. */
  private built: { state: IptablesState; rs: Ruleset } | undefined;

  constructor(
    ir: ProxyIR,
    private readonly standalone: boolean,
    facts?: RuleFacts,
  ) {
    // Bounded: rule texts come and go with every event, the memo must not keep them all.
    this.facts = facts ?? new RuleFacts(ir.family, 50_000);
    this.adopt(ir);
  }

  /** The full output of the state's first build, once (the watch's first step prints it). */
  takeInitialText(): string {
    const rs = this.built!.rs;
    this.built = undefined;
    return renderRulesetText(rs);
  }

  /** Take `ir` as the state: one full build, observed to count each port's rules in the shared chains. */
  private adopt(ir: ProxyIR): void {
    const counts = SHARED.map(() => [] as number[]);
    const rs = buildObservedRuleset(ir, { standalone: this.standalone }, (_sp, write, r) => {
      const before = SHARED.map(([t, c]) => r[t].declare(c).count);
      write();
      SHARED.forEach(([t, c], k) => counts[k]!.push(r[t].declare(c).count - before[k]!));
    });
    const sync = iptablesSync(ir);
    const head = newRuleset();
    sync.declare(head);
    const state = stateOfRuleset(rs, this.facts);
    this.shared = SHARED.map(([t, c], k) => ({ table: t, name: c, rules: state.get(t)!.get(c)!.rules, head: head[t].declare(c).count, counts: counts[k]! }));
    this.fixed = new Map(TABLES.map((t) => [t, [] as ChainState[]]));
    const sharedNames = new Set(SHARED.map(([t, c]) => `${t}/${c}`));
    for (const t of TABLES) {
      for (const chain of rs[t].allChains()) {
        if (!rs[t].isNamed(chain) && !BUILTIN_CHAIN_NAMES.has(chain.name)) continue;
        if (sharedNames.has(`${t}/${chain.name}`)) continue;
        this.fixed.get(t)!.push(state.get(t)!.get(chain.name)!);
      }
    }
    this.ir = ir;
    this.sync = sync;
    this.keys = ir.servicePorts.map(servicePortKey);
    this.endpoints = totalEndpoints(ir.servicePorts);
    this.built = { state, rs };
  }

  /** The service ports held now, in IR order. */
  get servicePorts(): readonly ServicePort[] {
    return this.ir.servicePorts;
  }

  /**
   * The delta when the service ports of the Services `services` (`ns/name`) become `ports`
   * (sorted, as buildIR gives them), or undefined when only a rebuild can say (the change
   * flips largeClusterMode).
   */
  change(services: readonly string[], ports: readonly ServicePort[]): FastStep | undefined {
    const sps = this.ir.servicePorts;
    // The touched ranges, each a Service's ports (contiguous: keys start with ns/name NUL).
    const ranges = serviceRanges(this.keys, services);
    const newKeys = ports.map(servicePortKey);
    let removedEndpoints = 0;
    for (const r of ranges) removedEndpoints += totalEndpoints(sps.slice(r.lo, r.hi));
    const endpoints = this.endpoints - removedEndpoints + totalEndpoints(ports);
    if (endpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD !== this.sync.largeClusterMode) return undefined;

    const oldOwn = new Map(TABLES.map((t) => [t, [] as ChainState[]]));
    const newOwn = new Map(TABLES.map((t) => [t, [] as ChainState[]]));
    if (ranges.length === 1) return this.changeOne(ranges[0]!, ports, oldOwn, newOwn, endpoints);
    const sharedAfter = this.shared.map((c) => ({ rules: c.rules, counts: c.counts }));
    let nextPorts: ServicePort[] = sps;
    let nextKeys: string[] = this.keys;
    // Last range first, so the earlier ranges' positions still hold.
    for (const r of [...ranges].reverse()) {
      const mine = ports.filter((_, i) => newKeys[i]!.startsWith(`${r.service}\u0000`));
      this.written(sps.slice(r.lo, r.hi), oldOwn);
      const now = this.written(mine, newOwn);
      sharedAfter.forEach((c, k) => {
        const chain = this.shared[k]!;
        let oldCount = 0;
        for (let i = r.lo; i < r.hi; i++) oldCount += c.counts[i]!;
        const added = now.shared[k]!;
        if (r.hi - r.lo === mine.length && oldCount === 0 && added.length === 0) return; // nothing of these ports here, before or after
        let start = chain.head;
        for (let i = 0; i < r.lo; i++) start += c.counts[i]!;
        c.rules = c.rules.slice(0, start).concat(added, c.rules.slice(start + oldCount));
        c.counts = c.counts.slice(0, r.lo).concat(now.counts[k]!, c.counts.slice(r.hi));
      });
      nextPorts = nextPorts.slice(0, r.lo).concat(mine, nextPorts.slice(r.hi));
      nextKeys = nextKeys.slice(0, r.lo).concat(mine.map(servicePortKey), nextKeys.slice(r.hi));
    }
    const before = this.partialState(this.shared.map((c) => ({ rules: c.rules })), oldOwn);
    const after = this.partialState(sharedAfter.map((c) => ({ rules: c.rules })), newOwn);
    const text = renderDelta(before, after, { full: false });
    return {
      text,
      before: () => countServiceRules(before),
      ports: nextPorts.length,
      commit: () => {
        this.shared.forEach((c, k) => {
          c.rules = sharedAfter[k]!.rules;
          c.counts = sharedAfter[k]!.counts;
        });
        this.ir = { ...this.ir, servicePorts: nextPorts };
        this.keys = nextKeys;
        this.endpoints = endpoints;
      },
    };
  }

  /**
   * One Service's ports changed (the common case): each shared chain is compared as the window
   * its rules are in (ChainState.window), with no copy of the chain's other rules, and the
   * state is changed in place when the step is kept. A window is used only where renderDelta
   * is sure to edit rule by rule (few edits against the chain's length); elsewhere the whole
   * new chain is built.
   */
  private changeOne(r: { service: string; lo: number; hi: number }, ports: readonly ServicePort[], oldOwn: Map<TableName, ChainState[]>, newOwn: Map<TableName, ChainState[]>, endpoints: number): FastStep {
    const sps = this.ir.servicePorts;
    const mine = ports.filter((sp) => servicePortKey(sp).startsWith(`${r.service}\u0000`));
    this.written(sps.slice(r.lo, r.hi), oldOwn);
    const now = this.written(mine, newOwn);
    const before: SharedPart[] = [];
    const after: SharedPart[] = [];
    const edits: Array<() => void> = [];
    this.shared.forEach((c, k) => {
      let oldCount = 0;
      for (let i = r.lo; i < r.hi; i++) oldCount += c.counts[i]!;
      const added = now.shared[k]!;
      const counts = now.counts[k]!;
      edits.push(() => c.counts.splice(r.lo, r.hi - r.lo, ...counts));
      if (oldCount === 0 && added.length === 0) {
        // Nothing of this Service here, before or after: the same (empty) part on both sides.
        before.push({ rules: [] });
        after.push({ rules: [] });
        return;
      }
      let start = c.head;
      for (let i = 0; i < r.lo; i++) start += c.counts[i]!;
      const total = c.rules.length - oldCount + added.length;
      const changed = oldCount + added.length;
      if (changed <= 1000 && 2 * changed < total + 2) {
        before.push({ rules: c.rules.slice(start, start + oldCount), window: { offset: start, total: c.rules.length } });
        after.push({ rules: added, window: { offset: start, total } });
        edits.push(() => c.rules.splice(start, oldCount, ...added));
      } else {
        const whole = c.rules.slice(0, start).concat(added, c.rules.slice(start + oldCount));
        before.push({ rules: c.rules });
        after.push({ rules: whole });
        edits.push(() => (c.rules = whole));
      }
    });
    const beforeState = this.partialState(before, oldOwn);
    const text = renderDelta(beforeState, this.partialState(after, newOwn), { full: false });
    return {
      text,
      // Service entries before: the whole KUBE-SERVICES chains (the state is not changed yet).
      before: () => countServiceRules(this.partialState(this.shared.map((c) => ({ rules: c.rules })), oldOwn)),
      ports: sps.length - (r.hi - r.lo) + mine.length,
      commit: () => {
        for (const edit of edits) edit();
        this.ir.servicePorts.splice(r.lo, r.hi - r.lo, ...mine);
        this.keys.splice(r.lo, r.hi - r.lo, ...mine.map(servicePortKey));
        this.endpoints = endpoints;
      },
    };
  }

  /**
   * The delta to a new IR (a Node, the configuration, or largeClusterMode changed): the old
   * state built again from the ports held, the new from the IR, compared whole.
   */
  rebuild(ir: ProxyIR): FastStep {
    const before = stateOfRuleset(buildRuleset(this.ir, { standalone: this.standalone }), this.facts);
    const next = new IptablesWatch(ir, this.standalone, this.facts);
    const after = next.built!.state;
    next.built = undefined;
    return {
      text: renderDelta(before, after, { full: false }),
      before: () => countServiceRules(before),
      ports: ir.servicePorts.length,
      commit: () => {
        this.ir = next.ir;
        this.sync = next.sync;
        this.keys = next.keys;
        this.shared = next.shared;
        this.fixed = next.fixed;
        this.endpoints = next.endpoints;
      },
    };
  }

  /** The ports' rules written alone: per shared chain the new rules and per-port counts; their own chains into `own`. */
  private written(ports: readonly ServicePort[], own: Map<TableName, ChainState[]>): { shared: RuleState[][]; counts: number[][] } {
    const rs = newRuleset();
    this.sync.declare(rs);
    const base = SHARED.map(([t, c]) => rs[t].declare(c).count);
    const counts = SHARED.map(() => [] as number[]);
    for (const sp of ports) {
      const before = SHARED.map(([t, c]) => rs[t].declare(c).count);
      this.sync.writePort(rs, sp);
      SHARED.forEach(([t, c], k) => counts[k]!.push(rs[t].declare(c).count - before[k]!));
    }
    // Every rule written out of the tables' pending runs before reading any chain.
    for (const t of TABLES) rs[t].allChains();
    const shared = SHARED.map(([t, c], k) => {
      const prefix = `-A ${c} `.length;
      return rs[t].declare(c).lines().slice(base[k]!).map((l) => new RuleState(ownText(l.slice(prefix)), this.facts));
    });
    ownChains(rs, this.facts, own);
    return { shared, counts };
  }

  private partialState(shared: SharedPart[], own: Map<TableName, ChainState[]>): IptablesState {
    const state: IptablesState = new Map();
    for (const t of TABLES) {
      const table: TableState = new Map();
      for (const c of this.fixed.get(t)!) table.set(c.name, c);
      this.shared.forEach((c, k) => {
        if (c.table === t) table.set(c.name, { name: c.name, builtin: false, ...shared[k]! });
      });
      for (const c of own.get(t)!) table.set(c.name, c);
      state.set(t, table);
    }
    return state;
  }
}

/**
 * kpc watch's fast path for IPVS mode: the delta of a change to a few Services without
 * syncing and reading back the whole bundle again.
 *
 * Every part of kube-proxy's IPVS state is keyed, none is ordered by Service: virtual servers
 * by `ip:port/PROTOCOL` (ipvs.rules is sorted), set entries by their text (each set sorted),
 * kube-ipvs0's addresses by address (sorted). So the delta of a change is diff/ipvs
 * computeIpvsDelta — compile --previous's own function — on two partial node states: the
 * touched Services' part before and after, each read back through the readers compile uses
 * (readIpvsTable, readIpsetState, readAddresses, readState) from the full sync's own writers
 * (emit/ipvs syncServicePort, renderIpvsRules, renderIpsetRules, renderAddresses). Everything
 * else is the same on both sides and gives no line; the lines of the touched part come in the
 * same order as in the whole comparison, which sorts by key.
 *
 * What the other service ports share with the touched ones is counted, not listed:
 *   - a set entry or a bound address written by several ports (two Services with the same
 *     local endpoint write one KUBE-LOOP-BACK entry) is in the state while any writes it, so
 *     the partial states hold an entry on the side where its count is above 0;
 *   - a virtual server written by a touched port and by another one too (two Services sharing
 *     an external IP and port) belongs to the last writer in sync order: such a change goes
 *     through `rebuild` (the whole comparison), as the nftables path does for shared elements.
 * iptables.rules depends on the state only through which sets are empty and the LB VIPs the
 * node may not reach (KUBE-IPVS-OUT-FILTER, in sync order); it is small and written whole
 * again, and compared only when its text changed. kube-ipvs0.addrs, which the delta carries
 * whole, is kept as a sorted list and its text.
 */

import { applyScriptOptions, emitIpvs, IPSET_INFO, renderApplyScript, type IpvsState, type SetKey } from '../emit/ipvs/index.js';
import { renderAddresses } from '../emit/ipvs/addresses.js';
import { renderIpsetRules } from '../emit/ipvs/ipset.js';
import { renderIptablesRules } from '../emit/ipvs/iptables-rules.js';
import { renderIpvsRules } from '../emit/ipvs/ipvsadm.js';
import { canonicalIPValue } from '../emit/ipvs/safe-text.js';
import { emptySetEntries, type SetEntries } from '../emit/ipvs/sets.js';
import type { NoNodeAccessEntry, RefusedEntry } from '../emit/ipvs/state.js';
import { finishSync, syncContext, syncServicePort, SyncState, type SyncContext } from '../emit/ipvs/sync.js';
import { computeIpvsDelta, type IpvsNodeState } from '../diff/ipvs/index.js';
import { readState, RuleFacts, type IptablesState } from '../diff/iptables/state.js';
import { readAddresses } from '../lang/ipvs/addresses.js';
import { readIpsetState } from '../lang/ipvs/ipset-state.js';
import { readIpvsTable } from '../lang/ipvs/ipvs-table.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import { compareIPs } from '../net/ip.js';
import type { DeltaOptions } from '../modes/index.js';
import { ipvsBackend, ipvsDeltaScript, syncWarnings } from '../modes/ipvs.js';
import { serviceRanges, servicePortKey, type FastPath, type FastStep } from './fast.js';

type Counts = Map<string, number>;

const encoder = new TextEncoder();

function bump(counts: Counts, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
}

/** One service port's sync, alone. */
function syncAlone(ctx: SyncContext, sp: ServicePort): SyncState {
  const state = new SyncState();
  syncServicePort(ctx, sp, state);
  return state;
}

/** How many of these ports' syncs write each set entry (per set), virtual server and bound address. */
function countsOf(states: readonly SyncState[]): { entries: Map<SetKey, Counts>; servers: Counts; bound: Counts } {
  const entries = new Map<SetKey, Counts>();
  const servers: Counts = new Map();
  const bound: Counts = new Map();
  for (const s of states) {
    for (const [key, set] of s.sets) {
      if (set.size === 0) continue;
      let c = entries.get(key);
      if (!c) entries.set(key, (c = new Map()));
      for (const e of set) bump(c, e, 1);
    }
    for (const k of s.virtualServers.keys()) bump(servers, k, 1);
    for (const ip of s.bind) bump(bound, ip, 1);
  }
  return { entries, servers, bound };
}

/** The index in the sorted `list` where `ip` is, or would go. */
function addressIndex(list: readonly string[], ip: string): number {
  const v = canonicalIPValue(ip);
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareIPs(canonicalIPValue(list[mid]!), v) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class IpvsWatch implements FastPath {
  private ir!: ProxyIR;
  private ctx!: SyncContext;
  private keys: string[] = [];
  /** Per set (all but KUBE-IPVS-IPS, which is `bound`): entry → how many service ports write it. */
  private entries = new Map<SetKey, Counts>();
  /** Virtual server key → how many service ports write it. */
  private servers: Counts = new Map();
  /** Address bound on kube-ipvs0 → how many service ports bind it. */
  private bound: Counts = new Map();
  /** The bound addresses in kube-ipvs0.addrs's order (sortIPs), and that text. */
  private addressList: string[] = [];
  private addressesText = '';
  /** The sync's lists that are in service port order, of the ports that have any (by port key). */
  private noAccess = new Map<string, NoNodeAccessEntry[]>();
  private refused = new Map<string, RefusedEntry[]>();
  /** iptables.rules as the delta's new bundle writes it (not standalone), and its state once read. */
  private iptablesText = '';
  private iptablesState: IptablesState | undefined;
  private readonly facts: RuleFacts;
  private initial: { text: string; warnings: string[] } | undefined;

  constructor(
    ir: ProxyIR,
    private readonly options: DeltaOptions,
  ) {
    this.facts = new RuleFacts(ir.family);
    const state = this.adopt(ir);
    const text = renderApplyScript(emitIpvs(ir, { standalone: options.standalone }, state), applyScriptOptions(ir, { inline: true, standalone: options.standalone }));
    this.initial = { text, warnings: syncWarnings(state, ir) };
  }

  takeInitialText(): string {
    const text = this.initial?.text ?? renderApplyScript(emitIpvs(this.ir, { standalone: this.options.standalone }), applyScriptOptions(this.ir, { inline: true, standalone: this.options.standalone }));
    this.initial = undefined;
    return text;
  }

  initialWarnings(): string[] {
    return this.initial?.warnings ?? [];
  }

  get servicePorts(): readonly ServicePort[] {
    return this.ir.servicePorts;
  }

  /** The counts of a new IR, from one sync per port (merged: the full sync's state, returned). */
  private adopt(ir: ProxyIR): IpvsState {
    this.ir = ir;
    this.ctx = syncContext(ir);
    this.keys = ir.servicePorts.map(servicePortKey);
    this.entries = new Map(IPSET_INFO.filter((i) => i.key !== 'KUBE-IPVS-IPS').map((i) => [i.key, new Map()]));
    this.servers = new Map();
    this.bound = new Map();
    this.noAccess = new Map();
    this.refused = new Map();
    const full = new SyncState();
    ir.servicePorts.forEach((sp, i) => {
      const one = syncAlone(this.ctx, sp);
      for (const [key, set] of one.sets) for (const e of set) bump(this.entries.get(key)!, e, 1);
      for (const k of one.virtualServers.keys()) bump(this.servers, k, 1);
      for (const ip of one.bind) bump(this.bound, ip, 1);
      if (one.noNodeAccess.length > 0) this.noAccess.set(this.keys[i]!, one.noNodeAccess);
      if (one.refused.length > 0) this.refused.set(this.keys[i]!, one.refused);
      full.merge(one);
    });
    const state = finishSync(this.ctx, full);
    this.addressList = state.bindAddresses;
    this.addressesText = renderAddresses(state);
    this.iptablesText = renderIptablesRules(ir, state, { standalone: false });
    this.iptablesState = undefined;
    return state;
  }

  private iptables(): IptablesState {
    return (this.iptablesState ??= readState(this.iptablesText, this.facts));
  }

  /** A node state read back from a partial sync (the texts compile's new bundle would hold for these parts). */
  private partialState(state: SyncState, sets: SetEntries, bound: readonly string[], iptables: IptablesState): IpvsNodeState {
    const family = this.ir.family;
    const synced: IpvsState = { family, virtualServers: [...state.virtualServers.values()], sets, bindAddresses: [...bound], noNodeAccess: [], nodePortIPs: [], refused: [] };
    return {
      family,
      ipvs: readIpvsTable(renderIpvsRules(synced, this.ir.knobs)),
      sets: readIpsetState(renderIpsetRules(synced)),
      iptables,
      addresses: readAddresses(renderAddresses(synced), family),
    };
  }

  change(services: readonly string[], ports: readonly ServicePort[]): FastStep | undefined {
    const sps = this.ir.servicePorts;
    const ranges = serviceRanges(this.keys, services);
    const oldPorts = ranges.flatMap((r) => sps.slice(r.lo, r.hi));
    const oldStates = oldPorts.map((sp) => syncAlone(this.ctx, sp));
    const newStates = ports.map((sp) => syncAlone(this.ctx, sp));
    const was = countsOf(oldStates);
    const now = countsOf(newStates);
    // A virtual server another port writes too: the whole sync decides which port's it is.
    for (const k of [...was.servers.keys(), ...now.servers.keys()]) {
      if ((this.servers.get(k) ?? 0) - (was.servers.get(k) ?? 0) > 0) return undefined;
    }
    const merged = (states: readonly SyncState[]) => {
      const m = new SyncState();
      for (const s of states) m.merge(s);
      return m;
    };
    const before = merged(oldStates);
    const after = merged(newStates);

    // Set entries and bound addresses: on a side where some port writes them.
    const setsBefore = emptySetEntries();
    const setsAfter = emptySetEntries();
    const sizes = new Map<SetKey, number>();
    let membership = false;
    const side = (key: SetKey, counts: Counts, e: string): void => {
      const cur = counts.get(e) ?? 0;
      const next = cur - (was.entries.get(key)?.get(e) ?? 0) + (now.entries.get(key)?.get(e) ?? 0);
      if (cur > 0) setsBefore.get(key)!.add(e);
      if (next > 0) setsAfter.get(key)!.add(e);
      if (cur > 0 !== next > 0) {
        membership = true;
        sizes.set(key, (sizes.get(key) ?? counts.size) + (next > 0 ? 1 : -1));
      }
    };
    for (const [key, counts] of this.entries) {
      for (const e of new Set([...(was.entries.get(key)?.keys() ?? []), ...(now.entries.get(key)?.keys() ?? [])])) side(key, counts, e);
    }
    const boundBefore: string[] = [];
    const boundAfter: string[] = [];
    const addressEdits: Array<{ ip: string; add: boolean }> = [];
    for (const ip of new Set([...was.bound.keys(), ...now.bound.keys()])) {
      const cur = this.bound.get(ip) ?? 0;
      const next = cur - (was.bound.get(ip) ?? 0) + (now.bound.get(ip) ?? 0);
      if (cur > 0) boundBefore.push(ip);
      if (next > 0) boundAfter.push(ip);
      if (cur > 0 !== next > 0) addressEdits.push({ ip, add: next > 0 });
    }
    for (const ip of boundBefore) setsBefore.get('KUBE-IPVS-IPS')!.add(ip);
    for (const ip of boundAfter) setsAfter.get('KUBE-IPVS-IPS')!.add(ip);
    if (addressEdits.length > 0) {
      membership = true;
      sizes.set('KUBE-IPVS-IPS', this.bound.size + addressEdits.reduce((n, a) => n + (a.add ? 1 : -1), 0));
    }

    // The lists in sync order, after the change (only when a touched port has any).
    const theirs = ranges.map((r) => ports.map((sp, i) => ({ sp, state: newStates[i]! })).filter(({ sp }) => servicePortKey(sp).startsWith(`${r.service}\u0000`)));
    const listAfter = <T>(held: Map<string, T[]>, of: (s: SyncState) => T[]): T[] | undefined => {
      if (!oldStates.some((s) => of(s).length > 0) && !newStates.some((s) => of(s).length > 0)) return undefined;
      const out: T[] = [];
      let r = 0;
      for (let i = 0; i < this.keys.length; i++) {
        if (r < ranges.length && i === ranges[r]!.lo) {
          for (const { state } of theirs[r]!) out.push(...of(state));
          i = ranges[r]!.hi - 1;
          r++;
          continue;
        }
        const l = held.get(this.keys[i]!);
        if (l) out.push(...l);
      }
      // A Service that had no ports yet (its range is empty at the end).
      for (; r < ranges.length; r++) for (const { state } of theirs[r]!) out.push(...of(state));
      return out;
    };
    const noAccessAfter = listAfter(this.noAccess, (s) => s.noNodeAccess);
    const refusedAfter = listAfter(this.refused, (s) => s.refused);
    const sizeOf = (key: SetKey) => sizes.get(key) ?? (key === 'KUBE-IPVS-IPS' ? this.bound : this.entries.get(key)!).size;
    const sizeView = new Map(IPSET_INFO.map((i) => [i.key, { size: sizeOf(i.key) }]));

    // iptables.rules: written again when what it depends on may have changed.
    let iptablesText = this.iptablesText;
    if (sizes.size > 0 || noAccessAfter !== undefined) iptablesText = renderIptablesRules(this.ir, { sets: sizeView, noNodeAccess: noAccessAfter ?? this.noAccessList() }, { standalone: false });
    const iptablesBefore = this.iptables();
    const iptablesAfter = iptablesText === this.iptablesText ? iptablesBefore : readState(iptablesText, this.facts);

    // kube-ipvs0.addrs after the change.
    let addressList = this.addressList;
    let addressesText = this.addressesText;
    if (addressEdits.length > 0) {
      addressList = [...this.addressList];
      for (const { ip, add } of addressEdits) {
        const at = addressIndex(addressList, ip);
        if (add) addressList.splice(at, 0, ip);
        else addressList.splice(at, 1);
      }
      addressesText = renderAddresses({ family: this.ir.family, bindAddresses: addressList } as IpvsState);
    }

    const ipvsBefore = renderIpvsRules({ family: this.ir.family, virtualServers: [...before.virtualServers.values()] } as IpvsState, this.ir.knobs);
    const ipvsAfter = renderIpvsRules({ family: this.ir.family, virtualServers: [...after.virtualServers.values()] } as IpvsState, this.ir.knobs);
    // The full output's texts are the same (compile --previous would print nothing) unless one of its parts changed.
    const changed = ipvsBefore !== ipvsAfter || membership || iptablesText !== this.iptablesText;
    const policy = this.options.removedRealServers ?? 'quiesce';
    let text = '';
    if (changed) {
      const delta = computeIpvsDelta(this.partialState(before, setsBefore, boundBefore, iptablesBefore), this.partialState(after, setsAfter, boundAfter, iptablesAfter), addressesText, {
        full: false,
        removedRealServers: policy,
        excludeCIDRs: this.ir.knobs.ipvs.excludeCIDRs,
      });
      text = ipvsDeltaScript(delta, this.ir.family, this.options, true);
    }
    const servers = this.servers.size;
    return {
      text,
      warnings: syncWarnings({ family: this.ir.family, sets: sizeView, refused: refusedAfter ?? this.refusedList() }, this.ir),
      before: () => servers,
      ports: sps.length - oldPorts.length + ports.length,
      commit: () => {
        for (const [key, c] of was.entries) for (const [e, n] of c) bump(this.entries.get(key)!, e, -n);
        for (const [key, c] of now.entries) for (const [e, n] of c) bump(this.entries.get(key)!, e, n);
        for (const [k, n] of was.servers) bump(this.servers, k, -n);
        for (const [k, n] of now.servers) bump(this.servers, k, n);
        for (const [ip, n] of was.bound) bump(this.bound, ip, -n);
        for (const [ip, n] of now.bound) bump(this.bound, ip, n);
        for (const sp of oldPorts) {
          this.noAccess.delete(servicePortKey(sp));
          this.refused.delete(servicePortKey(sp));
        }
        ports.forEach((sp, i) => {
          const s = newStates[i]!;
          if (s.noNodeAccess.length > 0) this.noAccess.set(servicePortKey(sp), s.noNodeAccess);
          if (s.refused.length > 0) this.refused.set(servicePortKey(sp), s.refused);
        });
        // In place, last range first (the earlier ranges' positions still hold).
        for (let i = ranges.length - 1; i >= 0; i--) {
          const r = ranges[i]!;
          const mine = theirs[i]!.map(({ sp }) => sp);
          this.ir.servicePorts.splice(r.lo, r.hi - r.lo, ...mine);
          this.keys.splice(r.lo, r.hi - r.lo, ...mine.map(servicePortKey));
        }
        this.addressList = addressList;
        this.addressesText = addressesText;
        if (iptablesText !== this.iptablesText) {
          this.iptablesText = iptablesText;
          this.iptablesState = iptablesAfter;
        }
      },
    };
  }

  private noAccessList(): NoNodeAccessEntry[] {
    return this.keys.flatMap((k) => this.noAccess.get(k) ?? []);
  }

  private refusedList(): RefusedEntry[] {
    if (this.refused.size === 0) return [];
    return this.keys.flatMap((k) => this.refused.get(k) ?? []);
  }

  /**
   * The delta to a new IR (a Node, the configuration, a shared virtual server): compile
   * --previous's own code on the full outputs of the state held and of the new IR, as the
   * generic path does (no delta when the two are the same).
   */
  rebuild(ir: ProxyIR): FastStep {
    const o = this.options;
    const inline = (of: ProxyIR) => {
      const out = ipvsBackend.emit(of, { standalone: o.standalone }).output;
      return out.form === 'bundle' ? out.inline() : '';
    };
    const previousText = inline(this.ir);
    const previous = ipvsBackend.readPrevious('-', '--previous', ir, () => encoder.encode(previousText));
    const same = inline(ir) === previousText;
    const delta = same ? undefined : previous.delta(o);
    return {
      text: delta && delta.output.form === 'bundle' ? delta.output.inline() : '',
      warnings: delta?.warnings ?? [],
      before: () => previous.serviceEntries,
      ports: ir.servicePorts.length,
      commit: () => {
        this.adopt(ir);
      },
    };
  }
}

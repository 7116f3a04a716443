/**
 * kpc watch's fast path for nftables mode: the delta of a change to a few Services without
 * building the whole transaction again.
 *
 * kube-proxy's nftables rules reach a Service through map elements (service-ips,
 * service-nodeports, no-endpoint-services, ...), never through rules in a shared chain, so
 * a Service's whole part of the table is its own chains and sets and its elements in the
 * shared maps and sets. The delta of a change is diff/nftables nftDelta — compile
 * --previous's own function — on two partial states: the fixed part (the transaction of no
 * service port) plus the touched Services' old ports, and the fixed part plus their new ports
 * (emit/nftables servicePortsTransaction: the full sync's own writer). nftDelta walks chains,
 * sets and elements in the state's order; the touched ports' objects keep their relative
 * order in the partial states (ports are written in IR order), and every other object is the
 * same on both sides, so the commands and their order are those of the whole comparison.
 *
 * One thing would break that: an element written by a touched port and by another one too
 * (two Services sharing an external IP and port, or a local endpoint's hairpin entry): a full
 * sync writes it once, where the first writer is. The fast path counts the ports writing each
 * element, and such a change goes through `rebuild` (the whole comparison) instead.
 */

import { buildTransaction, emitNftablesText, servicePortsTransaction } from '../emit/nftables/index.js';
import { nftDelta } from '../diff/nftables/delta.js';
import { applyTransaction, emptyState, KUBE_PROXY_TABLE, NftTransaction, renderTransactionText, type NftState } from '../lang/nftables/index.js';
import { countServiceEntries } from '../modes/nftables.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import { serviceRanges, servicePortKey, type FastPath, type FastStep } from './fast.js';

/** The elements a transaction adds, as `container NUL key`. */
function elementsOf(tx: NftTransaction): string[] {
  const out: string[] = [];
  for (const { verb, object: o } of tx.ops) if (verb === 'add' && o.kind === 'element') out.push(`${o.container}\u0000${o.key.join(' . ')}`);
  return out;
}

export class NftablesWatch implements FastPath {
  private ir!: ProxyIR;
  private keys: string[] = [];
  /** How many service ports write each element. */
  private owners = new Map<string, number>();
  /** The transaction of no service port: the fixed part. */
  private fixed!: NftTransaction;
  private initial: string | undefined;

  constructor(
    ir: ProxyIR,
    private readonly standalone: boolean,
  ) {
    this.adopt(ir);
    this.initial = emitNftablesText(ir, { standalone });
  }

  takeInitialText(): string {
    const text = this.initial ?? emitNftablesText(this.ir, { standalone: this.standalone });
    this.initial = undefined;
    return text;
  }

  get servicePorts(): readonly ServicePort[] {
    return this.ir.servicePorts;
  }

  private adopt(ir: ProxyIR): void {
    this.ir = ir;
    this.keys = ir.servicePorts.map(servicePortKey);
    this.fixed = buildTransaction({ ...ir, servicePorts: [] }, { standalone: false });
    this.owners = new Map();
    for (const sp of ir.servicePorts) this.count(servicePortsTransaction(ir, [sp]), 1, this.owners);
  }

  private count(tx: NftTransaction, by: number, into: Map<string, number>): void {
    for (const k of new Set(elementsOf(tx))) {
      const n = (into.get(k) ?? 0) + by;
      if (n === 0) into.delete(k);
      else into.set(k, n);
    }
  }

  /** The state of the fixed part plus these ports. */
  private stateOf(ports: readonly ServicePort[]): { state: NftState; tx: NftTransaction } {
    const family = this.ir.family === 'IPv4' ? 'ip' : 'ip6';
    const tx = new NftTransaction(family, KUBE_PROXY_TABLE);
    for (const op of this.fixed.ops) tx.ops.push(op);
    for (const op of servicePortsTransaction(this.ir, ports).ops) tx.ops.push(op);
    return { state: applyTransaction(emptyState(family, KUBE_PROXY_TABLE), tx), tx };
  }

  change(services: readonly string[], ports: readonly ServicePort[]): FastStep | undefined {
    const sps = this.ir.servicePorts;
    const ranges = serviceRanges(this.keys, services);
    const oldPorts = ranges.flatMap((r) => sps.slice(r.lo, r.hi));
    // Elements written by other ports as well: only the whole comparison places them.
    const mine = new Map<string, number>();
    for (const sp of oldPorts) this.count(servicePortsTransaction(this.ir, [sp]), 1, mine);
    const added = new Map<string, number>();
    for (const sp of ports) this.count(servicePortsTransaction(this.ir, [sp]), 1, added);
    for (const k of new Set([...mine.keys(), ...added.keys()])) {
      if ((this.owners.get(k) ?? 0) - (mine.get(k) ?? 0) > 0) return undefined;
    }
    if (ports.length === 0 && oldPorts.length === sps.length) return undefined; // the emptying rule needs the whole state
    const before = this.stateOf(oldPorts);
    const after = this.stateOf(ports);
    const text = renderTransactionText(nftDelta(before.state, after.state, after.tx, { full: false }));
    const theirs = ranges.map((r) => ports.filter((sp) => servicePortKey(sp).startsWith(`${r.service}\u0000`)));
    return {
      text,
      before: () => countServiceEntries(before.state),
      ports: sps.length - oldPorts.length + ports.length,
      commit: () => {
        for (const [k, n] of mine) this.bump(k, -n);
        for (const [k, n] of added) this.bump(k, n);
        // In place, last range first (the earlier ranges' positions still hold): no copy of the whole list.
        for (let i = ranges.length - 1; i >= 0; i--) {
          const r = ranges[i]!;
          this.ir.servicePorts.splice(r.lo, r.hi - r.lo, ...theirs[i]!);
          this.keys.splice(r.lo, r.hi - r.lo, ...theirs[i]!.map(servicePortKey));
        }
      },
    };
  }

  private bump(k: string, by: number): void {
    const n = (this.owners.get(k) ?? 0) + by;
    if (n === 0) this.owners.delete(k);
    else this.owners.set(k, n);
  }

  rebuild(ir: ProxyIR): FastStep {
    const family = this.ir.family === 'IPv4' ? 'ip' : 'ip6';
    const state = (of: ProxyIR) => {
      const tx = buildTransaction(of, { standalone: false });
      return { tx, state: applyTransaction(emptyState(family, KUBE_PROXY_TABLE), tx) };
    };
    const before = state(this.ir);
    const after = state(ir);
    return {
      text: renderTransactionText(nftDelta(before.state, after.state, after.tx, { full: false })),
      before: () => countServiceEntries(before.state),
      ports: ir.servicePorts.length,
      commit: () => this.adopt(ir),
    };
  }
}

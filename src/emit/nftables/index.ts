/**
 * nftables mode: the IR in, the `nft -f` transaction kube-proxy's nftables proxier sends on a
 * full sync of an empty table out (pkg/proxy/nftables/proxier.go syncProxyRules with
 * needFullSync, first sync of the process). A pure function: same IR, same bytes.
 *
 * kube-proxy visits service ports in Go map order (random from run to run); kpc writes them in
 * the IR's order (namespace/name, port name, protocol). Everything else — the fixed part, each
 * port's block, rule order within chains — is kube-proxy's own order. With `standalone`, the
 * transaction starts with `add table` + `delete table`, so loading it again replaces the whole
 * table (kube-proxy's own re-sync relies on its memory of the table instead).
 */

import type { ProxyIR, ServicePort } from '../../ir/model.js';
import { planContext, planServicePort } from '../../ir/plan.js';
import { cidrContains, isLoopback, parseCIDR, parseIP } from '../../net/ip.js';
import { renderOperations, renderTransactionText, type NftOperation, type NftTransaction } from '../../lang/nftables/index.js';
import { syncContext } from './context.js';
import { nodePortIPs, writeSetup } from './fixed.js';
import { ElementStore, writeServicePort } from './service-port.js';

export interface NftablesOptions {
  /** Start with `add table` + `delete table`: the file can be loaded again and again. */
  standalone: boolean;
}

export function buildTransaction(ir: ProxyIR, options: NftablesOptions): NftTransaction {
  const steps = writeTransaction(ir, options);
  for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value;
}

/**
 * The transaction, written step by step into one NftTransaction: the fixed part, then each
 * service port's commands (each step yields the transaction so far; the caller may take the
 * operations written, emitNftables does). Returns the transaction at the end.
 */
function* writeTransaction(ir: ProxyIR, options: NftablesOptions): Generator<NftTransaction, NftTransaction> {
  const ctx = syncContext(ir);
  if (options.standalone) {
    ctx.tx.add({ kind: 'table' });
    ctx.tx.delete({ kind: 'table' });
  }
  const cidrs = ir.knobs.nodePortAddresses.map((c) => parseCIDR(c)!.cidr);
  // The node's addresses stand for its interfaces' (GetNodeIPs); loopback ones never serve node ports here.
  const ips = nodePortIPs(ir, (text) => {
    const ip = parseIP(text)!.ip;
    return cidrs.some((c) => cidrContains(c, ip)) && !isLoopback(ip);
  });
  writeSetup(ctx, ips);
  yield ctx.tx;
  const store = new ElementStore();
  const planning = planContext(ir);
  for (const sp of ir.servicePorts) {
    writeServicePort(ctx, store, planServicePort(sp, planning));
    yield ctx.tx;
  }
  return ctx.tx;
}

/**
 * The transaction kpc trace and explain follow: the whole transaction without the chains (and
 * their rules) of the service ports `focus` leaves out (trace/focus.ts: those a connection
 * cannot reach). Every port is written, and every element kept: the sets and maps are shared
 * and deduplicated (a hairpin element written by one port is another's too). A port's own
 * chains are reached only through elements keyed by its own addresses and ports (or from
 * its own chains), which the packet does not match, or the port would be kept.
 */
export function buildFocusedTransaction(ir: ProxyIR, options: NftablesOptions, focus: (sp: ServicePort) => boolean): NftTransaction {
  const steps = writeTransaction(ir, options);
  // The first step is the fixed part; each one after it is a port's, in the IR's order.
  let kept = steps.next().value.ops.length;
  for (const sp of ir.servicePorts) {
    const tx = steps.next().value;
    if (!focus(sp)) tx.ops.length = kept + withoutOwnChains(tx.ops, kept);
    kept = tx.ops.length;
  }
  return steps.next().value;
}

/** Moves the operations from `from` on that are not on a chain declared among them to its start; how many are left. */
function withoutOwnChains(ops: NftOperation[], from: number): number {
  const own = new Set<string>();
  for (let i = from; i < ops.length; i++) {
    const o = ops[i]!.object;
    if (o.kind === 'chain' && ops[i]!.verb === 'add') own.add(o.name);
  }
  let n = from;
  for (let i = from; i < ops.length; i++) {
    const o = ops[i]!.object;
    if ((o.kind === 'chain' && own.has(o.name)) || (o.kind === 'rule' && own.has(o.chain))) continue;
    ops[n++] = ops[i]!;
  }
  return n - from;
}

/**
 * Operations per rendered chunk: ~60 KB of text, which dies young. In chunks of 4,096, compile
 * at 20,000 Services peaked at 440-457 MB; in chunks of 512, at 304-309 MB, in the same time.
 */
const CHUNK_OPERATIONS = 512;

/**
 * The transaction's text, rendered as it is written: the operations of each chunk are
 * printed and let go, because at 100,000 Services the whole transaction is ~10 million
 * operation objects (~1.5 GB of heap). `seen` is shown each chunk's operations before they
 * are printed (`compile --previous` keeps what they name: diff/nftables/named.ts).
 */
export function* emitNftables(ir: ProxyIR, options: NftablesOptions, seen?: (ops: readonly NftOperation[]) => void): Iterable<string> {
  const chunk = (tx: NftTransaction): string => {
    const ops = tx.take();
    seen?.(ops);
    return renderOperations(tx.family, tx.table, ops);
  };
  let tx: NftTransaction | undefined;
  for (tx of writeTransaction(ir, options)) {
    if (tx.length >= CHUNK_OPERATIONS) yield chunk(tx);
  }
  if (tx && tx.length > 0) yield chunk(tx);
}

export function emitNftablesText(ir: ProxyIR, options: NftablesOptions): string {
  return renderTransactionText(buildTransaction(ir, options));
}

/**
 * The commands of some service ports alone, without the fixed part, written as a full sync
 * writes them (in order, elements deduplicated among these ports): kpc watch counts which
 * ports write each element, and builds the states of a few ports.
 */
export function servicePortsTransaction(ir: ProxyIR, ports: readonly ServicePort[]): NftTransaction {
  const ctx = syncContext(ir);
  const store = new ElementStore();
  const planning = planContext(ir);
  for (const sp of ports) writeServicePort(ctx, store, planServicePort(sp, planning));
  return ctx.tx;
}

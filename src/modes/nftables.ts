/**
 * nftables mode: the `nft -f` transaction kube-proxy's nftables proxier sends on a full sync
 * (emit/nftables), deltas and diffs against a previous state (kpc's earlier output, or a node's
 * `nft list table ip kube-proxy` text or `nft -j list table` JSON; diff/nftables), and the
 * golden check.
 */

import { buildFocusedTransaction, buildTransaction, emitNftables, emitNftablesText } from '../emit/nftables/index.js';
import { nftDelta } from '../diff/nftables/delta.js';
import { readBeside, readChangedTransactions } from '../diff/nftables/aligned.js';
import { RecordedOperations } from '../diff/nftables/named.js';
import { diffNftStates, renderNftReport, nftReportJSON, type NftDiffReport } from '../diff/nftables/report.js';
import { unifiedDiff } from '../diff/unified.js';
import { isKpcError, usageError } from '../errors.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import { applyTransaction, emptyState, KUBE_PROXY_TABLE, NftTransaction, nftStateForm, readNftState, renderTransaction, viewOfTransaction, type NftState } from '../lang/nftables/index.js';
import { AsciiBytes } from '../lang/ascii-bytes.js';
import { isDirectoryPath } from '../parser/input-files.js';
import { PreviousText } from './previous-text.js';
import type { CheckResult, DeltaOptions, EmitOptions, Emitted, ModeBackend, PreviousState, StdinReader } from './backend.js';

function emit(ir: ProxyIR, options: EmitOptions): Emitted {
  return { output: { form: 'text', chunks: () => emitNftables(ir, options) }, warnings: [] };
}

/** The Service entries of a state: the elements of the dispatch maps and sets. */
export function countServiceEntries(state: NftState): number {
  let n = 0;
  for (const name of ['cluster-ips', 'service-ips', 'no-endpoint-services', 'service-nodeports', 'no-endpoint-nodeports']) n += state.sets.get(name)?.elements.size ?? 0;
  return n;
}

function readPrevious(path: string, option: string, ir: ProxyIR, stdin: StdinReader): PreviousState {
  if (isDirectoryPath(path)) throw usageError(`${option} ${path} is a directory; nftables mode reads one file (kpc's output, nft list table or nft -j list table)`);
  const previous = PreviousText.open(path, option, stdin);
  const family = ir.family === 'IPv4' ? 'ip' : 'ip6';
  /**
   * The previous state, read (and checked) when first needed: not when the new output is
   * exactly the previous text (kpc's own output of the same input: nothing changed), whose
   * state is the new one (at 20,000 Services, a 29 MB transaction not read). When the texts
   * differ, only the objects whose lines differ are read where the text is kpc's form
   * (diff/nftables/aligned.ts), else it is read whole; either way before the delta or report
   * is made, so a bad previous file is still reported before anything is written.
   */
  let before: NftState | undefined;
  const previousState = (): NftState => {
    if (before !== undefined) return before;
    const text = previous.text();
    try {
      before = readNftState(text, family, KUBE_PROXY_TABLE).state;
      if (!before.exists && text.trim() !== '') {
        const other = family === 'ip' ? 'ip6' : 'ip';
        if (readNftState(text, other, KUBE_PROXY_TABLE).state.exists) {
          throw usageError(`${option} ${path} holds table ${other} ${KUBE_PROXY_TABLE}, but the output is for ${family} (${ir.family}); pass --ip-family to match, or the other family's state`);
        }
      }
    } catch (e) {
      if (isKpcError(e, 'previous.unreadable')) throw e.inFile(path, option);
      throw e;
    }
    return before;
  };
  const stateOf = (tx: NftTransaction) => applyTransaction(emptyState(family, KUBE_PROXY_TABLE), tx);
  /**
   * Whether the previous text is a transaction (kpc's form, which the alignment reads), not a
   * node's listing or JSON (read whole: the new transaction is not printed for them). Decided
   * by the file's start; a wrong guess costs time, never a result (the alignment refuses any
   * other text).
   */
  const transactionForm = nftStateForm(previous.head()) === 'transaction';
  /**
   * The new transaction (the previous state has the table: it never starts with standalone's
   * add+delete of it) printed as compile prints it, chunk by chunk, its operations let go once
   * printed and only what each one does and names kept (at 100,000 Services the transaction
   * held whole is 1.2 GB of heap); undefined when the text is not ASCII.
   */
  const printedOf = (): { text: AsciiBytes; ops: RecordedOperations } | undefined => {
    const ops = new RecordedOperations(family, KUBE_PROXY_TABLE);
    const text = AsciiBytes.join(
      emitNftables(ir, { standalone: false }, (chunk) => ops.record(chunk)),
      previous.expectedLength(),
    );
    return text && { text, ops };
  };
  /**
   * The new transaction printed (when not standalone: printed once, for the comparison and the
   * alignment both), or undefined when what compile prints with these options is the previous
   * text: nothing changed.
   */
  const changedOutput = (options: EmitOptions): { printed: ReturnType<typeof printedOf> } | undefined => {
    const printed = options.standalone || !transactionForm ? undefined : printedOf();
    const same = printed ? previous.matchesBytes(printed.text) : previous.matches(emitNftables(ir, options));
    return same ? undefined : { printed };
  };
  /** The new transaction printed for the alignment (diff/nftables/aligned.ts), unless the previous state was read whole already. */
  const alignable = (printed: ReturnType<typeof printedOf>) => (before === undefined && transactionForm ? (printed ?? printedOf()) : undefined);
  const wholeAfter = (options: EmitOptions) => {
    const tx = buildTransaction(ir, { ...options, standalone: false });
    return { tx, state: stateOf(tx) };
  };
  // --full rewrites everything the state holds: the state is read even when nothing changed.
  const fullDelta = (options: DeltaOptions): NftTransaction => {
    const after = wholeAfter(options);
    return nftDelta(previousState(), after.state, after.tx, { full: true });
  };
  const changedDelta = (options: DeltaOptions): NftTransaction => {
    const changed = changedOutput(options);
    // Nothing changed: the delta of a state to itself, the empty transaction.
    if (!changed) return new NftTransaction(family, KUBE_PROXY_TABLE);
    // Only what differs, or both states whole.
    const aligned = alignable(changed.printed);
    const read = aligned && readChangedTransactions(previous.lines(), aligned.text, aligned.ops);
    // The previous state has the table: nftDelta's answer to one without it (the whole new
    // transaction, its third argument) is not asked for.
    if (read?.before.exists) return nftDelta(read.before, read.after, new NftTransaction(family, KUBE_PROXY_TABLE), { full: false });
    const after = wholeAfter(options);
    return nftDelta(previousState(), after.state, after.tx, { full: false });
  };
  return {
    // Asked only when the new input has no Service ports (a delta removing them all is refused).
    get serviceEntries() {
      return countServiceEntries(previousState());
    },
    delta(options: DeltaOptions): Emitted {
      const tx = options.full ? fullDelta(options) : changedDelta(options);
      return { output: { form: 'text', chunks: () => renderTransaction(tx) }, warnings: [] };
    },
    diff(options: EmitOptions) {
      const changed = changedOutput(options);
      let report: NftDiffReport = { changed: false, servicePorts: [] };
      if (changed) {
        // Both states beside each other (their equal objects shared, made when asked for), or read whole.
        const aligned = alignable(changed.printed);
        const beside = aligned && readBeside(previous.lines(), aligned.text, aligned.ops);
        report = beside ? diffNftStates(beside.before, beside.after, beside.differing) : diffNftStates(previousState(), wholeAfter(options).state);
      }
      return { changed: report.changed, text: (paint) => renderNftReport(report, paint), json: () => nftReportJSON(report) };
    },
  };
}

/**
 * The output against the golden file, compared with the file's bytes as compile writes it
 * (emitNftables: each chunk's operations let go once printed, where the whole transaction of
 * 100,000 Services is ~1.5 GB of heap); only a drifted golden is read whole and the output
 * made again, whole, for the unified diff.
 */
function check(ir: ProxyIR, golden: string, options: EmitOptions, stdin: StdinReader): CheckResult {
  if (isDirectoryPath(golden)) throw usageError(`--golden ${golden} is a directory; nftables mode compares one file`);
  const expected = PreviousText.open(golden, '--golden', stdin);
  if (expected.matches(emitNftables(ir, options))) return { drifted: [], diffs: [], notes: [] };
  // An unreadable golden does not match: lines() reports it, with the errors it always gave.
  // A golden of ASCII is its bytes (any length), compared with the output printed as bytes.
  const before = expected.lines();
  const after = typeof before === 'string' ? emitNftablesText(ir, options) : AsciiBytes.join(emitNftables(ir, options), before.length);
  // An output that is not ASCII beside it: text() refuses the golden (too large to read whole).
  return { drifted: [golden], diffs: [unifiedDiff(before, after ?? expected.text(), golden, 'kpc compile')], notes: [] };
}

function transactionOf(ir: ProxyIR, options: EmitOptions, focus: ((sp: ServicePort) => boolean) | undefined): NftTransaction {
  return focus === undefined ? buildTransaction(ir, options) : buildFocusedTransaction(ir, options, focus);
}

export const nftablesBackend: ModeBackend = {
  mode: 'nftables',
  describes: 'nftables rules',
  emit,
  readPrevious,
  check,
  // The transaction is built, not printed and read back: its operations are applied per
  // object when the tracer or explainer asks for it (lang/nftables/lazy-read.ts). With a
  // focus, only the fixed part and the focused ports' operations are kept.
  traceRules: (ir, options, focus) => ({ form: 'nftables', table: viewOfTransaction(transactionOf(ir, options, focus)) }),
  explainRules: (ir, focus) => ({ form: 'nftables', table: viewOfTransaction(transactionOf(ir, { standalone: false }, focus)) }),
};

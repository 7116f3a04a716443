/**
 * nftables mode: the `nft -f` transaction kube-proxy's nftables proxier sends on a full sync
 * (emit/nftables), deltas and diffs against a previous state (kpc's earlier output, or a node's
 * `nft list table ip kube-proxy` text or `nft -j list table` JSON; diff/nftables), and the
 * golden check.
 */

import { buildTransaction, emitNftables, emitNftablesText } from '../emit/nftables/index.js';
import { nftDelta } from '../diff/nftables/delta.js';
import { diffNftStates, renderNftReport, nftReportJSON } from '../diff/nftables/report.js';
import { unifiedDiff } from '../diff/unified.js';
import { isKpcError, usageError } from '../errors.js';
import type { ProxyIR } from '../ir/model.js';
import { applyTransaction, emptyState, KUBE_PROXY_TABLE, readNftState, renderTransaction, type NftState } from '../lang/nftables/index.js';
import { isDirectoryPath, readNamedText } from '../parser/input-files.js';
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
  const text = readNamedText(path, option, stdin);
  const family = ir.family === 'IPv4' ? 'ip' : 'ip6';
  let before: NftState;
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
  const afterOf = (options: EmitOptions) => {
    // The previous state has the table: the delta never starts with standalone's add+delete of it.
    const tx = buildTransaction(ir, { ...options, standalone: false });
    return { tx, state: applyTransaction(emptyState(family, KUBE_PROXY_TABLE), tx) };
  };
  return {
    serviceEntries: countServiceEntries(before),
    delta(options: DeltaOptions): Emitted {
      const after = afterOf(options);
      const tx = nftDelta(before, after.state, after.tx, { full: options.full });
      return { output: { form: 'text', chunks: () => renderTransaction(tx) }, warnings: [] };
    },
    diff(options: EmitOptions) {
      const report = diffNftStates(before, afterOf(options).state);
      return { changed: report.changed, text: (paint) => renderNftReport(report, paint), json: () => nftReportJSON(report) };
    },
  };
}

function check(ir: ProxyIR, golden: string, options: EmitOptions, stdin: StdinReader): CheckResult {
  if (isDirectoryPath(golden)) throw usageError(`--golden ${golden} is a directory; nftables mode compares one file`);
  const expected = readNamedText(golden, '--golden', stdin);
  const text = emitNftablesText(ir, options);
  if (text === expected) return { drifted: [], diffs: [], notes: [] };
  return { drifted: [golden], diffs: [unifiedDiff(expected, text, golden, 'kpc compile')], notes: [] };
}

export const nftablesBackend: ModeBackend = {
  mode: 'nftables',
  describes: 'nftables rules',
  emit,
  readPrevious,
  check,
  traceRules: (ir, options) => emitNftablesText(ir, options),
  explainRules: (ir) => emitNftablesText(ir, { standalone: false }),
};

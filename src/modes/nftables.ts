/**
 * nftables mode: the `nft -f` transaction kube-proxy's nftables proxier sends on a full sync
 * (emit/nftables), and the golden check. Deltas (`compile --previous`) and `kpc diff` against
 * a previous transaction or a node's `nft list table` are issue 17's work: refused here with a
 * usage error (exit 2), never answered with something approximate.
 */

import { emitNftables, emitNftablesText } from '../emit/nftables/index.js';
import { unifiedDiff } from '../diff/unified.js';
import { usageError } from '../errors.js';
import type { ProxyIR } from '../ir/model.js';
import { isDirectoryPath, readNamedText } from '../parser/input-files.js';
import type { CheckResult, EmitOptions, Emitted, ModeBackend, PreviousState, StdinReader } from './backend.js';

function emit(ir: ProxyIR, options: EmitOptions): Emitted {
  return { output: { form: 'text', chunks: () => emitNftables(ir, options) }, warnings: [] };
}

function readPrevious(_path: string, option: string): PreviousState {
  throw usageError(
    `${option}: nftables mode cannot read a previous state yet (deltas with compile --previous and kpc diff are issue 17, not yet supported for nftables); compile the full transaction instead`,
  );
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
};

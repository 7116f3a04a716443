/**
 * IPVS mode's incremental commands (the iptables-mode ones are in compile.ts, diff.ts and
 * check.ts, which dispatch here):
 *
 *   compile --previous P [-o DIR] [--full]   the delta bundle: ipvs.rules (-A/-E/-D, -a/-e/-d),
 *                                            ipset.rules (create/add/del/destroy),
 *                                            iptables.rules (changed chains), kube-ipvs0.addrs
 *                                            (the full wanted list) and apply.sh (which also
 *                                            adds and removes the addresses); without -o,
 *                                            apply.sh with the parts inline
 *   diff --previous P                        the changes by Service port; exit 0 same, 1 differs
 *   check --golden P                         each bundle file against P's; exit 0 same, 1 drift
 *
 * P is a bundle directory (kpc's -o DIR, or a node's ipvsadm-save -n, ipset save,
 * iptables-save and `ip -o addr show dev kube-ipvs0` under the bundle's file names) or the
 * apply.sh kpc prints without -o.
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { applyScriptOptions, bundleFiles, emitIpvs, renderApplyScript, syncIpvs, type IpvsState } from '../../emit/ipvs/index.js';
import { BUNDLE_FILES } from '../../emit/ipvs/bundle.js';
import type { ProxyIR } from '../../ir/model.js';
import { RuleFacts } from '../../diff/iptables/state.js';
import { unifiedDiff } from '../../diff/unified.js';
import {
  attributionOf,
  BundleReadError,
  computeIpvsDelta,
  diffIpvsStates,
  ipvsReportJSON,
  IpvsDeltaError,
  readBundleTexts,
  bundleFromScript,
  readNodeState,
  renderDeltaScript,
  renderIpvsReport,
  type IpvsNodeState,
  type RemovedRealServerPolicy,
} from '../../diff/ipvs/index.js';
import type { Paint } from '../../diff/iptables/report.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { explainWriteErrors, writeDirectoryAtomic, type Io } from '../io.js';
import { readTextFile } from './previous.js';
import { RulesReadError } from '../../lang/iptables/read.js';
import { reportNotes } from '../report.js';
import { refuseEmptyingDelta } from '../input-checks.js';

function readPrevious(path: string, ir: ProxyIR, facts: RuleFacts, flag: string, io: Io): IpvsNodeState {
  try {
    // `-`: the apply.sh kpc printed, on standard input (ssh node ... | kpc diff --previous -).
    const texts = path === '-' ? bundleFromScript(readTextFile('-', flag, io.readStdin), '<stdin>') : readBundleTexts(path);
    return readNodeState(texts, ir.family, facts, path);
  } catch (e) {
    if (e instanceof BundleReadError) throw new UsageError(`${flag}: ${e.message}`);
    throw e;
  }
}

/** Work that compares rules of the previous iptables.rules (parsed lazily): its errors are the user's. */
function withPreviousRules<T>(path: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (e instanceof RulesReadError) throw new UsageError(`--previous ${path}: ${BUNDLE_FILES.iptablesRules}:${e.line}: ${e.detail}`);
    throw e;
  }
}

/** The new state, read back from kpc's own bundle through the same readers as the previous one. */
function newState(ir: ProxyIR, facts: RuleFacts, synced = syncIpvs(ir)): { state: IpvsNodeState; addresses: string } {
  const bundle = emitIpvs(ir, { standalone: false }, synced);
  return { state: readNodeState(bundle, ir.family, facts, 'kpc'), addresses: bundle.addresses };
}

export interface IpvsDeltaFlags {
  previous: string;
  output?: string;
  full?: boolean;
  standalone?: boolean;
  ipvsRemovedRealServers?: string;
  allowEmpty?: boolean;
}

/** `synced` is syncIpvs(ir), which compile already has (for its ipset warning). */
export function compileIpvsDelta(ir: ProxyIR, synced: IpvsState, flags: IpvsDeltaFlags, io: Io): number {
  const policy = (flags.ipvsRemovedRealServers ?? 'quiesce') as RemovedRealServerPolicy;
  const full = flags.full ?? false;
  const standalone = flags.standalone ?? false;
  const facts = new RuleFacts(ir.family);
  const prev = readPrevious(flags.previous, ir, facts, '--previous', io);
  refuseEmptyingDelta(ir, prev.ipvs.virtualServers.size, flags.previous, flags.allowEmpty);
  const next = newState(ir, facts, synced);
  let delta;
  try {
    delta = withPreviousRules(flags.previous, () =>
      computeIpvsDelta(prev, next.state, next.addresses, { full, removedRealServers: policy, excludeCIDRs: ir.knobs.ipvs.excludeCIDRs }),
    );
  } catch (e) {
    if (e instanceof IpvsDeltaError) throw new UsageError(`--previous ${flags.previous}: ${e.message}`);
    throw e;
  }
  const description = `${full ? '--full, ' : ''}--ipvs-removed-real-servers ${policy}`;
  const script = (inline: boolean) => renderDeltaScript(delta, { inline, family: ir.family, standalone, description });
  if (flags.output === undefined) {
    io.stdout([script(true)]);
    return EXIT.ok;
  }
  const files = [
    { name: BUNDLE_FILES.ipvsRules, content: delta.ipvsRules, mode: 0o644 },
    { name: BUNDLE_FILES.ipsetRules, content: delta.ipsetRules, mode: 0o644 },
    { name: BUNDLE_FILES.iptablesRules, content: delta.iptablesRules, mode: 0o644 },
    { name: BUNDLE_FILES.addresses, content: delta.addresses, mode: 0o644 },
    { name: BUNDLE_FILES.applyScript, content: script(false), mode: 0o755 },
  ];
  const output = flags.output;
  explainWriteErrors(output, () => writeDirectoryAtomic(output, files));
  return EXIT.ok;
}

export function diffIpvs(ir: ProxyIR, flags: { previous: string; output?: string }, io: Io, paint: Paint): number {
  const facts = new RuleFacts(ir.family);
  const prev = readPrevious(flags.previous, ir, facts, '--previous', io);
  const next = newState(ir, facts);
  const report = withPreviousRules(flags.previous, () => diffIpvsStates(prev, next.state, attributionOf(ir, syncIpvs(ir)), ir.knobs.ipvs.excludeCIDRs));
  io.stdout([flags.output === 'json' ? ipvsReportJSON(report) : renderIpvsReport(report, paint)]);
  return report.changed ? EXIT.differs : EXIT.ok;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `--golden DIR`: each file kpc writes with -o DIR is compared with DIR's file of that name (a
 * missing one counts as empty and is reported); `--golden FILE`: the inline apply.sh.
 */
export function checkIpvs(ir: ProxyIR, flags: { golden: string; standalone?: boolean }, io: Io): number {
  const standalone = flags.standalone ?? false;
  const diffs: string[] = [];
  const drifted: string[] = [];
  if (isDirectory(flags.golden)) {
    for (const f of bundleFiles(ir, { standalone })) {
      const path = join(flags.golden, f.name);
      let golden = '';
      try {
        golden = readTextFile(path, '--golden', io.readStdin);
      } catch {
        reportNotes(io, [`${path} is missing: compared as empty`]);
      }
      if (golden === f.content) continue;
      drifted.push(f.name);
      diffs.push(unifiedDiff(golden, f.content, path, `kpc compile (${f.name})`));
    }
  } else {
    const golden = readTextFile(flags.golden, '--golden', io.readStdin);
    const text = renderApplyScript(emitIpvs(ir, { standalone }), applyScriptOptions(ir, { inline: true, standalone }));
    if (golden !== text) {
      drifted.push('apply.sh');
      diffs.push(unifiedDiff(golden, text, flags.golden, 'kpc compile'));
    }
  }
  if (drifted.length === 0) return EXIT.ok;
  io.stdout(diffs);
  io.stderr(`drift: ${flags.golden} differs from what kpc compiles (${drifted.join(', ')})\n`);
  return EXIT.differs;
}

/**
 * IPVS mode: the bundle (ipvs.rules, ipset.rules, iptables.rules, kube-ipvs0.addrs, apply.sh;
 * emit/ipvs), its deltas and diffs against a previous state (diff/ipvs), and the golden check.
 *
 * A previous state or golden is a bundle directory (kpc's -o DIR, or a node's ipvsadm-save -n,
 * ipset save, iptables-save and `ip -o addr show dev kube-ipvs0` under the bundle's file
 * names), or the apply.sh kpc prints without -o (`-` reads it from standard input).
 */

import { join } from 'node:path';
import { applyScriptOptions, bundleFiles, emitFocusedIpvs, emitIpvs, overfullSets, renderApplyScript, setName, syncIpvs, type IpvsState } from '../emit/ipvs/index.js';
import type { SetSizes } from '../emit/ipvs/sets.js';
import type { IPFamily } from '../net/ip.js';
import { BUNDLE_FILES, type IpvsBundle } from '../emit/ipvs/bundle.js';
import { SET_MAX_ELEMENTS } from '../emit/ipvs/sets.js';
import { RuleFacts } from '../diff/iptables/state.js';
import { unifiedDiff } from '../diff/unified.js';
import {
  attributionOf,
  bundleFromScript,
  computeIpvsDelta,
  diffIpvsStates,
  ipvsReportJSON,
  readBundleTexts,
  readChangedStates,
  readNodeState,
  readNodeStateBeside,
  renderDeltaScript,
  renderIpvsReport,
  unchangedIpvsDelta,
  type IpvsDelta,
  type IpvsDiffReport,
  type IpvsNodeState,
} from '../diff/ipvs/index.js';
import { isKpcError, KpcError } from '../errors.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import { isDirectoryPath, readNamedText } from '../parser/input-files.js';
import type { CheckResult, DeltaOptions, EmitOptions, Emitted, ModeBackend, PreviousState, StdinReader } from './backend.js';

/** What the sync will do on a node that the user must know (ipset capacity, refused entries); also the watch's IPVS path's. */
export function syncWarnings(state: Pick<IpvsState, 'family' | 'refused'> & { sets: SetSizes }, ir: ProxyIR): string[] {
  const out: string[] = [];
  // A set past kube-proxy's maxelem is programmed only in part, by kube-proxy as by ipset restore.
  for (const { name, size } of overfullSets(state.sets, ir.family)) {
    out.push(
      `ipset ${name} would hold ${size} entries; kube-proxy creates it with maxelem ${SET_MAX_ELEMENTS}, ` +
        `so the kernel refuses the rest ("Hash is full"): kube-proxy logs an error for each, and ipset restore of this output stops there`,
    );
  }
  // Entries the kernel refuses are left out, as kube-proxy ends up without them.
  for (const { set, entry, spn } of state.refused) {
    out.push(
      `${spn}: ipset ${setName(set, state.family)} entry "${entry}" has the unspecified address, which the kernel refuses ` +
        `("Kernel error received: Invalid argument"); kube-proxy logs the error and goes on without it, and so does this output`,
    );
  }
  return out;
}

function emit(ir: ProxyIR, options: EmitOptions): Emitted {
  const state = syncIpvs(ir);
  const { standalone } = options;
  return {
    output: {
      form: 'bundle',
      kind: 'full',
      files: () => bundleFiles(ir, { standalone }, state),
      inline: () => renderApplyScript(emitIpvs(ir, { standalone }, state), applyScriptOptions(ir, { inline: true, standalone })),
    },
    warnings: syncWarnings(state, ir),
  };
}

/** A delta's apply.sh (`inline`: the four parts embedded, as compile --previous prints it without -o); also the watch's IPVS path's. */
export function ipvsDeltaScript(delta: IpvsDelta, family: IPFamily, options: DeltaOptions, inline: boolean): string {
  const description = `${options.full ? '--full, ' : ''}--ipvs-removed-real-servers ${options.removedRealServers ?? 'quiesce'}`;
  return renderDeltaScript(delta, { inline, family, standalone: options.standalone, description });
}

/** A problem in one of the previous state's parts, told as being about the option. */
function previousProblem<T>(option: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) throw new KpcError(e.kind, e.code, `${option}: ${e.describe()}`);
    throw e;
  }
}

function sameTexts(a: IpvsBundle, b: IpvsBundle): boolean {
  return a.ipvsRules === b.ipvsRules && a.ipsetRules === b.ipsetRules && a.iptablesRules === b.iptablesRules && a.addresses === b.addresses;
}

function readPrevious(path: string, option: string, ir: ProxyIR, stdin: StdinReader): PreviousState {
  const facts = new RuleFacts(ir.family);
  // `-`: the apply.sh kpc printed (ssh node cat apply.sh | kpc diff --previous -).
  const texts: IpvsBundle = previousProblem(option, () => (path === '-' ? bundleFromScript(readNamedText('-', option, stdin), '<stdin>') : readBundleTexts(path)));
  /**
   * The previous state, read (and checked) when first needed. A state is what its four texts
   * say, so when the new bundle's texts are the previous ones (kpc's own output of the same
   * input: nothing changed) the previous state is the new one, and neither is read (at 20,000
   * Services, 300,000 ipvsadm lines and 55,000 set entries). When they differ, only what
   * differs is read (node-state.ts readChangedStates), and both states whole (the previous one
   * beside the new one: readNodeStateBeside) only for a --full delta or the one lookup of the
   * report that needs them. Either way the previous parts that differ are read before the
   * delta or report is made, so a bad previous bundle is still reported before anything is
   * written.
   */
  let prev: IpvsNodeState | undefined;
  const previousState = (): IpvsNodeState => (prev ??= previousProblem(option, () => readNodeState(texts, ir.family, facts, path)));
  /** Both states whole: the new bundle's read back through the same readers, the previous one beside it (read once). */
  const wholeStates = (bundle: IpvsBundle): { before: IpvsNodeState; after: IpvsNodeState } => {
    if (sameTexts(bundle, texts)) {
      const state = previousState();
      return { before: state, after: state };
    }
    const after = readNodeState(bundle, ir.family, facts, 'kpc');
    prev ??= previousProblem(option, () => readNodeStateBeside(texts, { bundle, state: after }, facts, path));
    return { before: prev, after };
  };
  return {
    // Asked only when the new input has no Service ports (a delta removing them all is refused).
    get serviceEntries() {
      return previousState().ipvs.virtualServers.size;
    },
    delta(options: DeltaOptions): Emitted {
      const synced = syncIpvs(ir);
      const settings = { full: options.full, removedRealServers: options.removedRealServers ?? 'quiesce', excludeCIDRs: ir.knobs.ipvs.excludeCIDRs };
      const bundle = emitIpvs(ir, { standalone: false }, synced);
      let delta: IpvsDelta;
      if (!options.full && sameTexts(bundle, texts)) delta = unchangedIpvsDelta(bundle.addresses);
      else {
        const { before, after } = options.full ? wholeStates(bundle) : previousProblem(option, () => readChangedStates(texts, bundle, ir.family, facts, path));
        delta = previousProblem(`${option} ${path}`, () => computeIpvsDelta(before, after, bundle.addresses, settings));
      }
      const script = (inline: boolean) => ipvsDeltaScript(delta, ir.family, options, inline);
      return {
        output: {
          form: 'bundle',
          kind: 'delta',
          files: () => [
            { name: BUNDLE_FILES.ipvsRules, content: delta.ipvsRules, mode: 0o644 },
            { name: BUNDLE_FILES.ipsetRules, content: delta.ipsetRules, mode: 0o644 },
            { name: BUNDLE_FILES.iptablesRules, content: delta.iptablesRules, mode: 0o644 },
            { name: BUNDLE_FILES.addresses, content: delta.addresses, mode: 0o644 },
            { name: BUNDLE_FILES.applyScript, content: script(false), mode: 0o755 },
          ],
          inline: () => script(true),
        },
        // A full bundle and a delta both program the sets: both are told when one overflows.
        warnings: syncWarnings(synced, ir),
      };
    },
    diff(options: EmitOptions) {
      const synced = syncIpvs(ir);
      const bundle = emitIpvs(ir, { standalone: options.standalone }, synced);
      // The same texts: a state against itself, no differences.
      let report: IpvsDiffReport = { changed: false, groups: [] };
      if (!sameTexts(bundle, texts)) {
        const { before, after } = previousProblem(option, () => readChangedStates(texts, bundle, ir.family, facts, path));
        const wholePrevious = () => wholeStates(bundle).before.ipvs;
        report = previousProblem(`${option} ${path}`, () => diffIpvsStates(before, after, attributionOf(ir, synced), ir.knobs.ipvs.excludeCIDRs, wholePrevious));
      }
      return { changed: report.changed, text: (paint) => renderIpvsReport(report, paint), json: () => ipvsReportJSON(report) };
    },
  };
}

/**
 * `--golden DIR`: each file kpc writes with -o DIR is compared with DIR's file of that name (a
 * missing one counts as empty and is noted); `--golden FILE`: the inline apply.sh.
 */
function check(ir: ProxyIR, golden: string, options: EmitOptions, stdin: StdinReader): CheckResult {
  const { standalone } = options;
  const result: CheckResult = { drifted: [], diffs: [], notes: [] };
  if (isDirectoryPath(golden)) {
    for (const f of bundleFiles(ir, { standalone })) {
      const path = join(golden, f.name);
      let expected = '';
      try {
        expected = readNamedText(path, '--golden', stdin);
      } catch {
        result.notes.push(`${path} is missing: compared as empty`);
      }
      if (expected === f.content) continue;
      result.drifted.push(f.name);
      result.diffs.push(unifiedDiff(expected, f.content, path, `kpc compile (${f.name})`));
    }
  } else {
    const expected = readNamedText(golden, '--golden', stdin);
    const text = renderApplyScript(emitIpvs(ir, { standalone }), applyScriptOptions(ir, { inline: true, standalone }));
    if (expected !== text) {
      result.drifted.push('apply.sh');
      result.diffs.push(unifiedDiff(expected, text, golden, 'kpc compile'));
    }
  }
  return result;
}

function bundleOf(ir: ProxyIR, options: { standalone: boolean }, focus: ((sp: ServicePort) => boolean) | undefined): IpvsBundle {
  return focus === undefined ? emitIpvs(ir, options) : emitFocusedIpvs(ir, options, focus);
}

export const ipvsBackend: ModeBackend = {
  mode: 'ipvs',
  describes: 'an IPVS bundle',
  emit,
  readPrevious,
  check,
  // kpc trace (src/trace/ipvs.ts): the bundle's four parts.
  // With a focus, only the focused ports' virtual servers (emitFocusedIpvs).
  traceRules: (ir, options, focus) => ({ form: 'ipvs', bundle: bundleOf(ir, { standalone: options.standalone }, focus) }),
  // kpc explain (src/explain/ipvs.ts): ipvs.rules and ipset.rules.
  explainRules: (ir, focus) => {
    const bundle = bundleOf(ir, { standalone: false }, focus);
    return { form: 'ipvs', files: { ipvs: bundle.ipvsRules, ipset: bundle.ipsetRules } };
  },
};

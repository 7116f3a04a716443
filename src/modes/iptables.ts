/**
 * iptables mode: kube-proxy's iptables-restore input (emit/iptables), its deltas and diffs
 * against a previous output or a node's iptables-save (diff/iptables), and the golden check.
 */

import { buildFocusedRuleset, buildRuleset } from '../emit/iptables/index.js';
import type { Ruleset } from '../lang/iptables/ruleset.js';
import { gatherRuleset, renderFocusedText, renderGathered, renderRuleset, renderRulesetText, type GatheredRuleset } from '../lang/iptables/print.js';
import { readChangedChains, wholeStates, type ChangedChains } from '../diff/iptables/aligned.js';
import { renderDelta } from '../diff/iptables/delta.js';
import { diffChangedStates, diffStates, renderReport, reportJSON } from '../diff/iptables/report.js';
import { BuiltChains, countServiceRules, readState, RuleFacts, stateOfRuleset, type IptablesState } from '../diff/iptables/state.js';
import { unifiedDiff } from '../diff/unified.js';
import { isKpcError, usageError } from '../errors.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import { isDirectoryPath } from '../parser/input-files.js';
import { PreviousText } from './previous-text.js';
import type { CheckResult, DeltaOptions, EmitOptions, Emitted, ModeBackend, PreviousState, StdinReader } from './backend.js';

/**
 * Rules of a previous state are parsed when first compared (two outputs of kpc share almost
 * every rule text), so a malformed one can surface late: it is still the user's file and line.
 */
function placed<T>(path: string, option: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) throw e.inFile(path, option);
    throw e;
  }
}

/**
 * The ruleset is built here and the output holds it, not the IR: the text is printed from the
 * ruleset alone, so a caller that lets go of the IR lets the collector free it while the text
 * is written (at 100,000 Services a third of the heap the last full collections mark).
 */
function emit(ir: ProxyIR, options: EmitOptions): Emitted {
  const rs = buildRuleset(ir, options);
  return { output: { form: 'text', chunks: () => renderRuleset(rs) }, warnings: [] };
}

function readPrevious(path: string, option: string, ir: ProxyIR, stdin: StdinReader): PreviousState {
  const facts = new RuleFacts(ir.family);
  const previous = PreviousText.open(path, option, stdin);
  /**
   * The previous state, read (and checked) when first needed. It is not needed when the new
   * ruleset prints exactly the previous text (kpc's own output of the same input: nothing
   * changed): that text is kpc's output, so it is readable, and the state it says is the new
   * state. At 20,000 Services that skips reading 780,000 rules (and the file is compared as
   * the new text is made, never held whole: previous-text.ts). When the texts differ, it is
   * read before the delta or report is made, so a bad previous file is still reported before
   * anything is written.
   */
  let before: IptablesState | undefined;
  const previousState = (): IptablesState => (before ??= placed(path, option, () => readState(previous.text(), facts)));
  /**
   * The new state: `same` when the new ruleset prints the previous text; else, when the
   * consumer looks only at chains that differ (`changedOnly`) and the previous text is kpc's
   * printed form, just the chains that differ on each side (aligned.ts: the 263,000 chains
   * of 20,000 Services are compared in place, a few made into states); else the whole states.
   * A previous text the aligned reader does not take is read whole here, before anything is
   * written, with the errors it always gave.
   */
  type After = { kind: 'same' } | { kind: 'changed'; changed: ChangedChains; rs: Ruleset; printed: GatheredRuleset } | { kind: 'whole'; state: IptablesState };
  function afterState(options: EmitOptions, changedOnly: true): After;
  function afterState(options: EmitOptions, changedOnly: false): Exclude<After, { kind: 'changed' }>;
  function afterState(options: EmitOptions, changedOnly: boolean): After {
    const rs = buildRuleset(ir, options);
    const printed = gatherRuleset(rs);
    if (previous.matches(renderGathered(printed))) return { kind: 'same' };
    if (changedOnly && before === undefined) {
      const bytes = previous.window();
      let changed: ChangedChains | undefined;
      try {
        changed = bytes === undefined ? undefined : readChangedChains(bytes, printed, facts);
        // Written to while it was read: read whole instead (one version, or its error).
        if (bytes?.changed()) changed = undefined;
      } finally {
        bytes?.close();
      }
      if (changed !== undefined) return { kind: 'changed', changed, rs, printed };
    }
    previousState();
    return { kind: 'whole', state: stateOfRuleset(rs, facts) };
  }
  return {
    // Asked only when the new input has no Service ports (a delta removing them all is refused).
    get serviceEntries() {
      return countServiceRules(previousState());
    },
    delta(options: DeltaOptions): Emitted {
      // Only what must change, for `iptables-restore --noflush`; with --full every chain of
      // the new state, so the whole states.
      const after = options.full ? afterState(options, false) : afterState(options, true);
      // Nothing changed: without --full the delta is empty (every chain is the same); with
      // --full it is every chain of the state the text says, as when it differs.
      const render = (): string => {
        if (after.kind === 'same' && !options.full) return '';
        if (after.kind === 'changed') return placed(path, option, () => renderDelta(after.changed.before, after.changed.after, { full: false }));
        const prev = previousState();
        return placed(path, option, () => renderDelta(prev, after.kind === 'same' ? prev : after.state, { full: options.full }));
      };
      return { output: { form: 'text', chunks: () => [render()] }, warnings: [] };
    },
    diff(options: EmitOptions) {
      // The report follows jumps through unchanged chains (ownership). When the previous text
      // is kpc's printed form, the chains that differ and the new ruleset's looked up by name
      // (the whole states, the previous one made from the new one, where it must: wholeStates).
      const after = afterState(options, true);
      const report = after.kind === 'same' ? { changed: false, servicePorts: [] } : placed(path, option, () => {
        if (after.kind === 'whole') return diffStates(previousState(), after.state);
        const built = (table: 'filter' | 'nat') => new BuiltChains(after.printed[table], facts);
        return diffChangedStates(after.changed, built, () => wholeStates(after.changed, stateOfRuleset(after.rs, facts)));
      });
      return { changed: report.changed, text: (paint) => renderReport(report, paint), json: () => reportJSON(report) };
    },
  };
}

/**
 * The output against the golden file: compared with the file's bytes as it is printed, so a
 * check without drift holds neither text whole (81 MB each at 20,000 Services); only a drifted
 * golden is read whole, and the output printed whole, for the unified diff.
 */
function check(ir: ProxyIR, golden: string, options: EmitOptions, stdin: StdinReader): CheckResult {
  if (isDirectoryPath(golden)) throw usageError(`--golden ${golden} is a directory; iptables mode compares one file`);
  const expected = PreviousText.open(golden, '--golden', stdin);
  const printed = gatherRuleset(buildRuleset(ir, options));
  if (expected.matches(renderGathered(printed))) return { drifted: [], diffs: [], notes: [] };
  // An unreadable golden does not match: text() reports it, with the errors it always gave.
  const before = expected.text();
  return { drifted: [golden], diffs: [unifiedDiff(before, Array.from(renderGathered(printed)).join(''), golden, 'kpc compile')], notes: [] };
}

/**
 * The rules text trace and explain read: the whole output, or, with `focus`, the same text with
 * only the shared chains' rules and those of the service ports focus picks (the others are
 * blank lines: same lines, same rule indices, see renderFocusedText).
 */
function rulesText(ir: ProxyIR, options: EmitOptions = { standalone: false }, focus?: (sp: ServicePort) => boolean): string {
  if (focus === undefined) return renderRulesetText(buildRuleset(ir, options));
  const { rs, kept } = buildFocusedRuleset(ir, options, focus);
  return renderFocusedText(rs, kept);
}

export const iptablesBackend: ModeBackend = {
  mode: 'iptables',
  describes: 'iptables rules',
  emit,
  readPrevious,
  check,
  traceRules: (ir, options, focus) => ({ form: 'iptables', text: rulesText(ir, options, focus) }),
  explainRules: (ir, focus) => ({ form: 'iptables', text: rulesText(ir, { standalone: false }, focus) }),
};

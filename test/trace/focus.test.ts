/**
 * trace and explain from manifests read a focused iptables text (modes/iptables.ts rulesText
 * with `focus`: the shared chains and the focused service ports' own chains; the others' own
 * chains only counted, as blank lines): it must hold the whole output's lines at the same line
 * numbers, and trace and explain must say through it what they say through the whole output.
 * The whole output is the reference (the golden tests pin it to kube-proxy's).
 */

import { describe, expect, it } from 'vitest';
import { iptablesBackend } from '../../src/modes/iptables.js';
import type { ExplainRules } from '../../src/explain/rules.js';
import type { TraceRules } from '../../src/trace/rules.js';
import { loadGoldenCases } from '../helpers/fixtures.js';
import { caseIRs, expectFocusedExplanations, expectFocusedTraces } from './focus-compare.js';

function textOf(rules: TraceRules | ExplainRules): string {
  if (rules.form !== 'iptables') throw new Error(`expected iptables rules, got ${rules.form}`);
  return rules.text;
}

/** Every line of `focused` is blank or the whole output's line at that number. */
function expectSameLines(focused: string, whole: string, where: string): void {
  const f = focused.split('\n');
  const w = whole.split('\n');
  expect(f.length, where).toBe(w.length);
  const differing = f.flatMap((l, i) => (l === '' || l === w[i] ? [] : [`line ${i + 1}: ${l} vs ${w[i]}`]));
  expect(differing, where).toEqual([]);
}

describe('the focused iptables text of trace and explain', async () => {
  const cases = await caseIRs(loadGoldenCases().filter((c) => !c.args.some((a) => a === 'ipvs' || a === 'nftables')));

  it('finds the cases it compares', () => {
    expect(cases.length).toBeGreaterThan(40);
  });

  it('traces every service port\'s addresses and node port as the whole output does, at the same line numbers', () => {
    const traced = expectFocusedTraces(cases, iptablesBackend, (focused, whole, where) => expectSameLines(textOf(focused), textOf(whole), where));
    expect(traced).toBeGreaterThan(500);
  }, 120_000);

  it('explains every Service as through the whole output', () => {
    const explained = expectFocusedExplanations(cases, iptablesBackend, (focused, whole, where) => expectSameLines(textOf(focused), textOf(whole), where));
    expect(explained).toBeGreaterThan(80);
  }, 120_000);
});

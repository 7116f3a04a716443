/**
 * The diff report's walk of a table kpc's emitter built (report.ts walkOfDiffering) against
 * the whole walk: for every iptables golden case, the emitter's tables keep the invariant that
 * walk rests on (each per-service chain reached only from its own port, tagged with it), and
 * the report made with it is the report of the whole walk.
 */

import { describe, expect, it } from 'vitest';
import { compileInput, type CommonFlags } from '../../../src/cli/pipeline.js';
import { buildRuleset } from '../../../src/emit/iptables/index.js';
import { diffStates, topJumps, walk, walkOfDiffering } from '../../../src/diff/iptables/report.js';
import { isBuiltTable, isServiceChain, readState, RuleFacts, stateOfRuleset, type IptablesState } from '../../../src/diff/iptables/state.js';
import { caseArgv, loadGoldenCases } from '../../helpers/fixtures.js';
import { parseCaseFlags } from '../../ipvs/helpers/compile-case.js';

const cases = loadGoldenCases().filter((c) => c.hasInput && c.expectedOut !== undefined && /^\*filter\n/.test(c.expectedOut));

function builtState(args: string[], family: 'IPv4' | 'IPv6'): IptablesState {
  const flags = parseCaseFlags(args);
  const { ir } = compileInput(flags as unknown as CommonFlags, () => new Uint8Array());
  return stateOfRuleset(buildRuleset(ir, { standalone: flags.standalone ?? false }), new RuleFacts(family));
}

/** The same chains in tables that are not marked built: diffStates then walks them whole. */
function plain(state: IptablesState): IptablesState {
  return new Map([...state].map(([t, chains]) => [t, new Map(chains)]));
}

const built = cases.flatMap((c) => {
  const args = caseArgv(c);
  const family = args.includes('ipv6') ? 'IPv6' : 'IPv4';
  try {
    return [{ name: c.name, family, state: builtState(args, family), golden: c.expectedOut! }] as const;
  } catch {
    return []; // a case whose input kpc refuses (its golden is an error): nothing built
  }
});

describe('the walk of a built table', () => {
  it(`is the whole walk for every port, in every iptables golden case (${built.length})`, () => {
    expect(built.length).toBeGreaterThan(50);
    let ports = 0;
    for (const { name, state } of built) {
      const nat = state.get('nat')!;
      expect(isBuiltTable(nat)).toBe(true);
      const starts = topJumps(nat);
      const whole = walk(nat, starts);
      expect(whole.contended, name).toBe(false);
      const all = [...nat.keys()].filter(isServiceChain);
      const partial = walkOfDiffering(nat, starts, all);
      expect(partial, name).toBeDefined();
      expect(new Map([...partial!.owner].sort()), name).toEqual(new Map([...whole.owner].sort()));
      ports += new Set(whole.owner.values()).size;
    }
    expect(ports).toBeGreaterThan(60);
  });

  it('gives the report of the whole walk, against another case\'s golden and against its own chains with some removed or changed', () => {
    let reports = 0;
    for (let i = 0; i < built.length; i++) {
      const { name, family, state } = built[i]!;
      const other = built[(i + 1) % built.length]!;
      const befores: IptablesState[] = [];
      if (other.family === family) befores.push(readState(other.golden, family));
      // Every third per-service chain gone, every fifth with its last rule dropped.
      const thinned = plain(state);
      let k = 0;
      for (const [chainName, chain] of thinned.get('nat')!) {
        if (!isServiceChain(chainName)) continue;
        k++;
        if (k % 3 === 0) thinned.get('nat')!.delete(chainName);
        else if (k % 5 === 0) thinned.get('nat')!.set(chainName, { name: chainName, builtin: false, rules: chain.rules.slice(0, -1) });
      }
      befores.push(thinned);
      for (const before of befores) {
        const fast = diffStates(before, state);
        expect(fast, name).toEqual(diffStates(before, plain(state)));
        if (fast.changed) reports++;
      }
    }
    expect(reports).toBeGreaterThan(100);
  });
});

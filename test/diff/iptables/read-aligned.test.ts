/**
 * readChangedChains (src/diff/iptables/aligned.ts: a previous output read against the new
 * ruleset, only the differing chains made into states) must give what the slow path gives:
 *
 *   - whenever it reads a text, readKpcLayout reads it too (so the slow path would not have
 *     reported an error), each chain it gives is that chain of readState's state (same name,
 *     built-in flag, rules and line numbers) or of stateOfRuleset's, every chain it leaves
 *     out has the same text on both sides, and renderDelta of its states is renderDelta of
 *     the whole states, byte for byte;
 *   - any text it does not read (undefined) is left to readState, whose errors (file:line)
 *     are then the ones they always were (test/diff/iptables/previous-input.test.ts).
 *
 * Over pairs of iptables golden outputs, generated clusters (one Service changed, Services
 * added and removed), and previous texts broken or moved just outside kpc's layout.
 *
 * Run alone: `npx vitest run test/diff/iptables/read-aligned.test.ts`.
 */

import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ByteWindow } from '../../../src/diff/byte-window.js';
import { readChangedChains, wholeStates } from '../../../src/diff/iptables/aligned.js';
import { diffChangedStates, diffStates, renderReport, reportJSON } from '../../../src/diff/iptables/report.js';
import { referenceDiff } from './report-reference.js';
import { renderDelta } from '../../../src/diff/iptables/delta.js';
import { BuiltChains, readKpcLayout, readState, RuleFacts, stateOfRuleset, type IptablesState } from '../../../src/diff/iptables/state.js';
import { gatherRuleset, renderRulesetText } from '../../../src/lang/iptables/print.js';
import { newRuleset, type Ruleset } from '../../../src/lang/iptables/ruleset.js';
import { generateCluster, renderCluster } from '../../../bench/gen.js';
import { loadGoldenCases } from '../../helpers/fixtures.js';
import { parseCaseFlags } from '../../ipvs/helpers/compile-case.js';
import { compileInput, type CommonFlags } from '../../../src/cli/pipeline.js';
import { buildRuleset } from '../../../src/emit/iptables/index.js';
import { runKpc } from '../../helpers/run-kpc.js';

const scratch = mkdtempSync(join(tmpdir(), 'kpc-aligned-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A ruleset holding what a text in kpc's printed layout says (declared by name, rules appended in order). */
function rulesetOf(text: string): Ruleset {
  const rs = newRuleset();
  let table: Ruleset['filter'] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = rs[line.slice(1) as 'filter' | 'nat'];
    else if (line.startsWith(':')) table!.declare(line.slice(1).split(' ')[0]!);
    else if (line.startsWith('-A ')) {
      const sp = line.indexOf(' ', 3);
      table!.append(line.slice(3, sp), line.slice(sp + 1));
    }
  }
  return rs;
}

function view(state: IptablesState, table: 'filter' | 'nat', name: string) {
  const c = state.get(table)!.get(name);
  return c && { name: c.name, builtin: c.builtin, rules: c.rules.map((r) => [r.spec, r.line]) };
}

/**
 * The fast reading of `previous` against the ruleset of `next`, checked against the slow one;
 * whether it read the text.
 */
function check(previous: string, next: string, label: string, window?: number): boolean {
  const rs = rulesetOf(next);
  const facts = new RuleFacts('IPv4');
  let bytes = ByteWindow.of(Buffer.from(previous, 'utf8'));
  if (window !== undefined) {
    // From a file, a small window at a time (the reader moves it, and reads back, often).
    const file = join(scratch, 'previous.txt');
    writeFileSync(file, previous);
    bytes = ByteWindow.file(file, window)!;
  }
  let fast: ReturnType<typeof readChangedChains>;
  const printed = gatherRuleset(rs);
  try {
    fast = readChangedChains(bytes, printed, facts);
  } finally {
    bytes.close();
  }
  if (fast === undefined) return false;
  const layout = readKpcLayout(previous, new RuleFacts('IPv4'));
  expect(layout, `${label}: read here, so readKpcLayout must read it`).toBeDefined();
  const before = readState(previous, new RuleFacts('IPv4'));
  const after = stateOfRuleset(rs, new RuleFacts('IPv4'));
  for (const table of ['filter', 'nat'] as const) {
    for (const [side, part, whole] of [['before', fast.before, before], ['after', fast.after, after]] as const) {
      for (const name of part.get(table)!.keys()) expect(view(part, table, name), `${label}: ${side} ${table}/${name}`).toEqual(view(whole, table, name));
    }
    // Whatever is left out is the same on both sides; built-in chains are always given.
    const names = new Set([...before.get(table)!.keys(), ...after.get(table)!.keys()]);
    for (const name of names) {
      const inFast = fast.before.get(table)!.has(name) || fast.after.get(table)!.has(name);
      if (inFast) continue;
      const b = before.get(table)!.get(name);
      const a = after.get(table)!.get(name);
      expect(b !== undefined && a !== undefined, `${label}: ${table}/${name} left out but in one side only`).toBe(true);
      expect(b!.builtin, `${label}: built-in ${table}/${name} left out`).toBe(false);
      expect(b!.rules.map((r) => r.spec), `${label}: ${table}/${name} left out but differs`).toEqual(a!.rules.map((r) => r.spec));
    }
  }
  const want = renderDelta(before, after, { full: false });
  expect(renderDelta(fast.before, fast.after, { full: false }), `${label}: delta`).toBe(want);
  // kpc diff's report: the whole states, the previous one made from the new one and the
  // differing chains (what `kpc diff` does with kpc's printed form), against both read whole.
  // Each against the report by its definition (report-reference.ts), on fresh states.
  const reportOf = (diff: typeof diffStates, b: IptablesState, a: IptablesState): string => {
    try {
      const r = diff(b, a);
      return `${reportJSON(r)}\n${renderReport(r)}`;
    } catch (e) {
      return `error: ${(e as Error).message}`;
    }
  };
  const wantReport = reportOf(referenceDiff, readState(previous, new RuleFacts('IPv4')), stateOfRuleset(rs, new RuleFacts('IPv4')));
  const whole = wholeStates(fast, stateOfRuleset(rs, facts));
  expect(reportOf(diffStates, whole.before, whole.after), `${label}: diff report`).toBe(wantReport);
  expect(reportOf(diffStates, before, after), `${label}: diff report of the states read whole`).toBe(wantReport);
  // What kpc diff does: the differing chains and the new ruleset's looked up by name, the whole
  // states only where the report needs every chain.
  const changedOnly = (): string => {
    const facts = new RuleFacts('IPv4');
    const again = readChangedChains(ByteWindow.of(Buffer.from(previous, 'utf8')), printed, facts)!;
    const built = (table: 'filter' | 'nat') => new BuiltChains(printed[table], facts);
    return reportOf(() => diffChangedStates(again, built, () => wholeStates(again, stateOfRuleset(rs, facts))), before, after);
  };
  expect(changedOnly(), `${label}: diff report of the differing chains`).toBe(wantReport);
  return true;
}

const outputs = loadGoldenCases()
  .filter((c) => c.expectedOut !== undefined && /^\*filter\n/.test(c.expectedOut) && !c.expectedOut.includes('\n-I ') && !c.expectedOut.includes('\n-X '))
  .map((c) => ({ name: c.name, text: c.expectedOut! }))
  // Whole outputs in kpc's printed order (deltas and other layouts are previous texts below).
  .filter((o) => renderRulesetText(rulesetOf(o.text)) === o.text);

/** `text` with the first SVC chain's first jump to an endpoint chain sent to another port's endpoint chain instead. */
function crossJump(text: string): string {
  const jumps = [...text.matchAll(/^-A (KUBE-SVC-\S+) (.*)-j (KUBE-SEP-\S+)$/gm)];
  const other = jumps.find((j) => j[1] !== jumps[0]![1]);
  if (other === undefined) throw new Error('crossJump: the text has one SVC chain');
  return text.replace(jumps[0]![0], `-A ${jumps[0]![1]} ${jumps[0]![2]}-j ${other[3]}`);
}

/** `text` with the first commented KUBE-SERVICES jump's comment naming the next such rule's port. */
function otherPortComment(text: string): string {
  const rules = [...text.matchAll(/^-A KUBE-SERVICES -m comment --comment "?([^ "]+)(.*)$/gm)];
  const other = rules.find((r) => r[1] !== rules[0]![1]);
  if (other === undefined) throw new Error('otherPortComment: one port only');
  return text.replace(rules[0]![0], rules[0]![0].replace(rules[0]![1]!, other[1]!));
}

describe('readChangedChains', () => {
  it(`reads every pair of iptables golden outputs (${outputs.length}²) as the slow path does`, () => {
    expect(outputs.length).toBeGreaterThan(30);
    let read = 0;
    for (const a of outputs) for (const b of outputs) if (check(a.text, b.text, `${a.name} → ${b.name}`)) read++;
    // Every one is kpc's printed layout: all read here.
    expect(read).toBe(outputs.length * outputs.length);
  }, 60_000);

  // Changes of a previous text that keep it in readKpcLayout's reading or take it out; either
  // way the result must be the slow path's (check), and those outside must not be read here.
  const base = outputs.find((o) => o.text.includes(':KUBE-SEP-') && o.text.includes('-A KUBE-SVC-'))!.text;
  const firstSep = /^-A (KUBE-SEP-\S+) .*$/m.exec(base)!;
  // A text with several Service ports, for the changes that move chains between ports.
  const multi = outputs.find((o) => (o.text.match(/^-A KUBE-SVC-\S+ .*-j KUBE-SEP-/gm)?.length ?? 0) >= 4 && new Set(o.text.match(/^:KUBE-SVC-\S+/gm)).size >= 2)!.text;
  const mutations: Array<[string, string, 'outside' | 'either', string?]> = [
    ['a non-ASCII character in a rule', base.replace(firstSep[0], `${firstSep[0]} -m comment --comment "é"`), 'outside'],
    ['a trailing space', base.replace(firstSep[0], `${firstSep[0]} `), 'outside'],
    ['a leading space', base.replace(firstSep[0], ` ${firstSep[0]}`), 'outside'],
    ['a tab', base.replace(firstSep[0], firstSep[0].replace(' ', '\t')), 'outside'],
    ['a CR', base.replace(/\n/g, '\r\n'), 'outside'],
    ['a comment line', `# Generated by iptables-save\n${base}`, 'outside'],
    ['a blank line between rules', base.replace(`${firstSep[0]}\n`, `${firstSep[0]}\n\n`), 'outside'],
    ['counters', base.replace(firstSep[0], `[0:0] ${firstSep[0]}`), 'outside'],
    ['an -N line', base.replace(`:${firstSep[1]} - [0:0]`, `-N ${firstSep[1]}`), 'outside'],
    ['a rule of an undeclared chain', base.replace(firstSep[0], `${firstSep[0]}\n-A KUBE-SEP-ZZZZZZZZZZZZZZZZ -j ACCEPT`), 'outside'],
    ['a second run of a chain', base.replace('\nCOMMIT\n*nat', '\nCOMMIT\n*nat').replace(/\nCOMMIT\n$/, `\n${firstSep[0]}\nCOMMIT\n`), 'outside'],
    ['a chain declared twice', base.replace(`:${firstSep[1]} - [0:0]`, `:${firstSep[1]} - [0:0]\n:${firstSep[1]} - [0:0]`), 'outside'],
    ['a chain declared after rules', base.replace(/\nCOMMIT\n$/, '\n:KUBE-LATE - [0:0]\nCOMMIT\n'), 'outside'],
    ['a bad chain name', base.replace(`:${firstSep[1]} - [0:0]`, `:${firstSep[1]} - [0:0]\n:KUBE-lower - [0:0]`), 'outside'],
    ['no COMMIT (a truncated file)', base.slice(0, base.lastIndexOf('COMMIT')), 'outside'],
    ['a table inside a table', base.replace('COMMIT\n*nat', '*nat'), 'outside'],
    ['an -A without arguments', base.replace(firstSep[0], `-A ${firstSep[1]}`), 'outside'],
    ['another table', `${base}*mangle\n:FOO - [0:0]\n-A FOO -j ACCEPT\nCOMMIT\n`, 'outside'],
    ['nat before filter', base.slice(base.indexOf('*nat')) + base.slice(0, base.indexOf('*nat')), 'outside'],
    ['chain lines out of order', base.replace(':KUBE-NODEPORTS - [0:0]\n:KUBE-SERVICES - [0:0]\n', ':KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n'), 'either'],
    ['no newline after the last COMMIT', base.slice(0, -1), 'either'],
    ['a policy and counters on a built-in chain', base.replace(/^:KUBE-SERVICES - \[0:0\]$/m, ':KUBE-SERVICES - [5:300]'), 'either'],
    ['a chain of another component, with rules', base.replace(/\nCOMMIT\n$/, '\n-A ZZZ-OTHER -j ACCEPT\nCOMMIT\n').replace(/^(\*nat\n)/m, '$1:ZZZ-OTHER - [0:0]\n'), 'either'],
    ['a stale per-service chain with rules', base.replace(/^(\*nat\n)/m, '$1').replace(`:${firstSep[1]} - [0:0]`, `:${firstSep[1]} - [0:0]\n:KUBE-SEP-ZZZZZZZZZZZZZZZZ - [0:0]`).replace(/\nCOMMIT\n$/, '\n-A KUBE-SEP-ZZZZZZZZZZZZZZZZ -j ACCEPT\nCOMMIT\n'), 'either'],
    ['a rule changed in place', base.replace(firstSep[0], firstSep[0].replace('-j ', '-m mark --mark 0x1 -j ')), 'either'],
    ['a rule that does not parse', base.replace(firstSep[0], `${firstSep[0]} --no-such-option`), 'either'],
    // Jumps and comments that move chains between Service ports (the diff report's owners).
    ['a jump to another port\'s endpoint chain', crossJump(multi), 'either', multi],
    ['a top-level rule naming another port', otherPortComment(multi), 'either', multi],
    ['a top-level jump removed', multi.replace(/^-A KUBE-SERVICES .*-j KUBE-SVC-\S+\n/m, ''), 'either', multi],
    ['an endpoint chain jumped to twice', multi.replace(/^(-A KUBE-SVC-\S+ .*-j (KUBE-SEP-\S+))$/m, '$1\n$1'), 'either', multi],
  ];
  for (const [what, previous, where, next = base] of mutations) {
    it(`a previous text with ${what}: the slow path's result${where === 'outside' ? ', left to it' : ''}`, () => {
      expect(previous).not.toBe(next);
      let read: boolean;
      try {
        read = check(previous, next, what);
      } catch (e) {
        // A delta that fails (a rule that does not parse) must fail alike on the slow path.
        expect(() => renderDelta(readState(previous, new RuleFacts('IPv4')), stateOfRuleset(rulesetOf(next), new RuleFacts('IPv4')), { full: false })).toThrow((e as Error).message);
        read = true;
      }
      if (where === 'outside') expect(read).toBe(false);
    });
  }

  it('reads the previous file through a small window as it reads the bytes whole', () => {
    for (const [k, a] of outputs.entries()) {
      const b = outputs[(k + 1) % outputs.length]!;
      for (const window of [1, 7, 64, 1000]) expect(check(a.text, b.text, `${a.name} → ${b.name}, window ${window}`, window)).toBe(true);
    }
    for (const [what, previous, , next = base] of mutations) {
      const whole = (() => { try { return check(previous, next, what); } catch (e) { return (e as Error).message; } })();
      const windowed = (() => { try { return check(previous, next, what, 5); } catch (e) { return (e as Error).message; } })();
      expect(windowed, what).toBe(whole);
    }
  }, 60_000);

  it('reads a previous text with chains only it has, only the new one has, and changed ones', () => {
    // Every chain of `base` dropped from the new side in turn, and from the previous side.
    const chains = [...base.matchAll(/^:(\S+) /gm)].map((m) => m[1]!);
    let read = 0;
    for (const name of chains) {
      const without = base
        .split('\n')
        .filter((l) => !l.startsWith(`:${name} `) && !l.startsWith(`-A ${name} `))
        .join('\n');
      if (check(base, without, `${name} gone`)) read++;
      if (check(without, base, `${name} new`)) read++;
    }
    expect(read).toBe(2 * chains.length);
  });
});

describe('readChangedChains on generated clusters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kpc-aligned-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const compile = async (objects: unknown[], name: string): Promise<string> => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, Array.from(renderCluster(objects, 'json')).join(''));
    const out = join(dir, `${name}.txt`);
    const r = await runKpc(['compile', '-f', file, '--kube-proxy-version', '1.34', '--hostname-override', 'node-0', '--cluster-cidr', '10.244.0.0/16', '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    return (await import('node:fs')).readFileSync(out, 'utf8');
  };

  it('one Service changed, Services added and removed (300 Services, 3 seeds)', async () => {
    for (const seed of [1, 2, 3]) {
      const base = generateCluster({ services: 300, seed });
      const changed = generateCluster({ services: 300, seed, variant: 'one-changed' });
      const fewer = base.filter((o, k) => k % 37 !== 5);
      const texts = [await compile(base, `b${seed}`), await compile(changed, `c${seed}`), await compile(fewer, `f${seed}`)];
      for (const [x, a] of texts.entries()) for (const [y, b] of texts.entries()) expect(check(a, b, `seed ${seed}: ${x} → ${y}`)).toBe(true);
    }
  }, 120_000);

  it('one endpoint moved: the report of the differing chains needs no whole state; a Service gone: it does', async () => {
    const base = generateCluster({ services: 300, seed: 4 });
    const moved = structuredClone(base) as Array<Record<string, any>>;
    const slices = moved.filter((o) => o.kind === 'EndpointSlice' && (o.endpoints?.length ?? 0) > 1);
    slices[7]!.endpoints[0].addresses = ['10.251.0.9'];
    const gone = slices[7]!.metadata.labels['kubernetes.io/service-name'] as string;
    const fewer = base.filter((o) => (o as Record<string, any>).metadata?.name !== gone);
    // The emitter's own rulesets (their per-service chains tagged with their ports), as kpc diff has.
    const emitted = (objects: unknown[], name: string): Ruleset => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, Array.from(renderCluster(objects, 'json')).join(''));
      const flags = parseCaseFlags(['-f', file, '--kube-proxy-version', '1.34', '--hostname-override', 'node-0', '--cluster-cidr', '10.244.0.0/16']);
      return buildRuleset(compileInput(flags as unknown as CommonFlags, () => new Uint8Array()).ir, { standalone: false });
    };
    const rulesets = { base: emitted(base, 'eb'), moved: emitted(moved, 'em'), fewer: emitted(fewer, 'ef') };
    const report = (from: keyof typeof rulesets, to: keyof typeof rulesets): { text: string; whole: boolean } => {
      const previous = renderRulesetText(rulesets[from]);
      const rs = rulesets[to];
      const facts = new RuleFacts('IPv4');
      const printed = gatherRuleset(rs);
      const changed = readChangedChains(ByteWindow.of(Buffer.from(previous, 'utf8')), printed, facts)!;
      expect(changed, `${from} → ${to}: read aligned`).toBeDefined();
      let whole = false;
      const r = diffChangedStates(changed, (table) => new BuiltChains(printed[table], facts), () => {
        whole = true;
        return wholeStates(changed, stateOfRuleset(rs, facts));
      });
      const want = referenceDiff(readState(previous, new RuleFacts('IPv4')), stateOfRuleset(rs, new RuleFacts('IPv4')));
      expect(`${reportJSON(r)}\n${renderReport(r)}`, `${from} → ${to}: report`).toBe(`${reportJSON(want)}\n${renderReport(want)}`);
      return { text: renderReport(r), whole };
    };
    for (const [from, to] of [['base', 'moved'], ['moved', 'base']] as const) {
      const r = report(from, to);
      expect(r.text, `${from} → ${to}`).toContain('endpoint 10.251.0.9:');
      expect(r.whole, `${from} → ${to}: whole states asked for`).toBe(false);
    }
    const r = report('base', 'fewer');
    expect(r.text).toContain(`chain nat/KUBE-SVC-`);
    expect(r.whole, 'a Service gone: its KUBE-SERVICES rules differ, so the whole states').toBe(true);
  }, 60_000);
});

describe('ByteWindow.changed: a previous file written to while it is read', () => {
  it('is false for an untouched file and true once the file is rewritten in place (the delta is then made from one whole read)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpc-window-changed-'));
    try {
      const file = join(dir, 'previous.txt');
      writeFileSync(file, '*filter\nCOMMIT\n');
      const bytes = ByteWindow.file(file, 4)!;
      bytes.latin1(0, 4);
      expect(bytes.changed()).toBe(false);
      // File times move with the kernel's coarse clock (a few ms): the rewrite comes later.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      const fd = openSync(file, 'r+');
      writeSync(fd, '*nat  ', 0);
      closeSync(fd);
      expect(bytes.changed()).toBe(true);
      bytes.close();
      expect(ByteWindow.of(Buffer.from('x')).changed()).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

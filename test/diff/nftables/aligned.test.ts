/**
 * A previous transaction read beside the new one (src/diff/nftables/aligned.ts: only the
 * objects whose lines differ are read) must give what reading it whole (readTransaction) gives:
 *
 *   - readBeside: the whole previous state (every chain, set, map and counter equal, in the
 *     same order, the same table) and the whole new one, their objects made when asked for, or
 *     undefined; never a state where the whole reader refuses the text; and kpc diff's report
 *     of them (which compares only the differing names it is given) is the report of the
 *     whole states;
 *   - readChangedTransactions: only what differs, on both sides, whose delta (nftDelta without
 *     --full) is the delta of the whole states, byte for byte; or undefined.
 *
 * The new transactions are kpc's own (buildTransaction of every nftables golden case's IR);
 * the previous texts are their text changed at random: lines removed, repeated, moved, edited;
 * chains deleted, sets declared otherwise, elements added and deleted; the table flushed; lines
 * of another table, blank, commented, indented or with a quoted name, which are left to the
 * whole reader.
 *
 * Run alone: `npx vitest run test/diff/nftables/aligned.test.ts`.
 */

import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
// mulberry32, seeded: a failure names its seed.
import { prng as random } from '../../../bench/gen.js';
import { readBeside, readChangedTransactions } from '../../../src/diff/nftables/aligned.js';
import { nftDelta } from '../../../src/diff/nftables/delta.js';
import { diffNftStates } from '../../../src/diff/nftables/report.js';
import { RecordedOperations } from '../../../src/diff/nftables/named.js';
import { buildTransaction, emitNftables } from '../../../src/emit/nftables/index.js';
import { AsciiBytes } from '../../../src/lang/ascii-bytes.js';
import { applyTransaction, emptyState, NftTransaction, readTransaction, renderTransaction, renderTransactionText, type NftOperation, type NftState, type NftStateView } from '../../../src/lang/nftables/index.js';
import { loadNftablesGoldenCases } from '../../helpers/fixtures.js';
import { compileCaseIR } from '../../ipvs/helpers/compile-case.js';

const TABLE = 'kube-proxy';
const SLOW = { timeout: 600_000 };


/** A transaction built whole, as the readers take it: its text printed, what its operations do and name recorded. */
function printedOf(tx: NftTransaction): { text: AsciiBytes; ops: RecordedOperations } {
  const ops = new RecordedOperations(tx.family, tx.table);
  ops.record(tx.ops);
  return { text: AsciiBytes.join(renderTransaction(tx))!, ops };
}

/** The name an operation's object has ('' for the table). */
function objectName(op: NftOperation): string {
  const o = op.object;
  return o.kind === 'rule' ? o.chain : o.kind === 'element' ? o.container : o.kind === 'table' ? '' : o.name;
}

function pick<T>(rnd: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rnd() * xs.length)]!;
}

type Outcome<T> = { value: T } | { error: string };

function outcome<T>(work: () => T): Outcome<T> {
  try {
    return { value: work() };
  } catch (e) {
    return { error: String(e) };
  }
}

/** A state with the order of its objects visible. */
function view(s: NftStateView) {
  return {
    exists: s.exists,
    comment: s.comment,
    commentsKnown: s.commentsKnown,
    chains: [...s.chains.values()].map((c) => [c.name, c.base, c.comment, c.rules.map((r) => [r.text, r.comment])]),
    sets: [...s.sets.values()].map((x) => [x.name, x.kind, x.type, x.flags, x.timeout, x.comment, [...x.elements.values()]]),
    counters: [...s.counters],
  };
}

/** The fifth word of each line that names an object: the names the mutations use. */
function namesOf(lines: string[], kind: string): string[] {
  return [...new Set(lines.filter((l) => l.split(' ')[1] === kind).map((l) => l.split(' ')[4]!))];
}

const MUTATIONS: ((lines: string[], rnd: () => number) => void)[] = [
  (l, rnd) => void l.splice(Math.floor(rnd() * l.length), 1),
  (l, rnd) => void l.splice(Math.floor(rnd() * l.length), 0, pick(rnd, l)),
  (l, rnd) => {
    // moved: another order of objects (and of one chain's rules)
    const [line] = l.splice(Math.floor(rnd() * l.length), 1);
    l.splice(Math.floor(rnd() * l.length), 0, line!);
  },
  (l, rnd) => {
    const i = Math.floor(rnd() * l.length);
    l[i] = l[i]!.replace(/\d+(?=[^\d]*$)/, (d) => String(Number(d) + 1));
  },
  (l, rnd) => {
    const rules = l.map((x, i) => [x, i] as const).filter(([x]) => x.startsWith('add rule '));
    if (rules.length > 0) l[pick(rnd, rules)[1]] += ' comment "moved"';
  },
  (l, rnd) => {
    const chains = namesOf(l, 'chain');
    if (chains.length > 0) l.push(`delete chain ip ${TABLE} ${pick(rnd, chains)}`);
  },
  (l, rnd) => {
    const chains = namesOf(l, 'chain');
    if (chains.length > 0) l.push(`flush chain ip ${TABLE} ${pick(rnd, chains)}`);
  },
  (l) => void l.push(`add chain ip ${TABLE} stale-chain`, `add rule ip ${TABLE} stale-chain counter`),
  (l, rnd) => {
    // a set or map declared otherwise (the delta then needs the whole states)
    const decl = l.map((x, i) => [x, i] as const).filter(([x]) => /^add (set|map) /.test(x));
    if (decl.length > 0) {
      const i = pick(rnd, decl)[1];
      l[i] = l[i]!.includes('comment') ? l[i]!.replace(/comment "[^"]*"/, 'comment "other"') : l[i]!.replace(/ ; }$/, ' ; comment "other" ; }');
    }
  },
  (l, rnd) => {
    const elements = l.filter((x) => x.startsWith('add element '));
    if (elements.length > 0) {
      const e = pick(rnd, elements);
      l.push(rnd() < 0.5 ? e.replace(/^add /, 'delete ').replace(/ : [^}]*}$/, ' }') : e.replace(/\d+\.\d+\.\d+\.(\d+)/, (m, d) => m.replace(new RegExp(`${d}$`), String((Number(d) + 7) % 256))));
    }
  },
  (l) => void l.push(`add counter ip ${TABLE} stale-counter`),
  (l, rnd) => {
    const counters = namesOf(l, 'counter');
    if (counters.length > 0) l.push(`delete counter ip ${TABLE} ${pick(rnd, counters)}`);
  },
  // left to the whole reader
  (l, rnd) => void l.splice(1 + Math.floor(rnd() * (l.length - 1)), 0, pick(rnd, [`flush table ip ${TABLE}`, 'add table ip other', `delete table ip ${TABLE}`, `add table ip ${TABLE} { comment "x" ; }`])),
  (l, rnd) => void l.splice(Math.floor(rnd() * l.length), 0, pick(rnd, ['', '# a comment', '   ', '\t'])),
  (l, rnd) => {
    const i = Math.floor(rnd() * l.length);
    l[i] = pick(rnd, [`  ${l[i]}`, `${l[i]} `, l[i]!.replace(/^(\S+ \S+ \S+ \S+ )(\S+)/, '$1"$2"'), l[i]!.replace(' ip ', ' ip6 '), l[i]!.replace(/^add /, 'insert ')]);
  },
];

function previousOf(text: string, rnd: () => number): string {
  const lines = text.split('\n').filter((l) => l !== '');
  const n = 1 + Math.floor(rnd() * 3);
  for (let i = 0; i < n && lines.length > 0; i++) pick(rnd, MUTATIONS)(lines, rnd);
  return lines.join('\n') + (rnd() < 0.95 ? '\n' : '');
}

interface Case {
  name: string;
  tx: NftTransaction;
  text: string;
  state: NftState;
  /** The text as compile --previous prints it, and what its lines name. */
  printed: AsciiBytes;
  ops: RecordedOperations;
}

async function cases(): Promise<Case[]> {
  const out: Case[] = [];
  for (const c of loadNftablesGoldenCases()) {
    if (c.exit !== 0) continue;
    let ir;
    try {
      ir = await compileCaseIR(c);
    } catch {
      continue; // a case whose input kpc refuses
    }
    const tx = buildTransaction(ir, { standalone: false });
    // As compile --previous prints it: chunk by chunk, what each operation names recorded.
    const ops = new RecordedOperations(tx.family, TABLE);
    const printed = AsciiBytes.join(emitNftables(ir, { standalone: false }, (chunk) => ops.record(chunk)))!;
    out.push({ name: c.name, tx, text: renderTransactionText(tx), state: applyTransaction(emptyState(tx.family, TABLE), tx), printed, ops });
  }
  return out;
}

describe('nftables: a previous transaction read beside the new one', () => {
  it('gives the whole reader\'s state, delta and report, or leaves the text to it', SLOW, async () => {
    const all = await cases();
    expect(all.length).toBeGreaterThan(60);
    let beside = 0;
    let changed = 0;
    let total = 0;
    let shared = 0;
    for (const k of all) {
      for (let seed = 1; seed <= 40; seed++) {
        const rnd = random(seed * 65537 + k.name.length);
        const prev = seed === 1 ? k.text : previousOf(k.text, rnd);
        total++;
        const whole = outcome(() => readTransaction(prev, k.tx.family, TABLE));
        const b = outcome(() => readBeside(prev, k.printed, k.ops));
        if (!('value' in b)) throw new Error(`${k.name} seed ${seed}: readBeside threw ${b.error}`);
        if (b.value !== undefined) {
          beside++;
          // The report first, on fresh states: it must not need an object it was not given the name of.
          if ('value' in whole) {
            const report = outcome(() => diffNftStates(b.value!.before, b.value!.after, b.value!.differing));
            expect({ name: k.name, seed, report }).toEqual({ name: k.name, seed, report: outcome(() => diffNftStates(whole.value, k.state)) });
          }
          const got = { name: k.name, seed, prev, state: view(b.value.before) };
          expect(got).toEqual({ name: k.name, seed, prev, state: 'value' in whole ? view(whole.value) : whole });
          expect({ name: k.name, seed, after: view(b.value.after) }).toEqual({ name: k.name, seed, after: view(k.state) });
          const differing = new Set(b.value.differing.chains);
          for (const c of b.value.before.chains.values()) {
            if (b.value.after.chains.get(c.name) === c) shared++;
            else expect(differing.has(c.name), `${k.name} seed ${seed}: ${c.name} not shared, not differing`).toBe(true);
          }
        }
        const c = outcome(() => readChangedTransactions(prev, k.printed, k.ops));
        if (!('value' in c)) throw new Error(`${k.name} seed ${seed}: readChangedTransactions threw ${c.error}`);
        if (c.value !== undefined) {
          changed++;
          if (!('value' in whole)) throw new Error(`${k.name} seed ${seed}: read a text the whole reader refuses (${whole.error})`);
          const want = renderTransactionText(nftDelta(whole.value, k.state, k.tx, { full: false }));
          const got = renderTransactionText(nftDelta(c.value.before, c.value.after, k.tx, { full: false }));
          if (got !== want) expect({ name: k.name, seed, prev, got }).toEqual({ name: k.name, seed, prev, got: want });
        }
      }
    }
    // Most previous texts are read beside (the mutations that leave kpc's form are a few).
    expect(beside).toBeGreaterThan(total / 2);
    expect(changed).toBeGreaterThan(total / 2);
    expect(shared).toBeGreaterThan(beside);
  });

  it('a previous text held as bytes (longer than one string can be) is read as the string is', SLOW, async () => {
    let read = 0;
    for (const k of await cases()) {
      for (let seed = 1; seed <= 10; seed++) {
        const rnd = random(seed * 131071 + k.name.length);
        const prev = seed === 1 ? k.text : previousOf(k.text, rnd);
        const bytes = AsciiBytes.of(Buffer.from(prev, 'latin1'))!;
        const at = `${k.name} seed ${seed}`;
        const s = readBeside(prev, k.printed, k.ops);
        const b = readBeside(bytes, k.printed, k.ops);
        expect(b === undefined, at).toBe(s === undefined);
        if (s && b) {
          read++;
          expect(view(b.before), at).toEqual(view(s.before));
          expect(view(b.after), at).toEqual(view(s.after));
          expect(b.differing, at).toEqual(s.differing);
        }
        const sc = readChangedTransactions(prev, k.printed, k.ops);
        const bc = readChangedTransactions(bytes, k.printed, k.ops);
        expect(bc === undefined, at).toBe(sc === undefined);
        if (sc && bc) expect(renderTransactionText(nftDelta(bc.before, bc.after, k.tx, { full: false })), at).toBe(renderTransactionText(nftDelta(sc.before, sc.after, k.tx, { full: false })));
      }
    }
    expect(read).toBeGreaterThan(300);
  });

  it('texts too far apart to align (past 1,024 changed lines): every line read, the same states and delta', SLOW, () => {
    // 1,500 chains of two rules and a set of 1,500 elements; the previous text has each
    // chain's rules in the other order, and another element every tenth.
    const tx = new NftTransaction('ip', TABLE);
    tx.add({ kind: 'table', comment: 'rules for kube-proxy' });
    tx.add({ kind: 'set', name: 'addrs', type: 'ipv4_addr' });
    for (let i = 0; i < 1500; i++) {
      const chain = `chain-${i}`;
      tx.add({ kind: 'chain', name: chain });
      tx.add({ kind: 'rule', chain, rule: `ip daddr 10.0.${i >> 8}.${i & 255} counter` });
      tx.add({ kind: 'rule', chain, rule: 'counter accept' });
      tx.add({ kind: 'element', container: 'addrs', key: [`10.1.${i >> 8}.${i & 255}`] });
    }
    const state = applyTransaction(emptyState('ip', TABLE), tx);
    const lines = renderTransactionText(tx).split('\n');
    let elements = 0;
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.startsWith('add rule ') && lines[i + 1]?.startsWith('add rule ')) [lines[i], lines[i + 1]] = [lines[i + 1]!, lines[i]!];
      if (lines[i]!.startsWith('add element ') && elements++ % 10 === 0) lines[i] = lines[i]!.replace('10.1.', '10.2.');
    }
    const prev = lines.join('\n');
    const whole = readTransaction(prev, 'ip', TABLE);
    // As bytes, the same.
    const bytes = AsciiBytes.of(Buffer.from(prev, 'latin1'))!;
    const p = printedOf(tx);
    expect(view(readBeside(bytes, p.text, p.ops)!.before)).toEqual(view(whole));
    const cb = readChangedTransactions(bytes, p.text, p.ops)!;
    expect(renderTransactionText(nftDelta(cb.before, cb.after, tx, { full: false }))).toBe(renderTransactionText(nftDelta(whole, state, tx, { full: false })));
    const b = readBeside(prev, p.text, p.ops)!;
    expect(view(b.before)).toEqual(view(whole));
    expect(view(b.after)).toEqual(view(state));
    expect(diffNftStates(b.before, b.after, b.differing)).toEqual(diffNftStates(whole, state));
    const c = readChangedTransactions(prev, p.text, p.ops)!;
    expect(c.before.chains.size).toBe(1500);
    expect([...c.before.sets.get('addrs')!.elements.keys()].filter((k) => k.startsWith('10.2.'))).toHaveLength(150);
    expect(renderTransactionText(nftDelta(c.before, c.after, tx, { full: false }))).toBe(renderTransactionText(nftDelta(whole, state, tx, { full: false })));
  });

  it('printed as compile --previous prints it: the text of the transaction built whole, and what each line names', SLOW, async () => {
    for (const k of await cases()) {
      expect(k.printed.toString(), k.name).toBe(k.text);
      expect(k.ops.count, k.name).toBe(k.tx.ops.length);
      k.tx.ops.forEach((op, i) => {
        const got = { verb: k.ops.verbAt(i), kind: k.ops.kindAt(i), name: k.ops.nameAt(i) };
        const want = { verb: op.verb, kind: op.object.kind, name: objectName(op) };
        if (!isDeepStrictEqual(got, want)) expect({ name: k.name, i, ...got }).toEqual({ name: k.name, i, ...want });
      });
    }
  });

  it('the same text: nothing differs, every object shared, an empty delta', SLOW, async () => {
    for (const k of (await cases()).slice(0, 20)) {
      const b = readBeside(k.text, k.printed, k.ops)!;
      expect(isDeepStrictEqual(view(b.before), view(k.state)), k.name).toBe(true);
      expect(b.differing, k.name).toEqual({ chains: [], sets: [] });
      for (const c of b.before.chains.values()) expect(b.after.chains.get(c.name)).toBe(c);
      const c = readChangedTransactions(k.text, k.printed, k.ops)!;
      expect(c.before.chains.size + c.before.sets.size + c.after.chains.size + c.after.sets.size, k.name).toBe(0);
    }
  });
});

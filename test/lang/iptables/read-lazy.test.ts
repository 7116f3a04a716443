/**
 * The lazy reading of a rules text (ReadOptions.lazy, what `kpc trace` uses) gives the model the
 * eager reading gives: the same tables, chains, rules and, once every chain has been read, the
 * same warnings; errors in rules surface when their chain is read. The eager reading is the
 * reference (test/lang/iptables/read.test.ts pins it to iptables-restore's semantics).
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readRules, type RuleSet } from '../../../src/trace/index.js';
import { readIndexed } from '../../../src/lang/iptables/indexed-read.js';
import { AsciiBytes } from '../../../src/lang/ascii-bytes.js';
import { KpcError } from '../../../src/errors.js';
import { iptablesTexts } from '../../helpers/fixtures.js';

/** The line a reading refuses, or undefined when it does not. */
function refusedAt(read: () => unknown): number | undefined {
  try {
    read();
  } catch (e) {
    expect(e).toBeInstanceOf(KpcError);
    expect((e as KpcError).code).toBe('previous.unreadable');
    return (e as KpcError).at?.line;
  }
  return undefined;
}

/** Every chain read (the lazy ones parse here), as plain data. */
function plain(rs: RuleSet): unknown {
  const tables = [...rs.tables.values()].map((t) => ({
    name: t.name,
    chains: [...t.chains.values()].map((c) => ({ name: c.name, builtin: c.builtin, policy: c.policy, line: c.line, rules: c.rules.map((r) => ({ ...r })) })),
  }));
  return { tables, warnings: [...rs.warnings].sort() };
}

/** A file's ASCII bytes as trace --rules reads them (undefined for other text). */
function bytesOf(text: string): AsciiBytes | undefined {
  return AsciiBytes.of(Buffer.from(text, 'utf8'));
}

function same(text: string): void {
  const eager = plain(readRules(text));
  expect(plain(readRules(text, { lazy: true }))).toEqual(eager);
  const bytes = bytesOf(text);
  if (bytes) expect(plain(readRules(bytes, { lazy: true })), 'as bytes').toEqual(eager);
}

describe('lazy reading', () => {
  const files = iptablesTexts().filter((f) => !readFileSync(f, 'utf8').startsWith('#!'));

  it('finds the fixtures it compares', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('reads every iptables text of the fixtures as the eager reading does', () => {
    let compared = 0;
    let indexed = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      let eager: unknown;
      try {
        eager = plain(readRules(text));
      } catch {
        continue; // not a rules text (e.g. an nft transaction named .out)
      }
      expect(plain(readRules(text, { lazy: true })), f).toEqual(eager);
      const bytes = bytesOf(text);
      if (bytes) expect(plain(readRules(bytes, { lazy: true })), `${f} as bytes`).toEqual(eager);
      compared++;
      // kpc's outputs and iptables-save's have the shape the index reads (indexed-read.ts).
      const index = readIndexed(text);
      if (index) {
        expect(plain(index), f).toEqual(eager);
        expect(bytes && plain(readIndexed(bytes)!), `${f} indexed as bytes`).toEqual(eager);
        indexed++;
      }
    }
    expect(compared).toBeGreaterThan(100);
    expect(indexed).toBeGreaterThan(100);
  });

  it('a redeclaration after rules flushes them, as in restore input', () => {
    same('*nat\n:A - [0:0]\n-A A -j RETURN\n-A A -j ACCEPT\n:A - [0:0]\n-A A -j DROP\nCOMMIT\n');
  });

  it('a jump to a chain declared only later is read as it was when the rule came', () => {
    // LOG is a target extension: before :LOG is declared, `-j LOG` is the target, after it the chain.
    same('*filter\n:A - [0:0]\n-A A -j LOG\n:LOG - [0:0]\n-A A -j LOG\nCOMMIT\n');
    same('*filter\n:A - [0:0]\n-A A -j LATER\n:LATER - [0:0]\nCOMMIT\n');
  });

  it('inserts, flushes, deletions and implicit chains', () => {
    same('*nat\n:A - [0:0]\n:B - [0:0]\n-A A -j B\n-A B -j RETURN\n-I A 1 -j ACCEPT\n-A A -j DROP\n-F B\n-A B -j DROP\n-X B\n-A C -j RETURN\n-A PREROUTING -j A\nCOMMIT\n');
    same('*filter\n:INPUT ACCEPT [0:0]\n:A - [0:0]\n[1:2] -A A -j ACCEPT\n-A A  -p tcp -j DROP\n-A A\t-j RETURN\r\n--append A -j ACCEPT\nCOMMIT\n*filter\n:A - [0:0]\n-A A -j DROP\nCOMMIT\n');
  });

  it('a bad rule is reported when its chain is read, with its line', () => {
    const text = '*filter\n:A - [0:0]\n:B - [0:0]\n-A A -j ACCEPT\n-A B --bogus 1 -j ACCEPT\nCOMMIT\n';
    expect(refusedAt(() => readRules(text))).toBe(5);
    const rs = readRules(text, { lazy: true });
    expect(rs.tables.get('filter')!.chains.get('A')!.rules).toHaveLength(1);
    expect(refusedAt(() => rs.tables.get('filter')!.chains.get('B')!.rules)).toBe(5);
  });

  it('of two bad rules waiting in two chains, the first in the text is reported, as eagerly', () => {
    const text = '*filter\n:A - [0:0]\n:B - [0:0]\n-A A -j ACCEPT\n-A B --bogus 1 -j ACCEPT\n-A A --bogus 2 -j ACCEPT\n-X B\nCOMMIT\n';
    expect(refusedAt(() => readRules(text))).toBe(5);
    expect(refusedAt(() => readRules(text, { lazy: true }))).toBe(5);
    expect(refusedAt(() => readRules(bytesOf(text)!, { lazy: true }))).toBe(5);
  });

  it('a run of appends to one chain, blank lines and counters among them: the same rules, a bad one at its line', () => {
    const good = '*filter\n:A - [0:0]\n:B - [0:0]\n-A A -j ACCEPT\n\n-A A -p tcp -j ACCEPT\n[3:4] -A A -j DROP\n-A A -p udp -j ACCEPT\n-A B -j A\n-A A -j RETURN\nCOMMIT\n';
    same(good);
    expect(readRules(good, { lazy: true }).tables.get('filter')!.chains.get('A')!.rules.map((r) => r.line)).toEqual([4, 6, 7, 8, 10]);
    const bad = '*filter\n:A - [0:0]\n-A A -j ACCEPT\n\n\n-A A -p tcp -j ACCEPT\n-A A --bogus 1 -j ACCEPT\nCOMMIT';
    expect(refusedAt(() => readRules(bad))).toBe(7);
    expect(refusedAt(() => readRules(bad, { lazy: true }).tables.get('filter')!.chains.get('A')!.rules)).toBe(7);
    expect(refusedAt(() => readRules(bytesOf(bad)!, { lazy: true }).tables.get('filter')!.chains.get('A')!.rules)).toBe(7);
  });

  it('a bad rule before a declaration is reported by the declaration, as eagerly', () => {
    const text = '*filter\n:A - [0:0]\n-A A --bogus 1 -j ACCEPT\n:B - [0:0]\nCOMMIT\n';
    expect(refusedAt(() => readRules(text, { lazy: true }))).toBe(3);
    expect(refusedAt(() => readRules(bytesOf(text)!, { lazy: true }))).toBe(3);
  });
});

describe('indexed reading (the shape iptables-save and kpc print)', () => {
  /** Read by the index, and the same model as the eager reading. */
  function indexedSame(text: string): RuleSet {
    const rs = readIndexed(text);
    expect(rs, 'read by the index').toBeDefined();
    const eager = plain(readRules(text));
    expect(plain(readIndexed(text)!)).toEqual(eager);
    expect(plain(readIndexed(bytesOf(text)!)!), 'indexed as bytes').toEqual(eager);
    return rs!;
  }

  it('runs of appends broken by blank lines and comments, a chain appended to in two places, runs out of declaration order', () => {
    const rs = indexedSame(
      '# Generated by iptables-save\n*nat\n:PREROUTING ACCEPT [3:4]\n:KUBE-B - [0:0]\n:KUBE-A - [0:0]\n:OTHER.chain_1 - [0:0]\n' +
        '-A KUBE-A -j RETURN\n\n-A KUBE-A -p tcp -j ACCEPT\n# between\n-A KUBE-B -j KUBE-A\n-A KUBE-A -j DROP\n-A PREROUTING -j KUBE-B\n-A OTHER.chain_1 -j KUBE-A\nCOMMIT\n' +
        '*filter\n:INPUT DROP [0:0]\n:KUBE-A - [0:0]\n-A KUBE-A -j ACCEPT\nCOMMIT\n',
    );
    const nat = rs.tables.get('nat')!.chains;
    expect(nat.get('KUBE-A')!.rules.map((r) => [r.line, r.index])).toEqual([[7, 1], [9, 2], [12, 3]]);
    expect(nat.get('PREROUTING')).toMatchObject({ builtin: true, policy: 'ACCEPT', line: 3 });
    expect(rs.tables.get('filter')!.chains.get('INPUT')).toMatchObject({ builtin: true, policy: 'DROP' });
    expect(nat.get('KUBE-B')!.rules[0]!.target).toEqual({ kind: 'chain', chain: 'KUBE-A', goto: false });
  });

  it('its chains answer as a Map: lookups, size, declaration order, changes', () => {
    const rs = indexedSame('*filter\n:KUBE-C - [0:0]\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-A -j KUBE-C\nCOMMIT\n');
    indexedSame('*filter\n:A -\n:INPUT ACCEPT\nCOMMIT\n'); // no counters
    const chains = rs.tables.get('filter')!.chains;
    expect(chains.has('KUBE-A')).toBe(true);
    expect(chains.has('KUBE-')).toBe(false);
    expect(chains.get('KUBE-D')).toBeUndefined();
    expect(chains.get('KUBE-A')).toBe(chains.get('KUBE-A'));
    expect(chains.size).toBe(3);
    expect([...chains.keys()]).toEqual(['KUBE-C', 'KUBE-A', 'KUBE-B']);
    chains.delete('KUBE-C');
    chains.set('KUBE-Z', { name: 'KUBE-Z', builtin: false, policy: '-', rules: [], line: 0 });
    expect([...chains.keys()]).toEqual(['KUBE-A', 'KUBE-B', 'KUBE-Z']);
    expect(chains.size).toBe(3);
    expect(chains.has('KUBE-C')).toBe(false);
  });

  it('a jump to an undeclared chain is warned of when its rule is read; names up to 28 characters', () => {
    const long = 'KUBE-' + 'X'.repeat(23);
    const rs = indexedSame(`*nat\n:${long} - [0:0]\n-A ${long} -j KUBE-NOWHERE\nCOMMIT\n`);
    expect(rs.warnings).toEqual([]);
    expect(rs.tables.get('nat')!.chains.get(long)!.rules).toHaveLength(1);
    expect(rs.warnings).toEqual(['line 3: jump to chain KUBE-NOWHERE, which is not declared in table nat']);
  });

  it('any other form is left to the general reading, which reads it as eagerly', () => {
    const others = [
      '*nat\n:A - [0:0]\r\n-A A -j RETURN\nCOMMIT\n', // CR
      '*filter\n:A - [0:0]\n[1:2] -A A -j ACCEPT\nCOMMIT\n', // counters
      '*filter\n:A - [0:0]\n-I A -j ACCEPT\nCOMMIT\n', // insert
      '*filter\n:A - [0:0]\n--append A -j ACCEPT\nCOMMIT\n',
      '*filter\n:A - [0:0]\n-A A -j ACCEPT\n:B - [0:0]\nCOMMIT\n', // a declaration after an append
      '*filter\n:A - [0:0]\n:A - [0:0]\nCOMMIT\n', // declared twice
      '*filter\n:A - [0:0]\nCOMMIT\n*filter\n:B - [0:0]\nCOMMIT\n', // a table twice
      '*filter\n:A - [0:0]\n-A B -j ACCEPT\nCOMMIT\n', // an undeclared chain
      '*filter\n:A\t- [0:0]\nCOMMIT\n',
      '*filter\n:A - [0:0] \nCOMMIT\n',
      '*filter\n :A - [0:0]\nCOMMIT\n',
      '*filter\n:CHAÎNE - [0:0]\nCOMMIT\n',
      '*filter\n-F\nCOMMIT\n',
      '*filter \n:A - [0:0]\nCOMMIT\n',
    ];
    for (const text of others) {
      expect(readIndexed(text), JSON.stringify(text)).toBeUndefined();
      const bytes = bytesOf(text);
      if (bytes) expect(readIndexed(bytes), `${JSON.stringify(text)} as bytes`).toBeUndefined();
      same(text);
    }
  });

  it('a text iptables-restore refuses is refused at the same line', () => {
    const refused = [
      '*filter\n:KUBE-bad - [0:0]\nCOMMIT\n',
      '*filter\n:' + 'A'.repeat(29) + ' - [0:0]\nCOMMIT\n',
      '*filter\n:A - [0:0]\n-A A -j ACCEPT\n', // no COMMIT
      '-A A -j ACCEPT\n',
      '*filter\n:A - [0:0]\nbogus\nCOMMIT\n',
      '*filter\n*nat\nCOMMIT\n',
      '*filter\n:A - [0:x]\nCOMMIT\n',
    ];
    for (const text of refused) {
      expect(readIndexed(text), JSON.stringify(text)).toBeUndefined();
      const line = refusedAt(() => readRules(text));
      expect(line, JSON.stringify(text)).toBeDefined();
      expect(refusedAt(() => readRules(text, { lazy: true })), JSON.stringify(text)).toBe(line);
      expect(readIndexed(bytesOf(text)!), `${JSON.stringify(text)} as bytes`).toBeUndefined();
      expect(refusedAt(() => readRules(bytesOf(text)!, { lazy: true })), `${JSON.stringify(text)} as bytes`).toBe(line);
    }
  });
});


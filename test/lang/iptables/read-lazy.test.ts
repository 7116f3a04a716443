/**
 * The lazy reading of a rules text (ReadOptions.lazy, what `kpc trace` uses) gives the model the
 * eager reading gives: the same tables, chains, rules and, once every chain has been read, the
 * same warnings; errors in rules surface when their chain is read. The eager reading is the
 * reference (test/lang/iptables/read.test.ts pins it to iptables-restore's semantics).
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRules, type RuleSet } from '../../../src/trace/index.js';
import { KpcError } from '../../../src/errors.js';
import { FIXTURES_ROOT } from '../../helpers/fixtures.js';

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

function same(text: string): void {
  expect(plain(readRules(text, { lazy: true }))).toEqual(plain(readRules(text)));
}

function rulesTexts(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) rulesTexts(p, out);
    else if (/\.(restore|save|out)$|iptables\.rules$/.test(name)) out.push(p);
  }
  return out;
}

describe('lazy reading', () => {
  const files = rulesTexts(FIXTURES_ROOT).filter((f) => !readFileSync(f, 'utf8').startsWith('#!'));

  it('finds the fixtures it compares', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('reads every iptables text of the fixtures as the eager reading does', () => {
    let compared = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      let eager: unknown;
      try {
        eager = plain(readRules(text));
      } catch {
        continue; // not a rules text (e.g. an nft transaction named .out)
      }
      expect(plain(readRules(text, { lazy: true })), f).toEqual(eager);
      compared++;
    }
    expect(compared).toBeGreaterThan(100);
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
  });

  it('a run of appends to one chain, blank lines and counters among them: the same rules, a bad one at its line', () => {
    const good = '*filter\n:A - [0:0]\n:B - [0:0]\n-A A -j ACCEPT\n\n-A A -p tcp -j ACCEPT\n[3:4] -A A -j DROP\n-A A -p udp -j ACCEPT\n-A B -j A\n-A A -j RETURN\nCOMMIT\n';
    same(good);
    expect(readRules(good, { lazy: true }).tables.get('filter')!.chains.get('A')!.rules.map((r) => r.line)).toEqual([4, 6, 7, 8, 10]);
    const bad = '*filter\n:A - [0:0]\n-A A -j ACCEPT\n\n\n-A A -p tcp -j ACCEPT\n-A A --bogus 1 -j ACCEPT\nCOMMIT';
    expect(refusedAt(() => readRules(bad))).toBe(7);
    expect(refusedAt(() => readRules(bad, { lazy: true }).tables.get('filter')!.chains.get('A')!.rules)).toBe(7);
  });

  it('a bad rule before a declaration is reported by the declaration, as eagerly', () => {
    const text = '*filter\n:A - [0:0]\n-A A --bogus 1 -j ACCEPT\n:B - [0:0]\nCOMMIT\n';
    expect(refusedAt(() => readRules(text, { lazy: true }))).toBe(3);
  });
});

/**
 * The lazy reading of knftables' form (readTransactionLazily, what `kpc trace --rules` uses)
 * and the lazy view of a built transaction (viewOfTransaction, trace and explain from
 * manifests) give every object the eager reading (readTransaction) gives; a malformed text is
 * refused with the eager reading's error, at its line, once the object holding the bad line is
 * read (or at once, when a line's first words are not a command). The eager reading is the
 * reference (read.test.ts, read-kernel.test.ts pin it to nft's semantics).
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KpcError } from '../../../src/errors.js';
import { AsciiBytes } from '../../../src/lang/ascii-bytes.js';
import { PiecedText } from '../../../src/lang/pieced-text.js';
import { NftTransaction, readTransaction, renderTransactionText, readTransactionLazily, viewOfTransaction, type NftFamily, type NftState, type NftTableView, type StateChain, type StateSet } from '../../../src/lang/nftables/index.js';
import { buildTransaction } from '../../../src/emit/nftables/index.js';
import { FIXTURES_ROOT, loadNftablesGoldenCases } from '../../helpers/fixtures.js';
import { compileCaseIR } from '../../ipvs/helpers/compile-case.js';

const TABLE = 'kube-proxy';

function chainData(c: StateChain | undefined): unknown {
  return c === undefined ? undefined : { name: c.name, base: c.base, comment: c.comment, rules: c.rules.map((r) => ({ text: r.text, key: r.key, comment: r.comment })) };
}

function setData(s: StateSet | undefined): unknown {
  return s === undefined ? undefined : { ...s, elements: [...s.elements.values()] };
}

/** Every name a text's lines could give an object (the fifth word), and a few it does not. */
function namesIn(text: string): string[] {
  const names = new Set<string>(['no-such-object', '']);
  for (const l of text.split('\n')) {
    const w = l.trim().split(/\s+/);
    if (w[4] !== undefined) names.add(w[4]);
  }
  return [...names];
}

/** The view, every object of `names` read, as plain data (a read may throw). */
function viewData(view: NftTableView, names: readonly string[]): unknown {
  return {
    exists: view.exists,
    chains: names.map((n) => chainData(view.chain(n))),
    sets: names.map((n) => setData(view.set(n))),
    base: view
      .baseChains()
      .map((c) => c.name)
      .sort(),
  };
}

function stateData(state: NftState, names: readonly string[]): unknown {
  return {
    exists: state.exists,
    chains: names.map((n) => chainData(state.chains.get(n))),
    sets: names.map((n) => setData(state.sets.get(n))),
    base: [...state.chains.values()]
      .filter((c) => c.base !== undefined)
      .map((c) => c.name)
      .sort(),
  };
}

/** The error a reading throws (message and line), or undefined. */
function refusal(read: () => unknown): { message: string; line: number | undefined } | undefined {
  try {
    read();
  } catch (e) {
    expect(e).toBeInstanceOf(KpcError);
    expect((e as KpcError).code).toBe('previous.unreadable');
    return { message: (e as KpcError).message, line: (e as KpcError).at?.line };
  }
  return undefined;
}

/** Lazy and eager agree on `text`: the same objects, or the same error. */
function agree(text: string, family: NftFamily = 'ip'): 'read' | 'refused' {
  const names = namesIn(text);
  const eager = refusal(() => readTransaction(text, family, TABLE));
  const lazy = refusal(() => viewData(readTransactionLazily(text, family, TABLE), names));
  expect(lazy).toEqual(eager);
  // A file's ASCII bytes, as trace --rules reads them: not decoded, the same objects or error.
  const bytes = AsciiBytes.of(Buffer.from(text, 'utf8'));
  if (bytes) expect(refusal(() => viewData(readTransactionLazily(bytes, family, TABLE), names))).toEqual(eager);
  if (eager !== undefined) {
    // In pieces there is no eager reading to give the first error: an error, at some line.
    expect(refusal(() => viewData(readTransactionLazily(piecesOf(text, 2), family, TABLE), names))?.line).toBeGreaterThan(0);
    return 'refused';
  }
  const state = readTransaction(text, family, TABLE);
  expect(viewData(readTransactionLazily(text, family, TABLE), names)).toEqual(stateData(state, names));
  // The same text in pieces, as kpc reads one too long to be a string (a piece ends a line).
  for (const every of [1, 3]) expect(viewData(readTransactionLazily(piecesOf(text, every), family, TABLE), names)).toEqual(stateData(state, names));
  if (bytes) expect(viewData(readTransactionLazily(bytes, family, TABLE), names)).toEqual(stateData(state, names));
  // Element by element, as the tracer looks them up (each key read on its own), and keys absent.
  for (const byKey of [readTransactionLazily(text, family, TABLE), readTransactionLazily(piecesOf(text, 2), family, TABLE), ...(bytes ? [readTransactionLazily(bytes, family, TABLE)] : [])]) {
    for (const set of state.sets.values()) {
      const lazy = byKey.set(set.name)!;
      for (const [key, el] of set.elements) expect(lazy.elements.get(key), `${set.name} ${key}`).toEqual(el);
      for (const key of ['no-such-key', '10.0.0.1 . tcp . 1', '']) expect(lazy.elements.get(key)).toEqual(set.elements.get(key));
    }
  }
  return 'read';
}

/** `text` as a PiecedText of `every` lines a piece (each but the last ends with its line feed). */
function piecesOf(text: string, every: number): PiecedText {
  const lines = text.split('\n');
  const pieces: string[] = [];
  for (let i = 0; i < lines.length; i += every) pieces.push(lines.slice(i, i + every).join('\n') + (i + every < lines.length ? '\n' : ''));
  return new PiecedText(pieces);
}

function transactionTexts(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) transactionTexts(p, out);
    else if (/\.(nft|dump|out)$/.test(name)) {
      const text = readFileSync(p, 'utf8');
      if (/^(add|flush|delete) (table|chain|rule|set|map|element|counter) (ip|ip6) /m.test(text)) out.push(p);
    }
  }
  return out;
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('lazy reading of knftables\' form', () => {
  const files = transactionTexts(FIXTURES_ROOT);

  it('finds the fixtures it compares', () => {
    expect(files.length).toBeGreaterThan(300);
  });

  it('reads every transaction of the fixtures as the eager reading does, in both families', () => {
    let read = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const family of ['ip', 'ip6'] as const) if (agree(text, family) === 'read') read++;
    }
    expect(read).toBeGreaterThan(300);
  }, 120_000);

  it('refuses a damaged line with the eager reading\'s error and line', () => {
    const next = random(19);
    const damage = [
      (l: string) => l.replace(/^add /, 'insert '),
      (l: string) => l.replace(/ ip /, ' ipx '),
      (l: string) => l.replace(/ (chain|rule|set|map|element) /, ' widget '),
      (l: string) => l.replace(/ : /, ' '),
      (l: string) => l.replace(/\{.*$/, '{'),
      (l: string) => l.replace(/ tcp /g, ' 6 '),
      (l: string) => l.replace(/[a-z]+-[A-Z0-9]{8}/, 'bad name!'),
      (l: string) => l.replace(/ (\S+)$/, ' "$1'),
      (l: string) => l.split(' ').slice(0, 3).join(' '),
      (l: string) => l.replace(/priority \S+/, 'priority sideways'),
    ];
    let refused = 0;
    for (const f of files.filter((_, i) => i % 3 === 0)) {
      const lines = readFileSync(f, 'utf8').split('\n');
      for (let round = 0; round < 4; round++) {
        const copy = [...lines];
        const at = Math.floor(next() * copy.length);
        copy[at] = damage[Math.floor(next() * damage.length)]!(copy[at]!);
        if (agree(copy.join('\n')) === 'refused') refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
  }, 120_000);

  it('reads the forms the fast path leaves to the slow one as the eager reading does', () => {
    const base = [
      'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
      'add chain ip kube-proxy services',
      'add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }',
      'add rule ip kube-proxy nat-output jump services',
      'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }',
      'add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto svc-a }',
      'add chain ip kube-proxy svc-a',
      'add rule ip kube-proxy svc-a ip saddr 10.0.0.1 drop',
    ];
    const variants = [
      base,
      base.map((l) => l + '\r'),
      base.map((l) => l.replace(' ', '\t')),
      base.map((l) => l.replace(/ /g, '  ')),
      base.map((l) => '  ' + l + '  '),
      [...base.slice(0, 4), '# a comment', '', 'add chain ip other services', 'add rule ip6 kube-proxy services drop', ...base.slice(4)],
      // A name that goes on past the previous line's (the same-object shortcut must not take it).
      [...base, 'add chain ip kube-proxy svc-ab', 'add rule ip kube-proxy svc-ab accept', 'add rule ip kube-proxy svc-a accept'],
      // The table's own operations touch every object.
      [...base, 'flush table ip kube-proxy', 'add rule ip kube-proxy svc-a accept'],
      [...base, 'delete table ip kube-proxy', 'add table ip kube-proxy', 'add chain ip kube-proxy svc-a', 'add rule ip kube-proxy svc-a return'],
      // Redeclared, flushed and deleted objects.
      [...base, 'delete chain ip kube-proxy svc-a', 'add chain ip kube-proxy svc-a', 'add rule ip kube-proxy svc-a accept'],
      [...base, 'flush map ip kube-proxy service-ips', 'add element ip kube-proxy service-ips { 10.96.0.11 . udp . 53 : goto svc-a }'],
      [...base, 'delete element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 }', 'add chain ip kube-proxy svc-a { comment "again" ; }'],
      // A name with a non-ASCII character, and a chain declared with a hook only later.
      [...base, 'add chain ip kube-proxy svc-é', 'add chain ip kube-proxy late', 'add chain ip kube-proxy late { type filter hook input priority 0 ; }'],
      [],
      [''],
      // Lines of no object, another table's, the table's own, between an object's lines (its runs end there).
      [...base, '# c', 'add rule ip kube-proxy svc-a accept', 'add rule ip6 kube-proxy svc-a drop', 'add rule ip kube-proxy svc-a return', 'flush table ip kube-proxy', 'add rule ip kube-proxy svc-a reject', 'delete table ip kube-proxy', 'add table ip kube-proxy', 'add chain ip kube-proxy svc-a', 'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }', 'add element ip kube-proxy service-ips { 10.96.0.11 . udp . 53 : goto svc-a }'],
    ];
    // The non-ASCII name is refused (checkName), by both readings alike.
    expect(variants.map((v) => agree(v.join('\n')))).toEqual(variants.map((_, i) => (i === 12 ? 'refused' : 'read')));
    // Errors: the first one in the text, wherever the lazy reading first meets one.
    expect(agree([...base, 'add element ip kube-proxy service-ips { 10.96.0.12 . tcp }', 'frobnicate'].join('\n'))).toBe('refused');
    expect(agree([...base, 'add rule ip kube-proxy svc-a', 'add element ip kube-proxy service-ips { 10.96.0.12 . tcp }'].join('\n'))).toBe('refused');
    expect(agree(['add chain ip kube-proxy', ...base].join('\n'))).toBe('refused');
  });

  it('reads only what is asked for: a bad line of an object never read is not reported', () => {
    const text = ['add table ip kube-proxy', 'add chain ip kube-proxy a', 'add rule ip kube-proxy a accept', 'add chain ip kube-proxy b', 'add rule ip kube-proxy b'].join('\n');
    expect(refusal(() => readTransaction(text, 'ip', TABLE))).toBeDefined();
    const view = readTransactionLazily(text, 'ip', TABLE);
    expect(view.chain('a')?.rules.map((r) => r.text)).toEqual(['accept']);
    expect(refusal(() => view.chain('b'))).toEqual(refusal(() => readTransaction(text, 'ip', TABLE)));
  });
});

describe('lazy view of a built transaction', () => {
  it('gives every object applying the transaction gives, as reading its text does', () => {
    const tx = new NftTransaction('ip', TABLE);
    tx.add({ kind: 'table', comment: 'c' });
    tx.add({ kind: 'chain', name: 'a', base: { type: 'filter', hook: 'input', priority: 0 } });
    tx.add({ kind: 'rule', chain: 'a', rule: 'jump b', comment: 'x' });
    tx.add({ kind: 'chain', name: 'b' });
    tx.add({ kind: 'rule', chain: 'b', rule: 'drop' });
    tx.add({ kind: 'map', name: 'm', type: 'ipv4_addr : verdict' });
    tx.add({ kind: 'element', container: 'm', key: ['10.0.0.1'], value: ['goto', 'b'] });
    tx.flush({ kind: 'chain', name: 'b' });
    tx.add({ kind: 'rule', chain: 'b', rule: 'accept' });
    tx.delete({ kind: 'table' });
    tx.add({ kind: 'table' });
    tx.add({ kind: 'chain', name: 'b' });
    tx.add({ kind: 'rule', chain: 'b', rule: 'return' });
    const names = ['a', 'b', 'm', 'none'];
    const view = viewOfTransaction(tx);
    // Against the same operations applied whole.
    const whole = readTransaction(
      tx.ops
        .map(({ verb, object: o }) =>
          o.kind === 'table'
            ? `${verb} table ip ${TABLE}${o.comment ? ` { comment "${o.comment}" ; }` : ''}`
            : o.kind === 'chain'
              ? `${verb} chain ip ${TABLE} ${o.name}${o.base ? ` { type ${o.base.type} hook ${o.base.hook} priority ${o.base.priority} ; }` : ''}`
              : o.kind === 'rule'
                ? `${verb} rule ip ${TABLE} ${o.chain} ${o.rule}${o.comment ? ` comment "${o.comment}"` : ''}`
                : o.kind === 'map'
                  ? `${verb} map ip ${TABLE} ${o.name} { type ${o.type} ; }`
                  : o.kind === 'element'
                    ? `${verb} element ip ${TABLE} ${o.container} { ${o.key.join(' . ')} : ${o.value!.join(' ')} }`
                    : '',
        )
        .join('\n'),
      'ip',
      TABLE,
    );
    expect(viewData(view, names)).toEqual(stateData(whole, names));
  });

  it("gives kpc's transaction of every nftables golden case as reading its printed text does", async () => {
    let compared = 0;
    for (const c of loadNftablesGoldenCases()) {
      if (c.exit !== 0) continue;
      let ir;
      try {
        ir = await compileCaseIR(c);
      } catch {
        continue; // a case whose input kpc refuses (its expectation is the error)
      }
      for (const standalone of [false, true]) {
        const tx = buildTransaction(ir, { standalone });
        const text = renderTransactionText(tx);
        const names = namesIn(text);
        expect(viewData(viewOfTransaction(tx), names), c.name).toEqual(stateData(readTransaction(text, tx.family, TABLE), names));
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(50);
  }, 120_000);
});

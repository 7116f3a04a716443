/**
 * Reading IPVS-mode states without reading what both sides hold alike must give what reading
 * them whole gives:
 *
 *   - readIpvsTable's fast lines (the kpc/ipvsadm-save spelling read without the general
 *     parser) mean what the general parser makes of them: the same table, or the same error
 *     at the same line, for every golden ipvs.rules and for random texts of lines just inside
 *     and just outside that spelling;
 *   - readNodeStateBeside (a previous bundle read beside the new one) is readNodeState of the
 *     previous bundle: equal parts, virtual servers in the same order, the same error when it
 *     has one; and kpc diff's report of it (which skips what is the same object on both
 *     sides) is the report of the whole one;
 *   - the report of readChangedStates' states (given the whole previous table for the one
 *     lookup that needs it) is the report of the whole states;
 *   - readChangedStates (only what differs, on both sides) gives computeIpvsDelta's delta of
 *     the whole states, byte for byte, under both removed-real-server policies, and the same
 *     error as readNodeState for a bad previous bundle.
 *
 * The new bundles are kpc's (the IPVS goldens' expected files, reviewed against kube-proxy or
 * made by it through the oracle);
 * the previous ones are those bundles changed at random: real servers and virtual servers
 * added, removed and changed, services spelt otherwise, blocks moved, duplicated or broken,
 * lines the fast reader and the block reader must leave to the general one.
 *
 * Run alone: `npx vitest run test/ipvs/aligned-table.test.ts`.
 */

import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
// mulberry32, seeded: a failure names its seed.
import { prng as random } from '../../bench/gen.js';

/** The random tests read thousands of bundles: minutes on a loaded 2-core machine, not vitest's 5 s. */
const SLOW = { timeout: 300_000 };
import { readIpvsTable, type IpvsTable } from '../../src/lang/ipvs/ipvs-table.js';
import { readChangedTables, readPreviousTable } from '../../src/diff/ipvs/aligned-table.js';
import { computeIpvsDelta, diffIpvsStates, readChangedStates, readNodeState, readNodeStateBeside, type IpvsNodeState } from '../../src/diff/ipvs/index.js';
import type { Attribution } from '../../src/diff/ipvs/report.js';
import { RuleFacts } from '../../src/diff/iptables/state.js';
import type { IpvsBundle } from '../../src/emit/ipvs/bundle.js';
import type { IPFamily } from '../../src/net/ip.js';
import { FIXTURES_ROOT } from '../helpers/fixtures.js';

/** Where the IPVS bundle goldens are: kube-proxy's scenarios, kpc's feature cases, the oracle's. */
const GOLDEN_ROOTS = ['kube-proxy/ipvs', 'features-ipvs', 'oracle'].map((d) => join(FIXTURES_ROOT, d));

interface Golden {
  name: string;
  family: IPFamily;
  bundle: IpvsBundle;
}

function goldens(): Golden[] {
  const out: Golden[] = [];
  for (const root of GOLDEN_ROOTS) {
    for (const name of readdirSync(root).sort()) {
      const dir = join(root, name, 'expected');
      if (!existsSync(join(dir, 'ipvs.rules'))) continue;
      const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '');
      const bundle: IpvsBundle = { ipvsRules: read('ipvs.rules'), ipsetRules: read('ipset.rules'), iptablesRules: read('iptables.rules'), addresses: read('kube-ipvs0.addrs') };
      const family: IPFamily = bundle.ipvsRules.includes('[') || bundle.ipsetRules.includes('inet6') ? 'IPv6' : 'IPv4';
      out.push({ name, family, bundle });
    }
  }
  return out;
}


type Outcome<T> = { value: T } | { error: string };

function outcome<T>(work: () => T): Outcome<T> {
  try {
    return { value: work() };
  } catch (e) {
    const err = e as Error & { describe?: () => string };
    return { error: err.describe ? err.describe() : String(err) };
  }
}

/** A table with its virtual servers' order made visible (deep equality of Maps ignores it). */
function view(t: IpvsTable) {
  return { timeouts: t.timeouts, order: [...t.virtualServers.keys()], servers: [...t.virtualServers.values()].map((vs) => ({ ...vs, realServers: [...vs.realServers.entries()] })) };
}

// ---------------------------------------------------------------- fast lines

const CLEAN_ADDRESSES = ['10.96.0.1', '10.0.0.255', '192.168.1.10', '0.0.0.0', '255.255.255.255', '10.244.1.5'];
const ODD_ADDRESSES = ['010.96.0.1', '10.96.0.01', '10.96.0.256', '1.2.3', '1.2.3.4.5', 'fd00::1', '[fd00::1]', '[fd00:0::1]', 'a.b.c.d', '::ffff:10.0.0.1'];
const CLEAN_PORTS = ['80', '0', '65535', '8080'];
const ODD_PORTS = ['65536', '080', '', 'x'];
const SERVICE_FLAGS = ['-t', '-u', '--sctp-service'];
const ODD_SERVICE_FLAGS = ['--tcp-service', '--udp-service', '-f', '-T'];

function pick<T>(rnd: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rnd() * xs.length)]!;
}

/** `odd`: how often a piece is one step outside kpc's spelling. */
function hostPort(rnd: () => number, odd: number): string {
  const octet = () => Math.floor(rnd() * 256);
  const a = rnd() < odd ? pick(rnd, ODD_ADDRESSES) : rnd() < 0.3 ? pick(rnd, CLEAN_ADDRESSES) : `10.${octet()}.${octet()}.${octet()}`;
  const p = pick(rnd, rnd() < odd ? ODD_PORTS : CLEAN_PORTS);
  const host = a.includes(':') && !a.startsWith('[') && rnd() < 0.7 ? `[${a}]` : a;
  return p === '' ? host : `${host}:${p}`;
}

/**
 * A line of ipvsadm text near kpc's spelling: a new service's `-A` or a known one's `-a`, each
 * piece (`odd` of the time) one step outside that spelling or the usual order.
 */
function randomLine(rnd: () => number, services: string[], odd: number): string {
  if (services.length === 0 || rnd() < 0.2) {
    const svc = rnd() < odd && services.length > 0 ? pick(rnd, services) : `${pick(rnd, rnd() < odd ? ODD_SERVICE_FLAGS : SERVICE_FLAGS)} ${hostPort(rnd, odd)}`;
    services.push(svc);
    const opts = rnd() < odd ? pick(rnd, [' -s rr -p', ' -s RR', ' -s rr -p 0360', ' -s mh -b mh-port', ' -s rr ', '\t-s rr', ' -s rr -o', '']) : pick(rnd, [' -s rr', ' -s wlc -p 10800', ' -s sh']);
    return `${rnd() < odd ? pick(rnd, ['-E', '-D', '--add-service']) : '-A'} ${svc}${opts}`;
  }
  const svc = rnd() < odd ? `${pick(rnd, SERVICE_FLAGS)} ${hostPort(rnd, odd)}` : pick(rnd, services);
  const weight = rnd() < odd ? pick(rnd, ['01', '', 'x', '1 ', '1\r', '99999999999999999']) : pick(rnd, ['1', '0', '100']);
  const method = rnd() < odd ? pick(rnd, ['-g', '-i']) : '-m';
  const cmd = rnd() < odd ? pick(rnd, ['-e', '-d', '--add-server']) : '-a';
  const extra = rnd() < odd ? pick(rnd, ['  ', ' -x 5', ' -m']) : '';
  return `${cmd} ${svc} -r ${hostPort(rnd, odd)} ${method} -w ${weight}${extra}`.replace(/ -w $/, rnd() < 0.5 ? '' : ' -w');
}

describe('readIpvsTable: the fast lines mean what the general parser reads', () => {
  it('every golden ipvs.rules, and its lines spelt otherwise', () => {
    const all = goldens();
    expect(all.length).toBeGreaterThanOrEqual(60);
    for (const g of all) {
      const fast = outcome(() => view(readIpvsTable(g.bundle.ipvsRules)));
      expect(fast, g.name).toEqual(outcome(() => view(readIpvsTable(g.bundle.ipvsRules, { general: true }))));
      expect('value' in fast, g.name).toBe(true);
    }
  });

  it('20,000 random texts of lines inside and just outside the spelling', SLOW, () => {
    let read = 0;
    for (let seed = 1; seed <= 20_000; seed++) {
      const rnd = random(seed);
      const services: string[] = [];
      const lines: string[] = [];
      const n = 1 + Math.floor(rnd() * 12);
      const odd = pick(rnd, [0, 0, 0.02, 0.1, 0.3]);
      for (let i = 0; i < n; i++) lines.push(rnd() < odd ? pick(rnd, ['', '# comment', '  ', '-C', '--set 900 120 300']) : randomLine(rnd, services, odd));
      const text = lines.join('\n') + (rnd() < 0.8 ? '\n' : '');
      const firstLine = rnd() < 0.5 ? 1 : 1 + Math.floor(rnd() * 1000);
      const fast = outcome(() => view(readIpvsTable(text, { firstLine })));
      const general = outcome(() => view(readIpvsTable(text, { firstLine, general: true })));
      if (!isDeepStrictEqual(fast, general)) expect({ seed, text, fast }).toEqual({ seed, text, fast: general });
      if ('value' in fast && fast.value.order.length > 0) read++;
    }
    // The texts must not all be errors: most hold servers the fast lines read.
    expect(read).toBeGreaterThan(8_000);
  });
});

// ---------------------------------------------------------------- previous bundles

/** kpc's ipvs.rules split into its blocks (an -A line and its -a lines). */
function blocksOf(text: string): string[][] {
  const blocks: string[][] = [];
  for (const line of text.split('\n').filter((l) => l !== '')) {
    if (line.startsWith('-A ') || blocks.length === 0) blocks.push([line]);
    else blocks[blocks.length - 1]!.push(line);
  }
  return blocks;
}

const joined = (blocks: string[][]) => (blocks.length === 0 ? '' : blocks.flat().join('\n') + '\n');

/** The new text changed once: what a node (or an older kpc run) may have instead. */
const IPVS_MUTATIONS: ((b: string[][], rnd: () => number) => void)[] = [
  // a real server moved, removed, quiesced, added twice
  (b, rnd) => {
    const block = pick(rnd, b);
    const i = 1 + Math.floor(rnd() * Math.max(1, block.length - 1));
    if (block[i]) block[i] = block[i]!.replace(/-r (\d+)\.(\d+)\.(\d+)\.(\d+)/, (_m, a, c, d, e) => `-r ${a}.${c}.${d}.${(Number(e) + 1) % 256}`);
  },
  (b, rnd) => {
    const block = pick(rnd, b);
    if (block.length > 1) block.splice(1 + Math.floor(rnd() * (block.length - 1)), 1);
  },
  (b, rnd) => {
    const block = pick(rnd, b);
    if (block.length > 1) block[block.length - 1] = block[block.length - 1]!.replace(/-w \d+$/, '-w 0');
  },
  (b, rnd) => {
    const block = pick(rnd, b);
    if (block.length > 1) block.push(block[1]!);
  },
  (b, rnd) => {
    const block = pick(rnd, b);
    const svc = block[0]!.split(' ').slice(1, 3).join(' ');
    block.push(`-a ${svc} -r 10.250.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}:8080 -m -w 1`);
  },
  // virtual servers removed, added, duplicated, changed
  (b, rnd) => void b.splice(Math.floor(rnd() * b.length), 1),
  (b, rnd) => {
    const svc = `-t 10.99.${Math.floor(rnd() * 256)}.1:80`;
    b.push(rnd() < 0.5 ? [`-A ${svc} -s rr`] : [`-A ${svc} -s rr`, `-a ${svc} -r 10.244.9.9:80 -m -w 1`]);
  },
  (b, rnd) => void b.push([...pick(rnd, b)]),
  (b, rnd) => {
    const block = pick(rnd, b);
    block[0] = block[0]!.replace(/ -s \w+/, rnd() < 0.5 ? ' -s wlc' : ' -s rr -p 10800');
  },
  // the same servers spelt otherwise: long options, leading zeros, spacing, CRLF
  (b, rnd) => {
    const block = pick(rnd, b);
    for (let i = 0; i < block.length; i++) block[i] = block[i]!.replace(/^-(A|a) -t /, (_m, c) => (c === 'A' ? '-A --tcp-service ' : '-a --tcp-service '));
  },
  (b, rnd) => {
    const block = pick(rnd, b);
    block[0] = block[0]!.replace(/ (\d+)\./, ' 0$1.');
  },
  (b, rnd) => {
    const block = pick(rnd, b);
    const i = Math.floor(rnd() * block.length);
    block[i] = pick(rnd, [`${block[i]} `, `${block[i]}\r`, block[i]!.replace(' ', '  '), `  ${block[i]}`]);
  },
  // lines the block reader must leave to the whole one
  (b, rnd) => void pick(rnd, b).push(pick(rnd, ['# a comment', '', '-C', '--set 1 2 3'])),
  (b, rnd) => {
    const other = pick(rnd, b)[0]!.split(' ').slice(1, 3).join(' ');
    pick(rnd, b).push(rnd() < 0.5 ? `-D ${other}` : `-a ${other} -r 10.250.0.1:80 -m -w 1`);
  },
  (b, rnd) => void b.unshift([pick(rnd, ['--set 900 120 300', '# ipvsadm-save', '-C', `-D ${pick(rnd, b)[0]!.split(' ').slice(1, 3).join(' ')}`])]),
  // other IPVS timeouts, or none
  (b) => {
    if (b[0]?.[0]?.startsWith('--set')) b.shift();
    else b.unshift(['--set 1 2 3']);
  },
  (b) => {
    if (b[0]?.[0]?.startsWith('--set')) b[0] = ['--set 900 120 301'];
  },
  // a node's order, and a last line without its newline (handled by the caller)
  (b) => void b.reverse(),
  (b, rnd) => {
    const i = Math.floor(rnd() * b.length);
    const j = Math.floor(rnd() * b.length);
    [b[i], b[j]] = [b[j]!, b[i]!];
  },
];

function mutateLines(text: string, rnd: () => number): string {
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines.length === 0) return rnd() < 0.5 ? text : 'add KUBE-NOPE 1.2.3.4\n';
  const i = Math.floor(rnd() * lines.length);
  const r = rnd();
  if (r < 0.4) lines.splice(i, 1);
  else if (r < 0.7) lines.push(lines[i]!);
  else if (r < 0.85) lines[i] = lines[i]!.replace(/\d+(?=[^\d]*$)/, (d) => String(Number(d) + 1));
  else lines[i] = `${lines[i]} ~`;
  return lines.join('\n') + '\n';
}

/** A previous bundle: the new one changed at random (its ipvs.rules almost always). */
function previousOf(next: IpvsBundle, rnd: () => number): IpvsBundle {
  let ipvsRules = next.ipvsRules;
  if (rnd() < 0.9) {
    const blocks = blocksOf(next.ipvsRules);
    if (blocks.length === 0) blocks.push(['-A -t 10.98.0.1:80 -s rr']);
    const n = 1 + Math.floor(rnd() * 3);
    for (let i = 0; i < n && blocks.length > 0; i++) pick(rnd, IPVS_MUTATIONS)(blocks, rnd);
    ipvsRules = joined(blocks.filter((x) => x.length > 0));
    if (rnd() < 0.05) ipvsRules = ipvsRules.replace(/\n$/, '');
  }
  const maybe = (text: string, p: number) => (rnd() < p ? mutateLines(text, rnd) : text);
  return { ipvsRules, ipsetRules: maybe(next.ipsetRules, 0.3), iptablesRules: maybe(next.iptablesRules, 0.1), addresses: maybe(next.addresses, 0.2) };
}

/**
 * An attribution as attributionOf gives one: every server of the new state has an owner (here
 * one of its own name), no KUBE-LOOP-BACK entry is owned (so every one removed goes through the
 * lookup in the whole previous table).
 */
function attributionFor(next: IpvsNodeState): Attribution {
  const virtualServers = new Map([...next.ipvs.virtualServers.keys()].map((k) => [k, `owner/${k}`]));
  return { virtualServers, nodePorts: new Map(), loopBack: new Map(), healthChecks: new Map() };
}

function stateView(s: IpvsNodeState) {
  const iptables = [...s.iptables].map(([table, chains]) => [table, [...chains.values()].map((c) => [c.name, c.builtin, c.rules.map((r) => [r.spec, r.line])])]);
  return { family: s.family, ipvs: view(s.ipvs), sets: [...s.sets.entries()].map(([k, v]) => [k, { ...v, entries: [...v.entries] }]), iptables, addresses: [...s.addresses] };
}

describe('previous bundles read beside the new one', () => {
  const all = goldens();

  it('readPreviousTable: the whole reader\'s table, or undefined (then the whole reader runs)', SLOW, () => {
    let aligned = 0;
    let total = 0;
    let shared = 0;
    for (const g of all) {
      const next = readIpvsTable(g.bundle.ipvsRules);
      for (let seed = 1; seed <= 150; seed++) {
        const rnd = random(seed * 7919 + g.name.length);
        const prev = previousOf(g.bundle, rnd).ipvsRules;
        const whole = outcome(() => view(readIpvsTable(prev)));
        const beside = readPreviousTable(prev, g.bundle.ipvsRules, next);
        total++;
        if (beside === undefined) continue;
        aligned++;
        expect({ name: g.name, seed, prev, got: { value: view(beside) } }).toEqual({ name: g.name, seed, prev, got: whole });
        // What the two sides hold alike is the same object (the consumers' shortcut).
        for (const vs of beside.virtualServers.values()) if (next.virtualServers.get(vs.key) === vs) shared++;
      }
    }
    expect(aligned).toBeGreaterThan(total / 3);
    expect(shared).toBeGreaterThan(aligned);
  });

  it('readNodeStateBeside is readNodeState of the previous bundle; readChangedStates gives the same deltas and reports', SLOW, () => {
    let changedRead = 0;
    let total = 0;
    let lookups = 0;
    for (const g of all) {
      const facts = new RuleFacts(g.family);
      const nextState = readNodeState(g.bundle, g.family, facts, 'kpc');
      for (let seed = 1; seed <= 60; seed++) {
        const rnd = random(seed * 104729 + g.name.length);
        const prev = previousOf(g.bundle, rnd);
        const whole = outcome(() => readNodeState(prev, g.family, facts, 'prev'));
        const beside = outcome(() => readNodeStateBeside(prev, { bundle: g.bundle, state: nextState }, facts, 'prev'));
        const wholeView = 'value' in whole ? { value: stateView(whole.value) } : whole;
        expect({ name: g.name, seed, got: 'value' in beside ? { value: stateView(beside.value) } : beside }).toEqual({ name: g.name, seed, got: wholeView });
        // kpc diff's report skips the servers and sets that are the same object on both sides.
        const attribution = attributionFor(nextState);
        const report = 'value' in whole ? outcome(() => diffIpvsStates(whole.value, nextState, attribution)) : undefined;
        if ('value' in whole && 'value' in beside) {
          expect({ name: g.name, seed, report: outcome(() => diffIpvsStates(beside.value, nextState, attribution)) }).toEqual({ name: g.name, seed, report });
        }

        const changed = outcome(() => readChangedStates(prev, g.bundle, g.family, facts, 'prev'));
        total++;
        if ('error' in whole) {
          expect({ name: g.name, seed, got: 'error' in changed ? changed.error : 'read' }).toEqual({ name: g.name, seed, got: whole.error });
          continue;
        }
        if (!('value' in changed)) throw new Error(`${g.name} seed ${seed}: ${changed.error}`);
        if (readChangedTables(prev.ipvsRules, g.bundle.ipvsRules) !== undefined) changedRead++;
        // and the report of only what differs, the whole previous table given for its one lookup
        let looked = false;
        const wholePrevious = () => ((looked = true), whole.value.ipvs);
        const partial = outcome(() => diffIpvsStates(changed.value.before, changed.value.after, attribution, [], wholePrevious));
        expect({ name: g.name, seed, report: partial }).toEqual({ name: g.name, seed, report });
        if (looked) lookups++;
        for (const removedRealServers of ['quiesce', 'delete'] as const) {
          const options = { full: false, removedRealServers };
          const want = outcome(() => computeIpvsDelta(whole.value, nextState, g.bundle.addresses, options));
          const got = outcome(() => computeIpvsDelta(changed.value.before, changed.value.after, g.bundle.addresses, options));
          expect({ name: g.name, seed, removedRealServers, got }).toEqual({ name: g.name, seed, removedRealServers, got: want });
        }
      }
    }
    expect(changedRead).toBeGreaterThan(total / 3);
    // Removed KUBE-LOOP-BACK entries happen (set lines removed or changed): the lookup is exercised.
    expect(lookups).toBeGreaterThan(10);
  });

  // kpc's text never has a block that touches another server; a text that does is read whole.
  const NOT_ALONE = lines('-A -t 10.0.0.1:80 -s rr', '-A -t 10.0.0.2:80 -s rr', '-a -t 10.0.0.1:80 -r 10.1.1.1:80 -m -w 1', '-A -t 10.0.0.3:80 -s rr');
  const DELETES = lines('-A -t 10.0.0.1:80 -s rr', '-A -t 10.0.0.2:80 -s rr', '-D -t 10.0.0.1:80', '-A -t 10.0.0.3:80 -s rr');

  it('a new text whose blocks do not stand alone: readPreviousTable declines', () => {
    const prev = lines('-A -t 10.0.0.1:80 -s rr', '-A -t 10.0.0.2:80 -s rr', '-A -t 10.0.0.3:80 -s wlc');
    expect(readIpvsTable(prev).virtualServers.get('10.0.0.1:80/TCP')!.realServers.size).toBe(0);
    expect(readIpvsTable(NOT_ALONE).virtualServers.get('10.0.0.1:80/TCP')!.realServers.size).toBe(1);
    expect(readPreviousTable(prev, NOT_ALONE, readIpvsTable(NOT_ALONE))).toBeUndefined();
  });

  it('an equal block that deletes another server: readChangedTables declines', () => {
    // Whole, 10.0.0.1 is deleted on both sides (no change); read alone, its blocks would differ.
    const prev = lines('-A -t 10.0.0.1:80 -s wlc', '-A -t 10.0.0.2:80 -s rr', '-D -t 10.0.0.1:80', '-A -t 10.0.0.3:80 -s rr');
    expect(readIpvsTable(prev).virtualServers.has('10.0.0.1:80/TCP')).toBe(false);
    expect(readChangedTables(prev, DELETES)).toBeUndefined();
    // and the same text with a block that stands alone is read
    expect(readChangedTables(lines('-A -t 10.0.0.1:80 -s wlc', '-A -t 10.0.0.3:80 -s rr'), lines('-A -t 10.0.0.1:80 -s rr', '-A -t 10.0.0.3:80 -s rr'))).toBeDefined();
  });
});

function lines(...l: string[]): string {
  return l.join('\n') + '\n';
}

/**
 * The nftables facts (fixtures/kube-proxy/nftables/<release>/<case>/, from kube-proxy's own
 * unit tests; see PROVENANCE.md there) load on a real kernel, and read back as declared.
 *
 * For every case, in throwaway network namespaces (test/helpers/nft-kernel.ts):
 *   1. expected.dump, reordered with toLoadOrder() (the tests' literals name chains before they
 *      declare them, which nft refuses: step 5 shows it), loads with `nft -f`, and
 *      `nft list table` reads back exactly the declared objects (readBack: table and chain
 *      comments, base-chain hooks, rule counts and comments, set/map types, flags, timeouts,
 *      comments and every element);
 *   2. transaction.nft (kube-proxy's first full sync of the same objects) loads as it is and
 *      gives the same ruleset as expected.dump (or as fresh.dump, for the steps whose dump
 *      depends on history), compared as canonical listings of two loads;
 *   3. partial.nft (TestSyncProxyRulesRepeated): the previous step's expected.dump, then each
 *      transaction of partial.nft, gives this step's expected.dump;
 *   4. fresh.dump, where present, loads and reads back as declared too;
 *   5. the raw expected.dump, in the test's own order: either it loads, or nft refuses it for a
 *      forward reference only ("No such file or directory") — counted and printed;
 *   6. every ruleset of the packet-flow cases (fixtures/packet-flow-nftables: kube-proxy.dump,
 *      fresh.dump, the helper tests' rules.dump) loads and reads back as declared.
 *
 * Root only: without root, `ip` or `nft` the suite is skipped with a loud warning, and under
 * CI=true it fails instead (describeLab, test/netns/lab.ts).
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { describeLab } from '../netns/lab.js';
import {
  canonicalListing,
  compareByKernel,
  dumpFamily,
  loadAndList,
  readBack,
  sortNFTablesTransaction,
  toLoadOrder,
} from '../helpers/nft-kernel.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOT = join(REPO, 'fixtures/kube-proxy/nftables');
const TX_MARK = '# kpc: transaction';

interface NftCase {
  release: string;
  name: string;
  dir: string;
  expected: string;
  transaction?: string;
  partial?: string[];
  fresh?: string;
}

function findCases(): NftCase[] {
  if (!existsSync(ROOT)) return [];
  const out: NftCase[] = [];
  for (const release of readdirSync(ROOT).filter((d) => /^v\d+\.\d+$/.test(d)).sort()) {
    for (const name of readdirSync(join(ROOT, release)).sort()) {
      const dir = join(ROOT, release, name);
      if (!existsSync(join(dir, 'case.yaml')) || !existsSync(join(dir, 'expected.dump'))) continue;
      const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined);
      const partial = read('partial.nft');
      out.push({
        release,
        name,
        dir,
        expected: read('expected.dump')!,
        ...(read('transaction.nft') !== undefined ? { transaction: read('transaction.nft') } : {}),
        ...(partial !== undefined ? { partial: splitTransactions(partial) } : {}),
        ...(read('fresh.dump') !== undefined ? { fresh: read('fresh.dump') } : {}),
      });
    }
  }
  return out;
}

/** partial.nft holds one transaction, or several each after a `# kpc: transaction i of n` line. */
function splitTransactions(text: string): string[] {
  if (!text.startsWith(TX_MARK)) return [text];
  return text.split(new RegExp(`^${TX_MARK} \\d+ of \\d+\\n`, 'm')).slice(1);
}

const cases = findCases();

const FLOWS = join(REPO, 'fixtures/packet-flow-nftables');
/** Every kube-proxy.dump / fresh.dump / rules.dump of the packet-flow cases. */
const flowDumps: { name: string; path: string }[] = existsSync(FLOWS)
  ? readdirSync(FLOWS, { recursive: true, encoding: 'utf8' })
      .filter((f) => /(^|\/)(kube-proxy|fresh|rules)\.dump$/.test(f))
      .sort()
      .map((f) => ({ name: f, path: join(FLOWS, f) }))
  : [];
const byName = new Map(cases.map((c) => [`${c.release}/${c.name}`, c]));

/** The previous TestSyncProxyRulesRepeated step of a case, if it is one (NN > 01). */
function previousStep(c: NftCase): NftCase | undefined {
  const m = /^TestSyncProxyRulesRepeated-(\d\d)-/.exec(c.name);
  if (!m || m[1] === '01') return undefined;
  const want = `TestSyncProxyRulesRepeated-${String(Number(m[1]) - 1).padStart(2, '0')}-`;
  return cases.find((x) => x.release === c.release && x.name.startsWith(want));
}

const rawOrder = { loads: 0, forwardReference: 0 };

describeLab('nftables facts load into a real kernel with nft -f', { commands: ['nft'] }, () => {
  it(`finds the nftables cases (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) {
      const spec = parseYaml(readFileSync(join(c.dir, 'case.yaml'), 'utf8')) as { args: string[] };
      expect(spec.args, c.name).toContain('nftables');
    }
  });

  it('toLoadOrder keeps the upstream normal form (sortNFTablesTransaction) of every expected.dump', () => {
    for (const c of cases) expect(sortNFTablesTransaction(toLoadOrder(c.expected)), c.name).toBe(sortNFTablesTransaction(c.expected));
  });

  // Negative controls: the checks above must notice a changed fact.
  const control = byName.get('v1.37/TestOverallNFTablesRules');
  it('the checks notice a changed fact (negative controls on v1.37/TestOverallNFTablesRules)', { timeout: 120_000 }, async () => {
    expect(control, 'control case present').toBeDefined();
    const base = toLoadOrder(control!.expected);
    const mutate = (from: string | RegExp, to: string) => {
      const out = base.replace(from, to);
      expect(out, `mutation ${String(from)} applies`).not.toBe(base);
      return out;
    };
    const lines = base.split('\n');
    const dropped = lines.filter((l) => !l.startsWith('add element ip kube-proxy service-ips { 172.30.0.41 ')).join('\n');
    expect(dropped).not.toBe(base);
    const mutants: [string, string, 'readBack' | 'kernel'][] = [
      ['element missing from the kernel', dropped, 'readBack'],
      ['rule comment', mutate('comment "short-circuit pod traffic"', 'comment "short-circuit traffic"'), 'readBack'],
      // (not `flags dynamic,timeout` -> `flags timeout`: nft adds `dynamic` itself to a set that a
      // rule updates, so that change is invisible in the kernel)
      ['set flags', mutate('add set ip kube-proxy cluster-ips { type ipv4_addr ;', 'add set ip kube-proxy cluster-ips { type ipv4_addr ; flags interval ;'), 'readBack'],
      ['set timeout', mutate('timeout 10800s ;', 'timeout 10801s ;'), 'readBack'],
      ['element verdict', mutate(': goto service-ULMVA6XW-ns1/svc1/tcp/p80 }', ': goto service-42NFTM6N-ns2/svc2/tcp/p80 }'), 'readBack'],
      ['base-chain priority', mutate('{ type nat hook output priority -100 ; }', '{ type nat hook output priority -99 ; }'), 'readBack'],
      ['rule body', mutate('dnat to 10.180.0.1:80', 'dnat to 10.180.0.1:81'), 'kernel'],
      ['rule order', mutate(/(add rule ip kube-proxy masquerading [^\n]*)\n(add rule ip kube-proxy masquerading [^\n]*)/, '$2\n$1'), 'kernel'],
    ];
    for (const [what, text, check] of mutants) {
      if (check === 'readBack') {
        // load the mutant, read back against the original declaration
        const got = await loadAndList(text, 'ip');
        expect(got.ok, `${what}: mutant loads`).toBe(true);
        expect(readBack(control!.expected, got.listing, got.json!).length, `${what}: readBack reports it`).toBeGreaterThan(0);
      } else {
        const cmp = await compareByKernel(text, base, 'ip');
        expect(cmp.a.ok && cmp.b.ok, `${what}: both load`).toBe(true);
        expect(cmp.equal, `${what}: compareByKernel reports it`).toBe(false);
      }
    }
    // and the unmutated text compares equal to itself through two loads
    expect((await compareByKernel(base, control!.transaction!, 'ip')).equal).toBe(true);
  });

  for (const c of cases) {
    const family = dumpFamily(c.expected);
    it(`${c.release}/${c.name}`, { timeout: 120_000 }, async () => {
      // 1. the declared ruleset, in load order
      const got = await loadAndList(toLoadOrder(c.expected), family);
      expect(got.ok, `nft -f of expected.dump (load order) failed:\n${got.loads.at(-1)?.stderr}`).toBe(true);
      expect(readBack(c.expected, got.listing, got.json!), 'nft list table vs expected.dump').toEqual([]);
      const canonicalExpected = canonicalListing(got.listing);

      // 4. fresh.dump
      let canonicalFresh: string | undefined;
      if (c.fresh !== undefined) {
        const fresh = await loadAndList(toLoadOrder(c.fresh), family);
        expect(fresh.ok, `nft -f of fresh.dump failed:\n${fresh.loads.at(-1)?.stderr}`).toBe(true);
        expect(readBack(c.fresh, fresh.listing, fresh.json!), 'nft list table vs fresh.dump').toEqual([]);
        canonicalFresh = canonicalListing(fresh.listing);
        expect(canonicalFresh, 'fresh.dump should differ from expected.dump (else it would not be there)').not.toBe(canonicalExpected);
      }

      // 2. kube-proxy's first full sync of the same objects
      if (c.transaction !== undefined) {
        const tx = await loadAndList(c.transaction, family);
        expect(tx.ok, `nft -f of transaction.nft failed:\n${tx.loads.at(-1)?.stderr}`).toBe(true);
        expect(canonicalListing(tx.listing), 'transaction.nft vs ' + (canonicalFresh ? 'fresh.dump' : 'expected.dump')).toBe(canonicalFresh ?? canonicalExpected);
      }

      // 3. previous step + partial transactions
      const prev = previousStep(c);
      if (c.partial !== undefined && prev !== undefined) {
        const cmp = await compareByKernel([toLoadOrder(prev.expected), ...c.partial], toLoadOrder(c.expected), family);
        expect(cmp.a.ok, `previous step + partial.nft failed:\n${cmp.a.loads.at(-1)?.stderr}`).toBe(true);
        expect(cmp.canonicalA, `${prev.name} + partial.nft vs expected.dump`).toBe(cmp.canonicalB);
      }

      // 5. the raw test order
      const raw = await loadAndList(c.expected, family);
      if (raw.ok) {
        rawOrder.loads++;
        expect(canonicalListing(raw.listing)).toBe(canonicalExpected);
      } else {
        const err = raw.loads.at(-1)!.stderr;
        const errors = err.split('\n').filter((l) => l.includes('Error:'));
        expect(errors.length).toBeGreaterThan(0);
        for (const e of errors) expect(e, 'the only reason a test literal may fail to load as is').toMatch(/Error: (Could not process rule: )?No such file or directory/);
        rawOrder.forwardReference++;
      }
    });
  }

  // The packet-flow cases' rulesets (fixtures/packet-flow-nftables): kube-proxy's own Dump()
  // at each runPacketFlowTests call, and the fresh full sync where history left flushed chains.
  for (const d of flowDumps) {
    it(`packet-flow ${d.name}`, { timeout: 60_000 }, async () => {
      const text = readFileSync(d.path, 'utf8');
      const got = await loadAndList(toLoadOrder(text), dumpFamily(text));
      expect(got.ok, `nft -f failed:\n${got.loads.at(-1)?.stderr}`).toBe(true);
      expect(readBack(text, got.listing, got.json!)).toEqual([]);
    });
  }

  afterAll(() => {
    if (rawOrder.loads + rawOrder.forwardReference > 0) {
      console.info(
        `nft-fixtures-load: ${cases.length} cases (${[...new Set(cases.map((c) => c.release))].join(', ')}); in the tests' own order ` +
          `${rawOrder.loads} expected.dump load as is, ${rawOrder.forwardReference} need toLoadOrder() (a rule or element names a chain declared later)`,
      );
    }
    void byName;
  });
});

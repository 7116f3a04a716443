/**
 * The nftables oracle is faithful: on the input of kube-proxy's own unit test
 * TestOverallNFTablesRules (each release; v1.37 also TestOverallNFTablesRulesIPv6), the
 * oracle — the release's real pkg/proxy/nftables proxier in a network namespace, programming
 * the real kernel through the real nft — produces the table the upstream test expects
 * (fixtures/kube-proxy/nftables/vX/<Test>/expected.dump: the test's `expected` literal,
 * extracted by running the upstream test; see that folder's PROVENANCE.md). Two comparisons:
 *   1. textual, in kube-proxy's own normal form (helpers_test.go sortNFTablesTransaction): the
 *      oracle's knftables Fake Dump() of the sync vs the expectation — what the upstream test
 *      asserts;
 *   2. on the kernel: the oracle's table read back (`nft list table`) vs the expectation loaded
 *      into a fresh namespace (nft-load) and read back, both in the runner's canonical form
 *      (runner/nft.ts) — what `npm run oracle -- --modes nftables` compares.
 * A negative control shows comparison 2 sees a one-element and a one-rule change.
 * Also: the oracle alone on a few generated seeds per release (runner/nft-smoke.ts checks).
 * Needs the oracle binaries (KPC_ORACLE_BIN or the default folder) and root, like oracle.test.ts.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sortNFTablesTransaction, toLoadOrder } from '../helpers/nft-kernel.js';
import { listJSON, NFT_FILES, oracleBinary, readObjects, REPO_ROOT, runOracle, runProcess, VERSIONS, writeTemp } from './runner/common.js';
import { canonicalNftListing, nftFamilyOf } from './runner/nft.js';
import { smokeNftSeed } from './runner/nft-smoke.js';

const missing = VERSIONS.filter((v) => !existsSync(oracleBinary(v)));
const isRoot = process.getuid?.() === 0;
const ready = missing.length === 0 && isRoot;
const why = !isRoot ? 'not root (the oracle runs kube-proxy in a network namespace)' : `missing ${missing.map(oracleBinary).join(', ')} (run test/oracle/build.sh)`;

if (!ready) {
  console.warn(`\n*** test/oracle/nftables: SKIPPED: ${why} ***\n`);
  if (process.env.CI === 'true') {
    describe('nftables oracle', () => {
      it('has its binaries and root under CI', () => {
        throw new Error(`test/oracle/nftables cannot run: ${why}`);
      });
    });
  }
}

const CASES: [version: string, test: string][] = [
  ['1.34', 'TestOverallNFTablesRules'],
  ['1.35', 'TestOverallNFTablesRules'],
  ['1.36', 'TestOverallNFTablesRules'],
  ['1.37', 'TestOverallNFTablesRules'],
  ['1.37', 'TestOverallNFTablesRulesIPv6'],
];

async function nftLoadList(version: string, text: string, family: 'ip' | 'ip6'): Promise<string> {
  const tmp = writeTemp('t.nft', text);
  try {
    const r = await runProcess(oracleBinary(version), ['nft-load', '--family', family, tmp.path]);
    if (r.code !== 0) throw new Error(`nft-load exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  } finally {
    tmp.cleanup();
  }
}

describe.skipIf(!ready)('nftables oracle', () => {
  for (const [version, test] of CASES) {
    it(`v${version} ${test}: kube-proxy's own expectation, as text and on the kernel`, { timeout: 60_000 }, async () => {
      const dir = join(REPO_ROOT, 'fixtures', 'kube-proxy', 'nftables', `v${version}`, test);
      const spec = parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as { args: unknown[] };
      const args = spec.args.map(String);
      expect(args[0]).toBe('compile');
      const expected = readFileSync(join(dir, 'expected.dump'), 'utf8');
      const list = writeTemp('cluster.json', listJSON(readObjects([join(dir, 'input')])));
      try {
        const o = await runOracle(version, [...args, '-f', list.path], NFT_FILES);
        expect(o.code, o.stderr).toBe(0);
        // 1. the upstream test's own comparison
        expect(sortNFTablesTransaction(o.files!['expected.dump']!)).toBe(sortNFTablesTransaction(expected));
        // 2. the kernel's
        const family = nftFamilyOf(args);
        const want = canonicalNftListing(await nftLoadList(version, toLoadOrder(expected), family));
        const got = canonicalNftListing(o.files!['kernel.listing']!);
        expect(got).toBe(want);
        expect(got).toMatch(/numgen random mod 2 vmap|numgen random mod 2 map/);
        expect(got).toMatch(/^chain service-[A-Z0-9]{8}-ns1\/svc1\/tcp\/p80 \{$/m);
        // negative control: one element less, one DNAT port changed → comparison 2 differs
        const lines = toLoadOrder(expected).split('\n');
        const el = lines.findIndex((l) => l.startsWith(`add element ${family} kube-proxy service-ips `));
        const dnat = lines.findIndex((l) => / dnat to .*:80\b/.test(l) || / dnat .* to .* \. 80\b/.test(l));
        expect(el).toBeGreaterThan(0);
        expect(dnat).toBeGreaterThan(0);
        const noElement = lines.filter((_, i) => i !== el).join('\n');
        const otherPort = lines.map((l, i) => (i === dnat ? l.replace(/80\b(?!.*80\b)/, '81') : l)).join('\n');
        expect(otherPort).not.toBe(lines.join('\n'));
        for (const mutated of [noElement, otherPort]) {
          expect(canonicalNftListing(await nftLoadList(version, mutated, family))).not.toBe(got);
        }
      } finally {
        list.cleanup();
      }
    });
  }

  for (const version of VERSIONS) {
    it(`v${version}: the oracle alone on generated seeds (reloads, Fake = kernel, shape)`, { timeout: 120_000 }, async () => {
      const problems: string[] = [];
      let serviceChains = 0;
      for (let seed = 1; seed <= 5; seed++) {
        const r = await smokeNftSeed(version, seed);
        problems.push(...r.problems.map((p) => `seed ${seed}: ${p}`));
        serviceChains += r.serviceChains;
      }
      expect(problems).toEqual([]);
      expect(serviceChains).toBeGreaterThan(5);
    });
  }
});

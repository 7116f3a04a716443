/**
 * The nftables readers against every way nft lists a table: kpc's output for kube-proxy's
 * golden cases is loaded into a fresh namespace and listed with each of nft's output options
 * (nft 1.0.x: -a handles, -y numeric priorities, -T numeric time, -s stateless, -N reverse DNS,
 * -S service names, -n/-nn/-nnn numeric, and the JSON with -j, -j -a, -j -n, -j -S). Each
 * listing must either read to exactly the state the loaded text declares (readTransaction of
 * kpc's text; compared by stateDifferences) or be refused as previous.unreadable with the
 * hint to list it plainly; never read to another state.
 *
 *   - plain, -a, -y, -T, -s, -j, -j -a: must read, and equal;
 *   - -n, -nn, -nnn, -j -n, -a -n: must be refused (every kube-proxy table has `ct state new`
 *     rules and tcp elements, which -n prints as `0x8` and `6`);
 *   - -S, -N, -j -S: nft's text depends on the node's /etc/services and resolver: where it is
 *     the same as the plain listing, it must read and be equal; where it differs, refused.
 *
 * The expected states come from the text loaded into the kernel, not from kpc's reading of
 * a listing. Set KPC_NFT_FORMS=all to run every golden case (default: a spread of them).
 */

import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeLab, nsExec, withNetns } from '../../netns/lab.js';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { nftLoad } from '../../helpers/nft-kernel.js';
import { readNftState, readTransaction, stateDifferences } from '../../../src/lang/nftables/index.js';
import { isKpcError } from '../../../src/errors.js';

const all = loadGoldenCases(join(FIXTURES_ROOT, 'kube-proxy', 'nftables'), { nftables: true });
const SPREAD = [
  'v1.34/TestOverallNFTablesRules',
  'v1.35/TestOverallNFTablesRules',
  'v1.36/TestOverallNFTablesRules',
  'v1.37/TestOverallNFTablesRules',
  'v1.37/TestOverallNFTablesRulesIPv6',
  'v1.37/TestEndpointDNATRules-ipv6-multiple-endpoints',
  'v1.37/TestLocalhostNodePortReject',
  'v1.34/TestSyncProxyRulesRepeated-06-add-svc4-endpoints',
];
const cases = process.env['KPC_NFT_FORMS'] === 'all' ? all : all.filter((c) => SPREAD.includes(c.name));

type Expect = 'read' | 'refused' | 'read-if-plain';
const FORMS: Array<{ flags: string[]; expect: Expect }> = [
  { flags: [], expect: 'read' },
  { flags: ['-a'], expect: 'read' },
  { flags: ['-y'], expect: 'read' },
  { flags: ['-T'], expect: 'read' },
  { flags: ['-s'], expect: 'read' },
  { flags: ['-a', '-y', '-T', '-s'], expect: 'read' },
  { flags: ['-j'], expect: 'read' },
  { flags: ['-j', '-a'], expect: 'read' },
  { flags: ['-n'], expect: 'refused' },
  { flags: ['-nn'], expect: 'refused' },
  { flags: ['-nnn'], expect: 'refused' },
  { flags: ['-a', '-n'], expect: 'refused' },
  { flags: ['-j', '-n'], expect: 'refused' },
  { flags: ['-S'], expect: 'read-if-plain' },
  { flags: ['-N'], expect: 'read-if-plain' },
  { flags: ['-j', '-S'], expect: 'read-if-plain' },
];

describeLab('nftables readers: every nft listing option reads right or is refused', { commands: ['nft'] }, () => {
  it('finds the cases', () => expect(cases.length).toBeGreaterThanOrEqual(SPREAD.length));

  for (const c of cases) {
    it(c.name, { timeout: 120_000 }, async () => {
      const run = await runKpc(caseArgv(c));
      if (run.code !== 0) return; // error cases have no ruleset
      const family = /^add table ip6 /m.test(run.stdout) ? 'ip6' : 'ip';
      const declared = readTransaction(run.stdout, family, 'kube-proxy');
      await withNetns('nftforms', async (ns) => {
        const load = await nftLoad(ns, run.stdout);
        expect(load.code, load.stderr).toBe(0);
        const list = async (flags: string[]) => {
          const r = await nsExec(ns, ['nft', ...flags, 'list', 'table', family, 'kube-proxy'], { timeoutMs: 60_000 });
          expect(r.code, `nft ${flags.join(' ')}: ${r.stderr}`).toBe(0);
          return r.stdout;
        };
        const plain = { text: await list([]), json: await list(['-j']) };
        const seen = { read: 0, refused: 0 };
        for (const f of FORMS) {
          const text = await list(f.flags);
          const what = `nft ${f.flags.join(' ')} list table`;
          const samePlain = text === (f.flags.includes('-j') ? plain.json : plain.text);
          const mustRead = f.expect === 'read' || (f.expect === 'read-if-plain' && samePlain);
          let state;
          try {
            state = readNftState(text, family, 'kube-proxy').state;
          } catch (e) {
            if (!isKpcError(e, 'previous.unreadable')) throw e;
            expect(mustRead, `${what} refused: ${e.message}`).toBe(false);
            expect(e.message, what).toContain(`list it without them: nft list table ${family} kube-proxy`);
            seen.refused++;
            continue;
          }
          expect(mustRead, `${what} was read, but nft listed values otherwise`).toBe(true);
          expect(stateDifferences(declared, state), what).toEqual([]);
          seen.read++;
        }
        expect(seen.read).toBeGreaterThanOrEqual(8);
        expect(seen.refused).toBeGreaterThanOrEqual(5);
      });
    });
  }
});

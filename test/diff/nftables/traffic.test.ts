/**
 * nftables mode's deltas move real packets: the shared sequence of states
 * (../traffic-sequence.ts) on the e2e lab, the foreign rules loaded with iptables-nft beside
 * kpc's table, each state reached only by
 *
 *   nft list table ip kube-proxy (the node's own table) → kpc compile --previous → nft -f
 *
 * Run alone: `npx vitest run test/diff/nftables/traffic.test.ts` (root, iproute2, nft, iptables, conntrack).
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLab, type Lab } from '../../e2e/topology.js';
import { describeLab, listLabNetns } from '../../netns/lab.js';
import { nftListTable, nftLoad } from '../../helpers/nft-kernel.js';
import { cleanupTmp } from '../iptables/harness.js';
import { NODE_ARGS } from '../iptables/states.js';
import { runTrafficSequence } from '../traffic-sequence.js';

describeLab('nftables deltas: traffic follows them (e2e lab)', { commands: ['nft', 'iptables-restore', 'conntrack'] }, () => {
  let lab: Lab | undefined;

  beforeAll(async () => {
    lab = await createLab();
  }, 60_000);

  afterAll(async () => {
    await lab?.destroy();
    cleanupTmp();
    const mine = (await listLabNetns()).filter((x) => x.includes(`-${process.pid}-`));
    expect(mine, 'network namespaces left behind').toEqual([]);
  }, 30_000);

  it("a sequence of states reached only by deltas from the node's nft list table; foreign rules keep working", { timeout: 120_000 }, async () => {
    if (!lab) throw new Error('the lab was not built (see the beforeAll error)');
    const { log, problems } = await runTrafficSequence(lab, {
      args: [...NODE_ARGS, '--proxy-mode', 'nftables'],
      list: async (ns) => (await nftListTable(ns, 'ip')).stdout,
      load: async (ns, text, what) => {
        const r = await nftLoad(ns, text);
        if (r.code !== 0) throw new Error(`nft -f of ${what} exited ${r.code}: ${r.stderr}\n${text}`);
      },
    });
    console.info(`nftables delta traffic:\n${log.join('\n')}`);
    expect(problems, log.join('\n')).toEqual([]);
  });
});

/**
 * iptables mode's deltas move real packets: the shared sequence of states (../traffic-sequence.ts)
 * on the e2e lab, each state reached only by
 *
 *   iptables-save (the node's own rules) → kpc compile --previous → iptables-restore --noflush
 *
 * Run alone: `npx vitest run test/diff/iptables/traffic.test.ts` (root, iproute2, iptables, conntrack).
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLab, type Lab } from '../../e2e/topology.js';
import { describeLab, listLabNetns } from '../../netns/lab.js';
import { runTrafficSequence } from '../traffic-sequence.js';
import { cleanupTmp, load, save } from './harness.js';
import { NODE_ARGS } from './states.js';

describeLab('kpc compile --previous: traffic follows the deltas (e2e lab)', { commands: ['iptables-restore', 'iptables-save', 'conntrack'] }, () => {
  let lab: Lab | undefined;

  beforeAll(async () => {
    lab = await createLab();
  }, 60_000);

  afterAll(async () => {
    await lab?.destroy();
    cleanupTmp();
    const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
    expect(mine, 'network namespaces left behind').toEqual([]);
  }, 30_000);

  it("a sequence of states reached only by deltas from the node's iptables-save; foreign rules keep working", { timeout: 90_000 }, async () => {
    if (!lab) throw new Error('the lab was not built (see the beforeAll error)');
    const { log, problems } = await runTrafficSequence(lab, {
      args: NODE_ARGS,
      list: (ns) => save(ns, 'ipv4'),
      load: (ns, text, what) => load(ns, text, 'ipv4', true, what),
    });
    console.info(`delta traffic:\n${log.join('\n')}`);
    expect(problems, log.join('\n')).toEqual([]);
  });
});

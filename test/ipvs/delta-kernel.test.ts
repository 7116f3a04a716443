/**
 * IPVS-mode deltas on THIS machine's kernel (network namespaces; no ip_vs module here, so
 * ipvsadm is a stub that keeps the node's table — helpers/stub-node.ts): the state sequence of
 * helpers/delta-states.ts (endpoint added, endpoint removed, Service added, Service deleted
 * with an affinity change, UDP endpoint removed with a scheduler change) is walked in two ways,
 * for IPv4 and for IPv6:
 *
 *   kpc     --ipvs-removed-real-servers delete, --previous = kpc's full bundle of the state
 *           before (a directory)
 *   node    the default (quiesce), --previous = the node's own dumps, captured after the
 *           previous step: ipvsadm-save -n (the stub's table), ipset save, iptables-save and
 *           `ip -o addr show dev kube-ipvs0`
 *
 * After each delta's apply.sh, the node's `ipset save`, `iptables-save` and kube-ipvs0
 * addresses must equal a FRESH namespace's after the new state's full apply.sh (normalised by
 * test/vm/normalise.ts, which shares no code with kpc), and so must the IPVS table — except, in
 * the quiesce walk, for the real servers at weight 0, which are listed by hand per step. Each
 * delta's apply.sh then runs a second time and must change nothing. In the kpc walk, the delta
 * computed from the node's dumps (ipvsadm-save, ipset save, iptables-save, ip addr spelling)
 * must be byte for byte the delta computed from kpc's bundle.
 */

import { afterAll, expect, it } from 'vitest';
import { join } from 'node:path';
import { describeLab, withNetnsGroup } from '../netns/lab.js';
import { normaliseAddrs, normaliseIpset, normaliseIptables, normaliseIpvs } from '../vm/normalise.js';
import { ADDR, deltaBundle, fullBundle, sequence, workspace, writeDir, type Family } from './helpers/delta-states.js';
import { dumpsAsPrevious, StubNode, type NodeDumps } from './helpers/stub-node.js';

const ws = workspace('delta-kernel');
afterAll(() => ws.cleanup());

/** Real servers the quiesce walk leaves at weight 0 after each step (reviewed by hand). */
function quiesced(family: Family): Record<string, string[]> {
  const a = ADDR[family];
  const hp = (ip: string, port: number) => (family === 'ipv6' ? `[${ip}]:${port}` : `${ip}:${port}`);
  return {
    s1: [],
    // pod a (local) left web: TCP, so both web virtual servers keep it at weight 0
    s2: [`-a -t ${hp(a.web, 80)} -r ${hp(a.pods.a, 8080)} -m -w 0`, `-a -t ${hp(a.node, 30080)} -r ${hp(a.pods.a, 8080)} -m -w 0`],
    // the previous state (the node's dumps) has them at weight 0 and they are still unwanted: deleted
    s3: [],
    s4: [],
    // kube-dns lost its pod: dns-tcp is TCP (quiesced), dns is UDP (deleted at once)
    s5: [`-a -t ${hp(a.dns, 53)} -r ${hp(a.pods.dns, 53)} -m -w 0`],
  };
}

function weightZero(table: string): string[] {
  return normaliseIpvs(table)
    .split('\n')
    .filter((l) => / -w 0$/.test(l));
}

function withoutWeightZero(table: string): string {
  return normaliseIpvs(table)
    .split('\n')
    .filter((l) => !/ -w 0$/.test(l))
    .join('\n');
}

function expectSameState(inc: NodeDumps, fresh: NodeDumps, quiesced: string[] | undefined, step: string, family: Family): void {
  expect(normaliseIpset(inc.ipset), `${step}: ipset save`).toBe(normaliseIpset(fresh.ipset));
  expect(normaliseIptables(inc.iptables, { family }), `${step}: iptables-save`).toBe(normaliseIptables(fresh.iptables, { family }));
  expect(normaliseAddrs(inc.addrs), `${step}: kube-ipvs0`).toBe(normaliseAddrs(fresh.addrs));
  if (quiesced === undefined) {
    expect(normaliseIpvs(inc.ipvs), `${step}: ipvsadm-save -n`).toBe(normaliseIpvs(fresh.ipvs));
  } else {
    expect(withoutWeightZero(inc.ipvs), `${step}: ipvsadm-save -n (weight > 0)`).toBe(normaliseIpvs(fresh.ipvs));
    expect(weightZero(inc.ipvs), `${step}: real servers at weight 0`).toEqual([...quiesced].sort());
  }
}

function normalised(d: NodeDumps, family: Family): NodeDumps {
  return { ipvs: normaliseIpvs(d.ipvs), ipset: normaliseIpset(d.ipset), iptables: normaliseIptables(d.iptables, { family }), addrs: normaliseAddrs(d.addrs) };
}

/** The dumps of `node` after loading `files` from empty (the "fresh" side of each comparison). */
async function freshLoad(node: StubNode, files: Record<string, string>): Promise<NodeDumps> {
  await node.reset();
  await node.apply(files);
  return node.dumps();
}

describeLab('IPVS deltas applied on the previous state read back as a fresh load (ipset, iptables, kube-ipvs0; ipvsadm stubbed)', { commands: ['ipset', 'iptables-restore', 'iptables-save', 'ip'] }, () => {
  const walks = [
    { name: 'ipv4, --previous = kpc\'s bundle, delete', family: 'ipv4', previous: 'kpc' },
    { name: 'ipv4, --previous = the node\'s dumps, quiesce (default)', family: 'ipv4', previous: 'node' },
    { name: 'ipv6, --previous = kpc\'s bundle, delete', family: 'ipv6', previous: 'kpc' },
    { name: 'ipv6, --previous = the node\'s dumps, quiesce (default)', family: 'ipv6', previous: 'node' },
  ] as const;
  for (const walk of walks) {
    it(`${walk.name}: every step equals a fresh load, and apply.sh runs twice`, { timeout: 90_000 }, async () => {
      const { family } = walk;
      const states = sequence({ family });
      const tag = `${family}-${walk.previous}`;
      const extra = ['--standalone', ...(walk.previous === 'kpc' ? ['--ipvs-removed-real-servers', 'delete'] : [])];
      await withNetnsGroup('ipvsdlt', 2, async ([ns, freshNs]) => {
        const node = await StubNode.create(ns!, join(ws.root, `${tag}-node`), family);
        const freshNode = await StubNode.create(freshNs!, join(ws.root, `${tag}-fresh`), family);
        const first = await fullBundle(ws, states[0]!, ['--standalone']);
        await node.apply(first);
        let previous = walk.previous === 'kpc' ? writeDir(join(ws.root, `${tag}-prev-s0`), first) : dumpsAsPrevious(join(ws.root, `${tag}-prev-s0`), await node.dumps());
        for (const state of states.slice(1)) {
          const delta = await deltaBundle(ws, state, previous, extra);
          expect(delta['apply.sh']).toContain('# kpc-bundle: delta');
          if (walk.previous === 'kpc') {
            // The node's dumps say the same as kpc's bundle, in the tools' own spelling: same delta.
            const dumps = dumpsAsPrevious(join(ws.root, `${tag}-dumps-${state.name}`), await node.dumps());
            expect(await deltaBundle(ws, state, dumps, extra), `${state.name}: delta from the node's dumps`).toEqual(delta);
          }
          await node.apply(delta);
          const inc = await node.dumps();
          const full = await fullBundle(ws, state, ['--standalone']);
          const fresh = await freshLoad(freshNode, full);
          expectSameState(inc, fresh, walk.previous === 'node' ? quiesced(family)[state.name] : undefined, state.name, family);

          // Again: the guard turns what is already there into no-ops or edits to the same values.
          await node.apply(delta);
          const again = await node.dumps();
          expect(normalised(again, family), `${state.name}: second run of the delta's apply.sh`).toEqual(normalised(inc, family));

          const dir = join(ws.root, `${tag}-prev-${state.name}`);
          previous = walk.previous === 'kpc' ? writeDir(dir, full) : dumpsAsPrevious(dir, inc);
        }
      });
    });
  }
});

/**
 * kpc watch replays test/watch/events.json (adds, endpoint churn, a BOOKMARK, Service type
 * changes, malformed / invalid / ERROR events, a Node label change, a bare object, a change of
 * nothing, deletes, the refused removal of the last Service). After every event:
 *   (a) its delta is byte for byte what `kpc compile --previous <previous full output> -f
 *       <objects now>` prints (replay.ts: bin/kpc.js compile, run per step on the test's own
 *       object set) — for iptables, nftables and IPVS;
 *   (b) iptables and nftables, in network namespaces (kpc-watch-*): the watch's deltas applied
 *       one after another (iptables-restore --noflush, nft -f) leave the kernel state a fresh
 *       load of the step's full compile gives (iptables-save compared canonically and raw as
 *       test/diff/iptables/harness.ts does; nft list table by canonicalListing);
 *   (c) IPVS, in network namespaces with ipvsadm stubbed (no ip_vs module on this machine:
 *       test/ipvs/helpers/stub-node.ts): each delta's apply.sh run on the node after the one
 *       before leaves ipset save, iptables-save and kube-ipvs0's addresses (the real kernel's)
 *       and the stub's IPVS table as a fresh run of the step's full apply.sh does (normalised
 *       by test/vm/normalise.ts, which shares no code with kpc).
 * Expected outputs all come from kpc compile (a separate code path), never from the watch.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS, expectedSteps, kpc, NODE_FLAGS, parseSteps, type ExpectedStep, type WatchStep } from './replay.js';
import { describeLab, listLabNetns, withNetns } from '../netns/lab.js';
import { compareSaves, load, save } from '../diff/iptables/harness.js';
import { canonicalListing, loadAndList, nftLoad, nftListTable } from '../helpers/nft-kernel.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withNetnsGroup } from '../netns/lab.js';
import { StubNode, type NodeDumps } from '../ipvs/helpers/stub-node.js';
import { normaliseAddrs, normaliseIpset, normaliseIptables, normaliseIpvs } from '../vm/normalise.js';

const BAD_EVENTS = [11, 12, 13, 14, 21];

/** Where each rejected event's problem is, and what it says (positions read off events.json by hand). */
const REJECTIONS: Record<number, RegExp> = {
  11: /^test\/watch\/events\.json:158:65: JSON: expected a double-quoted property name/m,
  12: /^test\/watch\/events\.json:159:173: spec\.clusterIPs: Invalid value: \["10\.96\.0\.10"\]: failed to allocate IP 10\.96\.0\.10: provided IP is already allocated$/m,
  13: /^test\/watch\/events\.json:160:294: spec\.ports\[0\]\.port: Invalid value: 70000: must be between 1 and 65535, inclusive$/m,
  14: /^test\/watch\/events\.json:161:26: ERROR event from the API server \(Expired 410\): too old resource version: 4711 \(4800\)$/m,
  21: /^error: event 21 rejected: refusing a delta that removes every Service/m,
};

interface Replay {
  watch: { code: number | null; steps: Map<number, WatchStep>; stderr: string };
  expected: { initial: string; steps: ExpectedStep[] };
}

async function replay(modeFlags: readonly string[]): Promise<Replay> {
  const r = kpc(['watch', ...modeFlags, ...NODE_FLAGS, '--events', 'test/watch/events.json']);
  return { watch: { code: r.code, steps: parseSteps(r.stdout), stderr: r.stderr }, expected: await expectedSteps(modeFlags) };
}

/** (a): every step's bytes against compile's. */
function checkBytes(r: Replay): void {
  const { watch, expected } = r;
  expect(watch.code, watch.stderr).toBe(2); // events were rejected
  const initial = watch.steps.get(0);
  expect(initial?.kind).toBe('delta');
  expect(initial && initial.kind === 'delta' ? initial.label : '').toBe('initial state (0 objects)');
  expect(initial && initial.kind === 'delta' ? initial.text : '').toBe(expected.initial);
  expect(expected.steps.length).toBe(22);
  for (const e of expected.steps) {
    const got = watch.steps.get(e.n);
    if (e.bookmark) {
      expect(got, `event ${e.n} (BOOKMARK) prints nothing`).toBeUndefined();
      continue;
    }
    if (e.rejected) {
      expect(got, `event ${e.n}`).toEqual({ kind: 'rejected' });
      expect(watch.stderr).toMatch(REJECTIONS[e.n]!);
      // compile refuses the same objects (when the event parsed at all), with the same words.
      if (e.compileRefusal) {
        expect(e.compileRefusal.code).toBe(2);
        const words = REJECTIONS[e.n]!.source.replace(/^.*?(spec|refusing)/, '$1').slice(0, 30).replace(/\\/g, '');
        expect(e.compileRefusal.stderr).toContain(words);
      }
      continue;
    }
    expect(BAD_EVENTS).not.toContain(e.n);
    expect(got, `event ${e.n}`).toBeDefined();
    if (e.full === e.previousFull) {
      // Nothing changed: one line, and compile --previous has nothing to do either.
      expect(got, `event ${e.n}`).toEqual({ kind: 'no change', label: e.label });
      continue;
    }
    expect(got!.kind, `event ${e.n}`).toBe('delta');
    const step = got as Extract<WatchStep, { kind: 'delta' }>;
    expect(step.label).toBe(e.label);
    expect(step.text, `event ${e.n} ${e.label}: the watch delta is compile --previous's`).toBe(e.delta);
  }
}

afterAll(async () => {
  const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
  expect(mine, 'network namespaces left behind').toEqual([]);
});

describe('kpc watch: each delta is compile --previous of the step before', () => {
  it('the stream has the events this suite expects', () => {
    const r = kpc(['watch', ...NODE_FLAGS, '--events', EVENTS]);
    expect(r.code).toBe(2);
    // Every event is framed: a delta, "no change" or "rejected"; the BOOKMARK (8) nothing.
    const steps = parseSteps(r.stdout);
    expect([...steps.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]);
    expect([...steps].filter(([, s]) => s.kind === 'no change').map(([n]) => n)).toEqual([1, 17]);
  });

  it('ipvs mode: every step equals compile --previous (bytes; no IPVS kernel here)', { timeout: 180_000 }, async () => {
    checkBytes(await replay(['--proxy-mode', 'ipvs']));
  });
});

describeLab('kpc watch on a real kernel: the deltas applied in turn give a fresh load of each step', { commands: ['iptables-restore', 'iptables-save', 'nft'] }, () => {
  it('iptables mode (--standalone): bytes, then iptables-restore --noflush of each delta', { timeout: 240_000 }, async () => {
    const r = await replay(['--standalone']);
    checkBytes(r);
    await withNetns('watch', async (ns) => {
      await load(ns, r.watch.steps.get(0)!.kind === 'delta' ? (r.watch.steps.get(0) as { text: string }).text : '', 'ipv4', false, 'the initial output');
      for (const e of r.expected.steps) {
        const got = r.watch.steps.get(e.n);
        if (!got || got.kind !== 'delta') continue;
        await load(ns, got.text, 'ipv4', true, `the delta of event ${e.n}`);
        const fresh = await withNetns('watchnew', async (f) => {
          await load(f, e.full!, 'ipv4', false, `the full output after event ${e.n}`);
          return save(f, 'ipv4');
        });
        const cmp = compareSaves(await save(ns, 'ipv4'), fresh, 'ipv4');
        expect(cmp.canonical, `event ${e.n} ${e.label}`).toEqual([]);
        expect(cmp.raw, `event ${e.n} ${e.label}`).toEqual([]);
      }
    });
  });

  it('nftables mode: bytes, then nft -f of each delta', { timeout: 240_000 }, async () => {
    const r = await replay(['--proxy-mode', 'nftables']);
    checkBytes(r);
    await withNetns('watch', async (ns) => {
      const first = r.watch.steps.get(0) as { text: string };
      const init = await nftLoad(ns, first.text);
      expect(init.code, init.stderr).toBe(0);
      let applied = 0;
      for (const e of r.expected.steps) {
        const got = r.watch.steps.get(e.n);
        if (!got || got.kind !== 'delta') continue;
        const step = await nftLoad(ns, got.text);
        expect(step.code, `nft -f of the delta of event ${e.n}: ${step.stderr}`).toBe(0);
        const fresh = await loadAndList(e.full!, 'ip');
        expect(fresh.ok).toBe(true);
        const now = await nftListTable(ns, 'ip');
        expect(canonicalListing(now.stdout), `event ${e.n} ${e.label}`).toBe(canonicalListing(fresh.listing));
        applied++;
      }
      expect(applied).toBeGreaterThan(10);
    });
  });
});

describeLab('kpc watch in IPVS mode on a real kernel: ipset, iptables and kube-ipvs0 after each delta are a fresh load\'s (ipvsadm stubbed)', { commands: ['ipset', 'iptables-restore', 'iptables-save', 'ip'] }, () => {
  it('ipvs mode (--standalone): bytes, then each delta\'s apply.sh in turn', { timeout: 240_000 }, async () => {
    const r = await replay(['--proxy-mode', 'ipvs', '--standalone']);
    checkBytes(r);
    const dir = mkdtempSync(join(tmpdir(), 'kpc-watch-ipvs-'));
    try {
      await withNetnsGroup('watchvs', 2, async ([ns, freshNs]) => {
        const node = await StubNode.create(ns!, join(dir, 'node'));
        const fresh = await StubNode.create(freshNs!, join(dir, 'fresh'));
        const normalised = (d: NodeDumps) => ({ ipvs: normaliseIpvs(d.ipvs), ipset: normaliseIpset(d.ipset), iptables: normaliseIptables(d.iptables, { family: 'ipv4' }), addrs: normaliseAddrs(d.addrs) });
        // Removed TCP real servers are quiesced (weight 0), never deleted by a later step (the
        // previous state is kpc's full output, which has none at weight 0): left out of the
        // comparison, as a drain would leave them; any other line must be the fresh load's.
        const serving = (table: string) =>
          table
            .split('\n')
            .filter((l) => !/ -w 0$/.test(l))
            .join('\n');
        await node.apply({ 'apply.sh': (r.watch.steps.get(0) as { text: string }).text });
        let applied = 0;
        let withServers = 0;
        let quiesced = 0;
        for (const e of r.expected.steps) {
          const got = r.watch.steps.get(e.n);
          if (!got || got.kind !== 'delta') continue;
          await node.apply({ 'apply.sh': got.text });
          await fresh.reset();
          await fresh.apply({ 'apply.sh': e.full! });
          const want = normalised(await fresh.dumps());
          const have = normalised(await node.dumps());
          expect({ ...have, ipvs: serving(have.ipvs) }, `event ${e.n} ${e.label}`).toEqual(want);
          if (want.ipvs.includes('-a ')) withServers++;
          if (have.ipvs !== serving(have.ipvs)) quiesced++;
          applied++;
        }
        expect(applied).toBeGreaterThan(10);
        expect(withServers).toBeGreaterThan(5);
        expect(quiesced).toBeGreaterThan(0);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

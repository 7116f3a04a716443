/**
 * `kpc trace` in IPVS mode, on kube-proxy's IPVS goldens (fixtures/kube-proxy/ipvs/<Test>/expected:
 * the bundle kube-proxy's own unit tests assert — not kpc's output). Each expectation is derived
 * by hand from those files; the derivation is in the comment above each check:
 * which iptables rules match (ipset membership from ipset.rules), which virtual server of
 * ipvs.rules the connection meets and its real servers/weights, and KUBE-POSTROUTING's masquerade.
 * Plus: the compiled path (kpc trace --proxy-mode ipvs on the case's input) agrees with the trace
 * through kube-proxy's expected bundle, and the real servers agree with kpc explain --proxy-mode ipvs.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBundleTexts } from '../../src/diff/ipvs/index.js';
import { traceIpvsBundle, type IpvsTraceResult } from '../../src/trace/ipvs.js';
import type { PacketSpec } from '../../src/trace/index.js';
import { caseArgv, FIXTURES_ROOT, loadGoldenCases } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';
import { runTraceCli } from './run-cli.js';

const ROOT = join(FIXTURES_ROOT, 'kube-proxy', 'ipvs');
const expectedDir = (name: string) => join(ROOT, name, 'expected');

function trace(name: string, packet: PacketSpec, nodeIPs: string[] = []): IpvsTraceResult {
  return traceIpvsBundle(readBundleTexts(expectedDir(name)), packet, { ips: nodeIPs });
}

const eps = (r: IpvsTraceResult) => r.endpoints.map((e) => [e.address, e.probability, e.masquerade]);

describe('kpc trace, ipvs: ClusterIP', () => {
  // TestOnlyLocalNodePorts: -A -t 10.20.30.41:80 -s rr with 10.180.0.1:80 and 10.180.1.1:80, -w 1
  // each → rr: 1/2 each. A pod 10.244.1.7 from the network: KUBE-CLUSTER-IP src,dst needs src
  // 10.20.30.41 (no), addrtype LOCAL (10.20.30.41 is on kube-ipvs0) → nat KUBE-NODE-PORT, whose
  // sets hold port 3001 only (no mark); CLUSTER-IP dst,dst → ACCEPT. filter INPUT: KUBE-IPVS-FILTER
  // CLUSTER-IP dst,dst → RETURN. No mark → KUBE-POSTROUTING RETURNs: not masqueraded.
  it('shares connections among the real servers by weight (rr), no masquerade for a pod', () => {
    const r = trace('TestOnlyLocalNodePorts', { source: '10.244.1.7', destination: '10.20.30.41', port: 80 }, ['100.101.102.103']);
    expect(r.verdict).toBe('ACCEPT');
    expect(eps(r)).toEqual([
      ['10.180.0.1:80', 0.5, false],
      ['10.180.1.1:80', 0.5, false],
    ]);
    expect(r.ipvs).toEqual({
      virtualServer: '10.20.30.41:80/TCP',
      scheduler: 'rr',
      realServers: [
        { address: '10.180.0.1:80', weight: 1, probability: 0.5 },
        { address: '10.180.1.1:80', weight: 1, probability: 0.5 },
      ],
      reached: 1,
    });
    expect(r.path).toContain('ipvs/10.20.30.41:80/TCP');
    expect(r.path.indexOf('filter/KUBE-IPVS-FILTER')).toBeLessThan(r.path.indexOf('ipvs/10.20.30.41:80/TCP'));
  });

  // Same case, hairpin: 10.180.0.1 → the cluster IP. KUBE-LOOP-BACK holds 10.180.0.1,tcp:80,10.180.0.1:
  // the branch IPVS sends back to 10.180.0.1:80 matches dst,dst,src in KUBE-POSTROUTING → MASQUERADE;
  // the branch to 10.180.1.1:80 does not.
  it('masquerades the hairpin branch via KUBE-LOOP-BACK (hash:ip,port,ip)', () => {
    const r = trace('TestOnlyLocalNodePorts', { source: '10.180.0.1', destination: '10.20.30.41', port: 80 }, ['100.101.102.103']);
    expect(eps(r)).toEqual([
      ['10.180.0.1:80', 0.5, true],
      ['10.180.1.1:80', 0.5, false],
    ]);
  });

  // From the node itself (no --from): 10.20.30.41 is on kube-ipvs0, so the kernel's local route
  // gives it as the source; the path starts in nat OUTPUT; KUBE-CLUSTER-IP src,dst holds
  // 10.20.30.41,tcp:80 → KUBE-MARK-MASQ; IPVS at LOCAL_OUT; KUBE-POSTROUTING masquerades both.
  it('traces a connection from the node (nat OUTPUT, IPVS at LOCAL_OUT, masqueraded via src,dst)', () => {
    const r = trace('TestOnlyLocalNodePorts', { destination: '10.20.30.41', port: 80 }, ['100.101.102.103']);
    expect(r.packet).toMatchObject({ origin: 'node', source: '10.20.30.41' });
    expect(r.path[0]).toBe('nat/OUTPUT');
    expect(eps(r)).toEqual([
      ['10.180.0.1:80', 0.5, true],
      ['10.180.1.1:80', 0.5, true],
    ]);
  });
  // With --from the node's own IP (100.101.102.103): src,dst does not match → not masqueraded.
  it('from the node IP, the cluster IP is not masqueraded', () => {
    const r = trace('TestOnlyLocalNodePorts', { source: '100.101.102.103', destination: '10.20.30.41', port: 80 }, ['100.101.102.103']);
    expect(r.packet.origin).toBe('node');
    expect(r.masquerade).toBe(false);
  });

  // TestIPv4Proxier-2-no-endpoints: -A -t 10.20.30.41:80 -s rr with no -a line. The iptables
  // rules accept (KUBE-CLUSTER-IP dst,dst → ACCEPT; KUBE-IPVS-FILTER RETURN); IPVS has no real
  // server to schedule: ip_vs_leave answers ICMP port unreachable → REJECT.
  it('rejects a connection to a virtual server without real servers', () => {
    const r = trace('TestIPv4Proxier-2-no-endpoints', { source: '10.244.1.7', destination: '10.20.30.41', port: 80 });
    expect(r.verdict).toBe('REJECT');
    expect(r.verdicts).toEqual({ REJECT: 1 });
    expect(r.endpoints).toEqual([]);
    expect(r.ipvs).toMatchObject({ virtualServer: '10.20.30.41:80/TCP', realServers: [], verdict: 'REJECT' });
    expect(r.branches[0]!.verdictBy).toBe('ipvs/10.20.30.41:80/TCP');
  });

  // Same case, a port that is no Service's: 10.20.30.41:81 is in KUBE-IPVS-IPS (hash:ip) but in no
  // service set, so KUBE-IPVS-FILTER's last rule (ctstate NEW, KUBE-IPVS-IPS dst) REJECTs it in
  // filter INPUT, before IPVS (which has no virtual server for it anyway).
  it('rejects other ports of a kube-ipvs0 address in KUBE-IPVS-FILTER', () => {
    const r = trace('TestIPv4Proxier-2-no-endpoints', { source: '10.244.1.7', destination: '10.20.30.41', port: 81 });
    expect(r.verdict).toBe('REJECT');
    expect(r.branches[0]!.verdictBy).toMatch(/^filter\/KUBE-IPVS-FILTER #\d+$/);
    expect(r.ipvs).toBeUndefined();
  });

  // UDP to the TCP service: 10.20.30.41,tcp:80 does not hold udp:80; KUBE-IPVS-FILTER rejects.
  it('matches the protocol of hash:ip,port entries', () => {
    const r = trace('TestIPv4Proxier-2-no-endpoints', { source: '10.244.1.7', destination: '10.20.30.41', port: 80, protocol: 'udp' });
    expect(r.verdict).toBe('REJECT');
    expect(r.branches[0]!.verdictBy).toMatch(/^filter\/KUBE-IPVS-FILTER/);
  });
});

describe('kpc trace, ipvs: NodePort', () => {
  // TestNodePortIPv4-1: node IP 100.101.102.103 is LOCAL → nat KUBE-NODE-PORT: -p tcp, KUBE-NODE-PORT-TCP
  // (bitmap:port) holds 3001 → KUBE-MARK-MASQ. filter INPUT: no set rejects (100.101.102.103 is not in
  // KUBE-IPVS-IPS). IPVS -A -t 100.101.102.103:3001 → 10.180.0.1:80 -w 1. Marked → MASQUERADE.
  it('sends a node port through KUBE-NODE-PORT-TCP, masqueraded', () => {
    const r = trace('TestNodePortIPv4-1-tcp-node-port-two-families', { source: '203.0.113.9', destination: '100.101.102.103', port: 3001 }, ['100.101.102.103']);
    expect(r.verdict).toBe('ACCEPT');
    expect(eps(r)).toEqual([['10.180.0.1:80', 1, true]]);
    expect(r.ipvs?.virtualServer).toBe('100.101.102.103:3001/TCP');
    expect(r.branches[0]!.steps.some((s) => s.chain === 'KUBE-NODE-PORT' && s.action === '-j KUBE-MARK-MASQ')).toBe(true);
  });

  // Another port of the node: no set, no virtual server: delivered to the node's own socket.
  it('leaves other ports of the node alone', () => {
    const r = trace('TestNodePortIPv4-1-tcp-node-port-two-families', { source: '203.0.113.9', destination: '100.101.102.103', port: 3002 }, ['100.101.102.103']);
    expect(r.verdict).toBe('ACCEPT');
    expect(r.endpoints).toEqual([]);
    expect(r.ipvs).toBeUndefined();
  });

  // TestOnlyLocalNodePorts (ETP Local): KUBE-NODE-PORT-LOCAL-TCP holds 3001 → RETURN before the
  // KUBE-NODE-PORT-TCP rule: no mark. The node-port virtual server has only the local endpoint
  // 10.180.0.1:80 (the cluster IP has two): the client's address is kept.
  it('ETP Local: only the local real server, source kept', () => {
    const r = trace('TestOnlyLocalNodePorts', { source: '203.0.113.9', destination: '100.101.102.103', port: 3001 }, ['100.101.102.103']);
    expect(r.verdict).toBe('ACCEPT');
    expect(eps(r)).toEqual([['10.180.0.1:80', 1, false]]);
    expect(r.masquerade).toBe(false);
    expect(r.branches[0]!.steps.some((s) => s.chain === 'KUBE-NODE-PORT' && s.action === 'RETURN')).toBe(true);
  });
});

describe('kpc trace, ipvs: load balancer source ranges', () => {
  const lb = 'TestLoadBalancerSourceRanges';
  // KUBE-LOAD-BALANCER set holds 1.2.3.4,tcp:80 → nat KUBE-LOAD-BALANCER → KUBE-MARK-MASQ; filter
  // KUBE-PROXY-FIREWALL: KUBE-LOAD-BALANCER-FW holds it → KUBE-SOURCE-RANGES-FIREWALL:
  // KUBE-LOAD-BALANCER-SOURCE-CIDR (hash:ip,port,net) holds 1.2.3.4,tcp:80,10.0.0.0/8 → RETURN for
  // 10.1.2.3; anything else → DROP. IPVS 1.2.3.4:80 → 10.180.0.1:80, masqueraded (marked).
  it('allows a client inside the range', () => {
    const r = trace(lb, { source: '10.1.2.3', destination: '1.2.3.4', port: 80 });
    expect(r.verdict).toBe('ACCEPT');
    expect(eps(r)).toEqual([['10.180.0.1:80', 1, true]]);
    expect(r.ipvs).toMatchObject({ virtualServer: '1.2.3.4:80/TCP', scheduler: 'rr' });
  });
  it('drops a client outside the range, before IPVS', () => {
    const r = trace(lb, { source: '203.0.113.9', destination: '1.2.3.4', port: 80 });
    expect(r.verdict).toBe('DROP');
    expect(r.branches[0]!.verdictBy).toBe('filter/KUBE-SOURCE-RANGES-FIREWALL #2');
    expect(r.ipvs).toBeUndefined();
  });
  // From the node: the source a node picks for a local VIP is the VIP itself (kube-ipvs0): with
  // --from 1.2.3.4, KUBE-IPVS-OUT-FILTER's `-s 1.2.3.4 -m ipvs --vaddr 1.2.3.4 --vproto tcp --vport 80`
  // matches after the IPVS stage → DROP in filter OUTPUT. (nat OUTPUT: KUBE-SERVICES marks; filter
  // INPUT is not on the node's path, so the source ranges are not checked there.)
  it('drops the node reaching a source-range VIP from the VIP (-m ipvs)', () => {
    const r = trace(lb, { source: '1.2.3.4', destination: '1.2.3.4', port: 80 });
    expect(r.packet.origin).toBe('node');
    expect(r.verdict).toBe('DROP');
    expect(r.branches[0]!.verdictBy).toBe('filter/KUBE-IPVS-OUT-FILTER #1');
  });
});

describe('kpc trace, ipvs: external IPs', () => {
  // TestExternalIPs: KUBE-EXTERNAL-IP holds 50.60.70.81,tcp:80 → KUBE-MARK-MASQ, then ACCEPT
  // (`! --physdev-is-in`, source not LOCAL); KUBE-IPVS-FILTER: EXTERNAL-IP → RETURN. IPVS
  // -A -t 50.60.70.81:80 has no real server → REJECT.
  it('rejects an external IP without real servers in IPVS', () => {
    const r = trace('TestExternalIPs', { source: '203.0.113.9', destination: '50.60.70.81', port: 80 });
    expect(r.verdict).toBe('REJECT');
    expect(r.branches[0]!.verdictBy).toBe('ipvs/50.60.70.81:80/TCP');
    expect(r.notes.some((n) => n.includes('physdev'))).toBe(true);
  });
  // TestOnlyLocalExternalIPs: KUBE-EXTERNAL-IP-LOCAL holds 50.60.70.81,tcp:80 → ACCEPT without a
  // mark; IPVS 50.60.70.81:80 → only 10.180.0.1:80: source kept.
  it('ETP Local external IP: the local real server, not masqueraded', () => {
    const r = trace('TestOnlyLocalExternalIPs', { source: '203.0.113.9', destination: '50.60.70.81', port: 80 });
    expect(r.verdict).toBe('ACCEPT');
    expect(eps(r)).toEqual([['10.180.0.1:80', 1, false]]);
  });
});

describe('kpc trace, ipvs: persistence and schedulers', () => {
  // TestSessionAffinity: -A -t 10.20.30.41:80 -s rr -p 10800 (no real servers).
  it('reports persistence as session affinity', () => {
    const r = trace('TestSessionAffinity', { source: '10.244.1.7', destination: '10.20.30.41', port: 80 });
    expect(r.ipvs?.persistence).toBe(10800);
    expect(r.affinity).toEqual([{ name: '10.20.30.41:80/TCP', seconds: 10800, rule: 'ipvs/10.20.30.41:80/TCP -p 10800' }]);
  });

  // A hand-written bundle: wrr shares by weight (3:1), weight 0 gets nothing; rr ignores weights
  // other than 0.
  const bundle = (sched: string) => ({
    ipvsRules: `-A -t 10.96.0.5:80 -s ${sched}\n-a -t 10.96.0.5:80 -r 10.1.0.1:80 -m -w 3\n-a -t 10.96.0.5:80 -r 10.1.0.2:80 -m -w 1\n-a -t 10.96.0.5:80 -r 10.1.0.3:80 -m -w 0\n`,
    ipsetRules: 'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536\nadd KUBE-CLUSTER-IP 10.96.0.5,tcp:80\n',
    iptablesRules: '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\nCOMMIT\n',
    addresses: '10.96.0.5/32\n',
  });
  it('wrr: by weight; weight 0 gets no new connection', () => {
    const r = traceIpvsBundle(bundle('wrr'), { source: '10.244.1.7', destination: '10.96.0.5', port: 80 }, { ips: [] });
    expect(r.endpoints.map((e) => [e.address, e.probability])).toEqual([
      ['10.1.0.1:80', 0.75],
      ['10.1.0.2:80', 0.25],
    ]);
    expect(r.ipvs?.realServers.find((s) => s.address === '10.1.0.3:80')).toEqual({ address: '10.1.0.3:80', weight: 0, probability: 0 });
  });
  it('rr: equal shares among weights > 0', () => {
    const r = traceIpvsBundle(bundle('rr'), { source: '10.244.1.7', destination: '10.96.0.5', port: 80 }, { ips: [] });
    expect(r.endpoints.map((e) => [e.address, e.probability])).toEqual([
      ['10.1.0.1:80', 0.5],
      ['10.1.0.2:80', 0.5],
    ]);
  });
  it('other schedulers: by weight, with a note', () => {
    const r = traceIpvsBundle(bundle('lc'), { source: '10.244.1.7', destination: '10.96.0.5', port: 80 }, { ips: [] });
    expect(r.notes.some((n) => n.includes('scheduler lc'))).toBe(true);
  });
});

describe('kpc trace --proxy-mode ipvs (CLI)', () => {
  const c = loadGoldenCases(ROOT, { bundles: true }).find((x) => x.name === 'TestOnlyLocalNodePorts')!;
  const argv = caseArgv(c).slice(1); // without `compile`
  const to = ['--to', '10.20.30.41:80', '--from', '10.244.1.7', '-o', 'json'];

  it('--rules DIR (kube-proxy\'s expected bundle) and the compiled input agree', async () => {
    const fromDir = await runTraceCli(['trace', '--rules', expectedDir(c.name), '--node-ip', '100.101.102.103', ...to]);
    expect(fromDir.code).toBe(0);
    const compiled = await runTraceCli(['trace', ...argv, ...to]);
    expect(compiled.code, compiled.stderr).toBe(0);
    const a = JSON.parse(fromDir.stdout);
    const b = JSON.parse(compiled.stdout);
    expect(b.verdict).toBe(a.verdict);
    expect(b.endpoints).toEqual(a.endpoints);
    expect(b.ipvs).toEqual(a.ipvs);
    expect(a.ipvs.realServers.map((s: { address: string }) => s.address)).toEqual(['10.180.0.1:80', '10.180.1.1:80']);
  });

  // kpc's inline apply.sh (compile without -o) and the --standalone form read the same.
  it('--rules with kpc\'s inline apply.sh, and --standalone, trace the same', async () => {
    const script = await runKpc(['compile', ...argv]);
    expect(script.code, script.stderr).toBe(0);
    const node = ['--to', '100.101.102.103:3001', '--from', '203.0.113.9', '-o', 'json'];
    const viaScript = JSON.parse((await runTraceCli(['trace', '--rules', '-', '--node-ip', '100.101.102.103', ...node], { stdin: script.stdout })).stdout);
    const standalone = JSON.parse((await runTraceCli(['trace', ...argv, '--standalone', ...node])).stdout);
    // Hand-derived (ETP Local node port, see above): 10.180.0.1:80 only, not masqueraded.
    for (const r of [viaScript, standalone]) {
      expect(r.verdict).toBe('ACCEPT');
      expect(r.endpoints).toEqual([{ address: '10.180.0.1:80', probability: 1, masquerade: false }]);
    }
  });

  // TestIPv6Proxier-1-two-services: -A -t [1002:ab8::2:1]:8080 → [1009:ab8::5:6]:8080 -w 1; the
  // KUBE-6-* sets hold it, so the IPv6 rules accept it.
  it('IPv6: KUBE-6- sets and [addr]:port virtual servers', async () => {
    const r = trace('TestIPv6Proxier-1-two-services', { source: 'fd00:10:244::7', destination: '1002:ab8::2:1', port: 8080 });
    expect(r.verdict).toBe('ACCEPT');
    expect(eps(r)).toEqual([['[1009:ab8::5:6]:8080', 1, false]]);
    expect(r.ipvs?.virtualServer).toBe('[1002:ab8::2:1]:8080/TCP');
    const other = trace('TestIPv6Proxier-1-two-services', { source: 'fd00:10:244::7', destination: '1002:ab8::2:1', port: 8081 });
    expect(other.verdict).toBe('REJECT');
  });

  it('agrees with kpc explain --proxy-mode ipvs on the real servers and weights', async () => {
    const svcs = [
      ['10.20.30.41:80', '10.20.30.41:80/TCP'],
      ['100.101.102.103:3001', '100.101.102.103:3001/TCP'],
    ];
    const ex = await runKpc(['explain', 'ns1/svc1', ...argv]);
    expect(ex.code, ex.stderr).toBe(0);
    for (const [dest, vs] of svcs) {
      const t = JSON.parse((await runTraceCli(['trace', ...argv, '--to', dest!, '--from', '203.0.113.9', '-o', 'json'])).stdout);
      expect(t.ipvs.virtualServer).toBe(vs);
      const fromExplain = ex.stdout
        .split('\n')
        .map((l) => / -a -t (\S+) -r (\S+) -m -w (\d+)/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null && m[1] === dest)
        .map((m) => ({ address: m[2], weight: Number(m[3]) }));
      expect(fromExplain.length).toBeGreaterThan(0);
      expect(t.ipvs.realServers.map((s: { address: string; weight: number }) => ({ address: s.address, weight: s.weight }))).toEqual(fromExplain);
    }
  });
});

describe('kpc trace, ipvs: every virtual server of every golden', () => {
  // For each `-A` line of kube-proxy's expected ipvs.rules, a new connection from a pod-like
  // address: when the iptables rules let it reach IPVS, the stage is that virtual server with
  // exactly the `-a` lines' real servers and weights, and every accepted endpoint is one of them.
  const cases = loadGoldenCases(ROOT, { bundles: true }).filter((c) => c.exit === 0 && existsSync(join(c.dir, 'expected', 'ipvs.rules')));
  let reached = 0;
  let total = 0;
  for (const c of cases) {
    it(c.name, () => {
      const lines = readFileSync(join(c.dir, 'expected', 'ipvs.rules'), 'utf8').split('\n');
      const nodeIPs = c.args.flatMap((a, i) => (c.args[i - 1] === '--node-ip' ? [a] : []));
      for (const l of lines) {
        const m = /^-A (-t|-u|--sctp-service) (\S+) /.exec(l);
        if (!m) continue;
        const hp = /^\[?([^\]]+?)\]?:(\d+)$/.exec(m[2]!)!;
        const v6 = hp[1]!.includes(':');
        const protocol = m[1] === '-t' ? 'tcp' : m[1] === '-u' ? 'udp' : 'sctp';
        const r = trace(c.name, { source: v6 ? 'fd00:10:244::7' : '10.244.1.7', destination: hp[1]!, port: Number(hp[2]), protocol }, nodeIPs);
        const real = lines
          .map((x) => new RegExp(`^-a ${m[1]} ${m[2]!.replace(/[[\]().]/g, '\\$&')} -r (\\S+) -m -w (\\d+)$`).exec(x))
          .filter((x): x is RegExpExecArray => x !== null)
          .map((x) => ({ address: x[1]!, weight: Number(x[2]) }));
        total++;
        if (!r.ipvs) continue;
        reached++;
        expect(r.ipvs.virtualServer, l).toBe(`${m[2]}/${protocol.toUpperCase()}`);
        expect(r.ipvs.realServers.map((s) => ({ address: s.address, weight: s.weight })), l).toEqual(real);
        for (const e of r.endpoints) expect(real.map((x) => x.address), l).toContain(e.address);
        if (real.length === 0) expect(r.verdict, l).toBe('REJECT');
      }
    });
  }
  it('reached most virtual servers', () => {
    expect(total).toBeGreaterThan(50);
    expect(reached / total).toBeGreaterThan(0.8);
  });
});

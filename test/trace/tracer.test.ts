/**
 * The tracer's semantics on small hand-written rule sets: hooks per origin, branching on
 * statistic, verdict reporting for mixed branches, affinity, marks, goto/RETURN, policies,
 * implicit jumps (checked against `kpc compile --standalone`), and its errors.
 */

import { describe, expect, it } from 'vitest';
import { implicitJumpLines, renderTrace, traceRules, type TraceResult } from '../../src/trace/index.js';
import { KpcError } from '../../src/errors.js';
import { runKpc } from '../helpers/run-kpc.js';

const NODE = { ips: ['192.168.0.2', '2001:db8::1'] };

/** nat rules with the kube-proxy plumbing every test needs. */
function natRules(chains: Record<string, string[]>, filter: Record<string, string[]> = {}): string {
  const nat: Record<string, string[]> = {
    'KUBE-MARK-MASQ': ['-j MARK --or-mark 0x4000'],
    'KUBE-POSTROUTING': ['-m mark ! --mark 0x4000/0x4000 -j RETURN', '-j MARK --xor-mark 0x4000', '-j MASQUERADE'],
    ...chains,
  };
  const table = (name: string, t: Record<string, string[]>) =>
    [`*${name}`, ...Object.keys(t).map((c) => `:${c} - [0:0]`), ...Object.entries(t).flatMap(([c, rs]) => rs.map((r) => `-A ${c} ${r}`)), 'COMMIT'].join('\n');
  return `${table('filter', { 'KUBE-SERVICES': [], 'KUBE-EXTERNAL-SERVICES': [], 'KUBE-NODEPORTS': [], 'KUBE-FORWARD': [], 'KUBE-PROXY-FIREWALL': [], 'KUBE-FIREWALL': [], ...filter })}\n${table('nat', nat)}\n`;
}

function threeEndpoints(extra: Record<string, string[]> = {}): string {
  return natRules({
    'KUBE-SERVICES': ['-m tcp -p tcp -d 172.30.0.1 --dport 80 -j KUBE-SVC-A'],
    'KUBE-SVC-A': [
      '-m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-1',
      '-m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-2',
      '-j KUBE-SEP-3',
    ],
    'KUBE-SEP-1': ['-s 10.0.0.1 -j KUBE-MARK-MASQ', '-m tcp -p tcp -j DNAT --to-destination 10.0.0.1:8080'],
    'KUBE-SEP-2': ['-s 10.0.0.2 -j KUBE-MARK-MASQ', '-m tcp -p tcp -j DNAT --to-destination 10.0.0.2:8080'],
    'KUBE-SEP-3': ['-s 10.0.0.3 -j KUBE-MARK-MASQ', '-m tcp -p tcp -j DNAT --to-destination 10.0.0.3:8080'],
    ...extra,
  });
}

const probs = (r: TraceResult) => Object.fromEntries(r.endpoints.map((e) => [e.address, e.probability]));

describe('traceRules', () => {
  it('splits on statistic and multiplies probabilities down the chain', () => {
    const r = traceRules(threeEndpoints(), { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    expect(r.verdict).toBe('ACCEPT');
    expect(r.branches).toHaveLength(3);
    const p = probs(r);
    expect(Object.keys(p)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080', '10.0.0.3:8080']);
    expect(p['10.0.0.1:8080']).toBeCloseTo(0.3333333333, 10);
    expect(p['10.0.0.2:8080']).toBeCloseTo((1 - 0.3333333333) * 0.5, 10);
    expect(p['10.0.0.3:8080']).toBeCloseTo((1 - 0.3333333333) * 0.5, 10);
    expect(r.masquerade).toBe(false);
    expect(r.path.slice(0, 4)).toEqual(['nat/PREROUTING', 'nat/KUBE-SERVICES', 'nat/KUBE-SVC-A', 'nat/KUBE-SEP-1']);
  });

  it('masquerades only the hairpin branch, and says so per endpoint', () => {
    const r = traceRules(threeEndpoints(), { source: '10.0.0.2', destination: '172.30.0.1', port: 80 }, NODE);
    expect(r.masquerade).toBe(true);
    expect(r.endpoints.map((e) => [e.address, e.masquerade])).toEqual([
      ['10.0.0.1:8080', false],
      ['10.0.0.2:8080', true],
      ['10.0.0.3:8080', false],
    ]);
    expect(renderTrace(r)).toMatch(/10\.0\.0\.2:8080\s+33\.33%\s+masqueraded/);
  });

  it('reports mixed verdicts: the worst verdict, only accepted endpoints, and the breakdown', () => {
    // Forwarded traffic to endpoint 2 is dropped by a filter rule.
    const text = threeEndpoints().replace('-A KUBE-FORWARD', '-A KUBE-FORWARD').replace(':KUBE-FIREWALL - [0:0]', ':KUBE-FIREWALL - [0:0]\n-A KUBE-SERVICES -d 10.0.0.2 -j DROP');
    const r = traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    expect(r.verdict).toBe('DROP');
    expect(r.verdicts.DROP).toBeCloseTo(1 / 3, 9);
    expect(r.verdicts.ACCEPT).toBeCloseTo(2 / 3, 9);
    expect(r.endpoints.map((e) => e.address)).toEqual(['10.0.0.1:8080', '10.0.0.3:8080']);
    expect(r.branches.map((b) => b.verdict)).toEqual(['ACCEPT', 'DROP', 'ACCEPT']);
    expect(renderTrace(r)).toMatch(/verdict: DROP \(ACCEPT 66\.67%, DROP 33\.33%\)/);
  });

  it('notes session affinity and traces a first connection', () => {
    const text = threeEndpoints({
      'KUBE-SVC-A': [
        '-m recent --name KUBE-SEP-1 --rcheck --seconds 10800 --reap -j KUBE-SEP-1',
        '-m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-1',
        '-j KUBE-SEP-2',
      ],
    });
    const r = traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    expect(r.affinity).toEqual([{ name: 'KUBE-SEP-1', seconds: 10800, rule: 'nat/KUBE-SVC-A #1', endpoint: '10.0.0.1:8080' }]);
    expect(r.endpoints).toHaveLength(2);
    expect(renderTrace(r)).toMatch(/session affinity: a client seen in the last 10800s goes back to 10\.0\.0\.1:8080/);
  });

  it('follows the hooks of a packet from the node itself (nat OUTPUT, then filter OUTPUT)', () => {
    const r = traceRules(threeEndpoints(), { destination: '172.30.0.1', port: 80 }, NODE);
    expect(r.packet).toMatchObject({ source: '192.168.0.2', origin: 'node' });
    expect(r.path[0]).toBe('nat/OUTPUT');
    expect(r.path).toContain('filter/OUTPUT');
    expect(r.path).not.toContain('filter/FORWARD');
  });

  it('delivers to a local address through filter INPUT', () => {
    const text = natRules({}, { 'KUBE-NODEPORTS': ['-m tcp -p tcp --dport 30000 -j ACCEPT'] });
    const r = traceRules(text, { source: '203.0.113.9', destination: '192.168.0.2', port: 30000 }, NODE);
    expect(r.verdict).toBe('ACCEPT');
    expect(r.branches[0]!.verdictBy).toBe('filter/KUBE-NODEPORTS #1');
    expect(r.path).toContain('filter/INPUT');
    expect(r.path).not.toContain('nat/POSTROUTING');
  });

  it('uses the chain policy of a declared built-in chain (iptables-save of a node)', () => {
    const text = `*filter\n:FORWARD DROP [0:0]\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n`;
    const r = traceRules(text, { source: '10.1.1.1', destination: '10.2.2.2', port: 80 }, NODE);
    expect(r.verdict).toBe('DROP');
    expect(r.branches[0]!.verdictBy).toBe('policy of filter/FORWARD');
    // Both hooks it passed are declared, so nothing was assumed (it never reached nat POSTROUTING).
    expect(r.notes).toEqual([]);
    const accepted = traceRules(text.replace(':FORWARD DROP', ':FORWARD ACCEPT'), { source: '10.1.1.1', destination: '10.2.2.2', port: 80 }, NODE);
    expect(accepted.notes.join('\n')).toMatch(/do not declare nat\/POSTROUTING;/);
  });

  it('honours marks, RETURN and goto', () => {
    const text = natRules({
      'KUBE-SERVICES': ['-j MARK --set-xmark 0x1/0xffffffff', '-g KUBE-GOTO', '-j DNAT --to-destination 10.9.9.9:1'],
      'KUBE-GOTO': ['-m mark --mark 0x2 -j DNAT --to-destination 10.9.9.2:2', '-m mark --mark 0x1 -j RETURN', '-j DNAT --to-destination 10.9.9.3:3'],
    });
    // RETURN from a chain entered by -g returns past the caller: no DNAT at all.
    const r = traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    expect(r.endpoints).toEqual([]);
    expect(r.branches[0]!.dnat).toBe(false);
  });

  it('evaluates addrtype LOCAL on the node addresses and loopback, not elsewhere', () => {
    const text = natRules({ 'KUBE-SERVICES': ['-m addrtype --dst-type LOCAL -j DNAT --to-destination 10.5.5.5:5'] });
    const local = (d: string) => traceRules(text, { source: '10.1.1.1', destination: d, port: 5 }, NODE).endpoints.length;
    expect(local('192.168.0.2')).toBe(1);
    expect(local('127.0.0.7')).toBe(1);
    expect(local('192.168.0.3')).toBe(0);
  });

  it('traces IPv6', () => {
    const text = natRules({ 'KUBE-SERVICES': ['-d fd00::1/128 -p tcp -m tcp --dport 80 -j DNAT --to-destination [fd00:10::5]:8080'] });
    const r = traceRules(text, { source: 'fd00:10::9', destination: 'fd00::1', port: 80 }, NODE);
    expect(r.endpoints.map((e) => e.address)).toEqual(['[fd00:10::5]:8080']);
  });

  it('matches protocol and ports', () => {
    const text = natRules({ 'KUBE-SERVICES': ['-m udp -p udp -d 172.30.0.1 --dport 53 -j DNAT --to-destination 10.5.5.5:53'] });
    expect(traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 53, protocol: 'udp' }, NODE).endpoints).toHaveLength(1);
    expect(traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 53, protocol: 'tcp' }, NODE).endpoints).toHaveLength(0);
    expect(traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 54, protocol: 'udp' }, NODE).endpoints).toHaveLength(0);
  });

  it('says when it had to assume something: unknown interface, unsupported match, unmodelled target', () => {
    const text = natRules({
      'KUBE-SERVICES': ['-i cbr0 -j LOG', '-m set --match-set x src -j DNAT --to-destination 10.1.1.1:1', '! -i cbr0 -j KUBE-MARK-MASQ'],
    });
    const r = traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    const notes = r.notes.join('\n');
    expect(notes).toMatch(/input interface .* not known; assumed not cbr0/);
    expect(notes).toMatch(/-m set --match-set x src.*assumed not to match/);
    // `! -i cbr0` matched (the interface is unknown, assumed not cbr0): marked, so masqueraded.
    expect(r.masquerade).toBe(true);
    const withIface = traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 80, inInterface: 'cbr0' }, NODE);
    expect(withIface.notes.join('\n')).toMatch(/target LOG is not modelled/);
  });

  it('refuses loops and bad packets', () => {
    const loop = natRules({ 'KUBE-SERVICES': ['-j KUBE-A'], 'KUBE-A': ['-j KUBE-B'], 'KUBE-B': ['-j KUBE-A'] });
    expect(() => traceRules(loop, { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE)).toThrow(KpcError);
    expect(() => traceRules(loop, { source: '10.1.1.1', destination: 'fd00::1', port: 80 }, NODE)).toThrow(/different families/);
    expect(() => traceRules(loop, { source: '10.1.1.1', destination: '172.30.0.1', port: 0 }, NODE)).toThrow(/port 0/);
    expect(() => traceRules(loop, { source: 'nope', destination: '172.30.0.1', port: 80 }, NODE)).toThrow(/not an IP address/);
  });

  it('is pure: the same input gives the same result', () => {
    const a = traceRules(threeEndpoints(), { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    const b = traceRules(threeEndpoints(), { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    expect(b).toEqual(a);
  });
});

describe("kube-proxy's jumps assumed for undeclared built-in chains", () => {
  it('are exactly what kpc compile --standalone writes', async () => {
    const run = await runKpc(['compile', '--allow-empty', '--standalone', '--hostname-override', 'n', '--node-ip', '192.168.0.2', '-f', '-'], '');
    expect(run.code, run.stderr).toBe(0);
    for (const table of ['filter', 'nat']) {
      const section = run.stdout.split(`*${table}\n`)[1]!.split('COMMIT')[0]!;
      const builtin = section.split('\n').filter((l) => /^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(l));
      // kpc prints chains by name; within a chain the order must agree.
      const byChain = (lines: string[]) => [...lines].sort((a, b) => a.split(' ')[1]!.localeCompare(b.split(' ')[1]!));
      expect(byChain(implicitJumpLines(table)), table).toEqual(byChain(builtin));
      expect(builtin.length).toBeGreaterThan(0);
    }
  });
});

describe('large chains', () => {
  it('traces a 5000-endpoint service quickly, with probabilities summing to 1', () => {
    const n = 5000;
    const svc: string[] = [];
    const seps: Record<string, string[]> = {};
    for (let i = 0; i < n; i++) {
      const k = n - i;
      const p = (1 / k).toFixed(10);
      svc.push(i < n - 1 ? `-m statistic --mode random --probability ${p} -j KUBE-SEP-${i}` : `-j KUBE-SEP-${i}`);
      seps[`KUBE-SEP-${i}`] = [`-m tcp -p tcp -j DNAT --to-destination 10.${(i >> 8) & 255}.${i & 255}.1:80`];
    }
    const text = natRules({ 'KUBE-SERVICES': ['-m tcp -p tcp -d 172.30.0.1 --dport 80 -j KUBE-SVC-BIG'], 'KUBE-SVC-BIG': svc, ...seps });
    const start = Date.now();
    const r = traceRules(text, { source: '10.1.1.1', destination: '172.30.0.1', port: 80 }, NODE);
    expect(Date.now() - start).toBeLessThan(5000);
    expect(r.endpoints).toHaveLength(n);
    expect(r.endpoints.reduce((a, e) => a + e.probability, 0)).toBeCloseTo(1, 6);
    for (const e of r.endpoints) expect(e.probability).toBeCloseTo(1 / n, 8);
  });
});

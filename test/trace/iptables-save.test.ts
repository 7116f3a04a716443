/**
 * The reader must give the same rule model for kpc's iptables-restore input and for what
 * `iptables-save` prints after loading it on a real kernel (options reordered, `/32` added,
 * every comment quoted, `--or-mark` shown as `--set-xmark`, `--reject-with` added, 11-digit
 * probabilities, `recent --mask ... --rsource`, the built-in chains declared with policies).
 *
 * The captured pairs live in fixtures/packet-flow/iptables-save/ (see NOTE.md there):
 *   <name>.restore  kpc compile --standalone output (the input that was loaded)
 *   <name>.save     iptables-save / ip6tables-save of a network namespace after loading it
 * The lab suite at the end re-captures them on this machine's kernel and checks the committed
 * .save is what iptables-save prints; UPDATE_CAPTURE=1 (as root) rewrites both files.
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRules, traceRuleSet, type Match, type Rule, type RuleSet, type Target } from '../../src/trace/index.js';
import { describeLab, iptablesRestoreLoad, iptablesSave, withNetns } from '../netns/lab.js';
import { runKpc } from '../helpers/run-kpc.js';
import { caseArgv, loadFlowFixtures, PACKET_FLOW_ROOT, splitHostPort } from './flows.js';

const CAPTURE_DIR = join(PACKET_FLOW_ROOT, 'iptables-save');

interface Capture {
  name: string;
  family: 'ipv4' | 'ipv6';
  /** The packet-flow fixture and case whose flows are traced (and, without `argv`, compiled). */
  test: string;
  caseName: string;
  /** Compile this instead of the fixture case. */
  argv?: string[];
}

const OVERALL = join(PACKET_FLOW_ROOT, '..', 'kube-proxy', 'iptables', 'TestOverallIPTablesRules');

const CAPTURES: Capture[] = [
  {
    // kube-proxy's TestOverallIPTablesRules services (the ones TestTracePacket's fixed dump was
    // made from), traced with TestTracePacket's flows.
    name: 'TestOverallIPTablesRules',
    family: 'ipv4',
    test: 'TestTracePacket',
    caseName: '',
    argv: ['compile', '--hostname-override', 'test-node', '--node-ip', '192.168.0.2', '--cluster-cidr', '10.0.0.0/8', '--kube-proxy-version', '1.34', '--nfacct', '--no-masquerade-random-fully', '--service-node-port-range', '1-32767', '-f', join(OVERALL, 'input'), '-R'],
  },
  { name: 'TestLoadBalancer', family: 'ipv4', test: 'TestLoadBalancer', caseName: '' },
  { name: 'TestInternalExternalMasquerade-base', family: 'ipv4', test: 'TestInternalExternalMasquerade', caseName: 'base' },
  { name: 'TestNodePorts-ipv6-localhost-nodeports-disabled-multiple-nodeport-addresses', family: 'ipv6', test: 'TestNodePorts', caseName: 'ipv6, localhost-nodeports disabled, multiple nodeport-addresses' },
];

function read(name: string, ext: 'restore' | 'save'): string {
  return readFileSync(join(CAPTURE_DIR, `${name}.${ext}`), 'utf8');
}

/** A rule's meaning, independent of how it was spelled. */
function canonical(rule: Rule): string {
  const matchKey = (m: Match): string => {
    switch (m.kind) {
      case 'address':
        return JSON.stringify({ k: m.kind, w: m.which, n: m.negated, a: m.addresses.map((a) => [a.family, [...a.bytes], [...a.mask]]) });
      case 'iprange':
        return JSON.stringify({ k: m.kind, w: m.which, n: m.negated, f: [...m.from.bytes], t: [...m.to.bytes] });
      case 'random':
        return JSON.stringify({ k: m.kind, n: m.negated, p: m.probability });
      default:
        return JSON.stringify(m);
    }
  };
  const targetKey = (t: Target | undefined): string => {
    if (!t) return 'none';
    switch (t.kind) {
      case 'REJECT':
        // iptables-save shows the default --reject-with.
        return `REJECT ${t.rejectWith ?? 'default'}`.replace(/icmp6?-port-unreachable/, 'default');
      case 'MARK':
        return `MARK ${t.value}/${t.mask}`;
      default:
        return JSON.stringify(t);
    }
  };
  return JSON.stringify({ m: rule.matches.map(matchKey).sort(), t: targetKey(rule.target), c: rule.comment ?? null });
}

function chainMap(rs: RuleSet, table: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of rs.tables.get(table)?.chains.values() ?? []) {
    // iptables-save declares every built-in chain of a table it prints (nat INPUT too).
    if (c.builtin && c.rules.length === 0) continue;
    out.set(c.name, c.rules.map(canonical));
  }
  return out;
}

describe('iptables-save captures', () => {
  for (const cap of CAPTURES) {
    describe(cap.name, () => {
      const have = existsSync(join(CAPTURE_DIR, `${cap.name}.save`)) && existsSync(join(CAPTURE_DIR, `${cap.name}.restore`));
      it('is committed', () => {
        expect(have, `missing capture ${cap.name}; run UPDATE_CAPTURE=1 npx vitest run test/trace/iptables-save.test.ts as root`).toBe(true);
      });
      if (!have) return;

      it('reads to the same rules as the restore input it was saved from', () => {
        const restore = readRules(read(cap.name, 'restore'));
        const save = readRules(read(cap.name, 'save'));
        for (const table of ['filter', 'nat']) {
          const a = chainMap(restore, table);
          const b = chainMap(save, table);
          expect([...b.keys()].sort(), `${table} chains`).toEqual([...a.keys()].sort());
          for (const [chain, rules] of a) expect(b.get(chain), `${table}/${chain}`).toEqual(rules);
        }
      });

      it('gives the same trace for every flow of its fixture', () => {
        const fixture = loadFlowFixtures().find((f) => f.test === cap.test)!;
        const c = fixture.cases.find((x) => x.name === cap.caseName)!;
        const restore = readRules(read(cap.name, 'restore'));
        const save = readRules(read(cap.name, 'save'));
        for (const flow of c.flows) {
          const [destination, port] = splitHostPort(flow.destination);
          const packet = { source: flow.source, destination, port, protocol: flow.protocol ?? 'tcp' } as const;
          const a = traceRuleSet(restore, packet, { ips: fixture.nodeIPs });
          const b = traceRuleSet(save, packet, { ips: fixture.nodeIPs });
          const summary = (r: typeof a) => ({ verdict: r.verdict, endpoints: r.endpoints, masquerade: r.masquerade, path: r.path, verdicts: r.verdicts });
          expect(summary(b), flow.name).toEqual(summary(a));
          expect([...b.endpoints.map((e) => e.address)].sort(), flow.name).toEqual([...flow.endpoints].sort());
          expect(b.masquerade, flow.name).toBe(flow.masq);
          expect(b.verdict, flow.name).toBe(flow.verdict);
        }
      });
    });
  }
});

/** iptables-save's header and footer comments carry the time. */
function withoutTimestamps(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^# (Generated by|Completed on) /.test(l))
    .join('\n');
}

describeLab('iptables-save captures on a real kernel', { commands: ['iptables-restore', 'iptables-save', 'ip6tables-restore', 'ip6tables-save', 'nfacct'] }, () => {
  for (const cap of CAPTURES) {
    it(`${cap.name}: iptables-save of the restore input is the committed capture`, async () => {
      const fixture = loadFlowFixtures().find((f) => f.test === cap.test)!;
      const c = fixture.cases.find((x) => x.name === cap.caseName)!;
      const update = process.env.UPDATE_CAPTURE === '1';
      let restore: string;
      if (update) {
        const run = await runKpc([...(cap.argv ?? caseArgv(fixture, c)), '--standalone']);
        expect(run.code, run.stderr).toBe(0);
        restore = run.stdout;
      } else {
        restore = read(cap.name, 'restore');
      }
      const saved = await withNetns('trsave', async (ns) => {
        const load = await iptablesRestoreLoad(ns, restore, cap.family);
        expect(load.code, load.stderr).toBe(0);
        const save = await iptablesSave(ns, cap.family);
        expect(save.code, save.stderr).toBe(0);
        return save.stdout;
      });
      if (update) {
        writeFileSync(join(CAPTURE_DIR, `${cap.name}.restore`), restore);
        writeFileSync(join(CAPTURE_DIR, `${cap.name}.save`), saved);
      }
      expect(withoutTimestamps(saved)).toBe(withoutTimestamps(read(cap.name, 'save')));
    });
  }
});

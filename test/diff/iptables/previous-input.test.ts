/**
 * What `--previous PATH` accepts. A node's iptables-save holds other components' rules with
 * matches and targets kpc never writes (Calico, Cilium, Docker, ...): those must be read and
 * left alone. A file iptables-restore would refuse (a broken rule, a table without COMMIT, not
 * rules at all) must be refused the same way: exit 2 with `--previous PATH:LINE: ...`, never an
 * internal error, and never read as a shorter state (a truncated capture would make the
 * rule-level -I positions wrong on the node).
 *
 * Run alone: `npx vitest run test/diff/iptables/previous-input.test.ts` (no root needed).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES_ROOT } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { cleanupTmp, writeText } from './harness.js';

const STEP = join(FIXTURES_ROOT, 'kube-proxy/iptables/TestSyncProxyRulesRepeated-01-initial');
const ARGS = ['--hostname-override', 'test-node', '--node-ip', '192.168.0.2', '--cluster-cidr', '10.0.0.0/8', '--kube-proxy-version', '1.34', '--nfacct', '--no-masquerade-random-fully'];
const base = (cmd: 'diff' | 'compile', previous: string) => runKpc([cmd, ...ARGS, '-f', join(STEP, 'input'), '-R', '--previous', previous]);

/** Rules of other components, as iptables-save prints them (none of these are kpc's). */
const EXOTIC = `*filter
:cali-INPUT - [0:0]
:CILIUM_FORWARD - [0:0]
-A INPUT -m comment --comment "cali:Cz_u1IQiXIMmKD4c" -j cali-INPUT
-A cali-INPUT -m set --match-set cali40all-hosts-net src -m comment --comment "cali:abc" -j ACCEPT
-A cali-INPUT -p ipv4 -m comment --comment "cali:ipip" -j ACCEPT
-A cali-INPUT -m policy --dir in --pol ipsec -j ACCEPT
-A cali-INPUT -m u32 --u32 "0>>22&0x3C@12>>26&0x3C@0&0xFFFF=0x1234" -j DROP
-A cali-INPUT -m string --algo bm --string "GET /x y" -j DROP
-A cali-INPUT -m hashlimit --hashlimit-upto 5/sec --hashlimit-mode srcip --hashlimit-name foo -j ACCEPT
-A cali-INPUT -m iprange --src-range 10.0.0.1-10.0.0.9 -j NFLOG --nflog-prefix "nf log" --nflog-group 2
-A cali-INPUT -m mark --mark 0x10000/0x10000 -j MARK --set-xmark 0x0/0x10000
-A cali-INPUT -p icmp -m icmp --icmp-type 8 -j ACCEPT
-A cali-INPUT -m physdev --physdev-is-bridged -j ACCEPT
-A cali-INPUT -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m tcpmss --mss 1:500 -j TCPMSS --clamp-mss-to-pmtu
-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT
-A CILIUM_FORWARD -m socket --transparent -j ACCEPT
-A CILIUM_FORWARD -p tcp -j REJECT --reject-with tcp-reset
-A CILIUM_FORWARD -m bpf --bytecode "4,48 0 0 9,21 0 1 6,6 0 0 1,6 0 0 0" -j ACCEPT
-A CILIUM_FORWARD -m state --state NEW -m recent --set --name SSH --mask 255.255.255.255 --rsource -j ACCEPT
-A CILIUM_FORWARD -g cali-INPUT
COMMIT
*nat
:cali-nat-outgoing - [0:0]
-A POSTROUTING -m comment --comment "cali:x" -j cali-nat-outgoing
-A cali-nat-outgoing -m set --match-set cali40masq-ipam-pools src -m set ! --match-set cali40all-ipam-pools dst -j MASQUERADE --random-fully --to-ports 1024-65535
-A cali-nat-outgoing -p tcp -j SNAT --to-source 1.2.3.4:1000-2000 --persistent
-A cali-nat-outgoing -p tcp -j REDIRECT --to-ports 8080
-A cali-nat-outgoing -j NETMAP --to 10.1.0.0/16
COMMIT
*mangle
:CILIUM_PRE_mangle - [0:0]
-A PREROUTING -j CILIUM_PRE_mangle
-A CILIUM_PRE_mangle -p tcp -m socket --transparent -j TPROXY --on-port 42 --on-ip 0.0.0.0 --tproxy-mark 0x200/0xffffffff
COMMIT
`;

afterAll(() => cleanupTmp());

describe('--previous: what is accepted and what is refused', () => {
  const expected = readFileSync(join(STEP, 'expected.out'), 'utf8');

  it('other components\' rules (Calico, Cilium, Docker: set, policy, u32, string, bpf, socket, TPROXY, NFLOG, SNAT ranges, goto, ...) are read and ignored', async () => {
    const prev = writeText(expected + EXOTIC, 'exotic', 'iptables-save.txt');
    const diff = await base('diff', prev);
    expect(diff.stdout + diff.stderr).toMatch(/^no differences\n/);
    expect(diff.code).toBe(0);
    const delta = await base('compile', prev);
    expect(delta.code, delta.stderr).toBe(0);
    expect(delta.stdout).toBe('');
  });

  it('the same through the full reader (an -N line makes kpc replay the file as iptables-restore would)', async () => {
    const prev = writeText(expected + EXOTIC.replace(':cali-nat-outgoing - [0:0]', '-N cali-nat-outgoing'), 'exotic-n', 'iptables-save.txt');
    const diff = await base('diff', prev);
    expect(diff.code, diff.stdout + diff.stderr).toBe(0);
  });

  it('not rules at all (random bytes) → exit 2, --previous PATH:LINE', async () => {
    const prev = writeText('\u0007\u0000garbage\n', 'binary', 'junk.bin');
    for (const cmd of ['diff', 'compile'] as const) {
      const r = await base(cmd, prev);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--previous ${prev}:1:`);
      expect(r.stdout).toBe('');
    }
  });

  // BUG (reported to the lead; appeared with the lazy RuleFacts parsing in src/diff/state.ts):
  // a rule iptables-restore would refuse, in one of kube-proxy's chains of the previous file,
  // crashes kpc: "internal error: TokenizeError: unterminated double quote" / "RuleParseError:
  // option "--bogus" outside any module", exit 3, with a stack trace. Remove `.fails` once fixed.
  const broken: { name: string; text: string; line: number }[] = [
    { name: 'an unterminated quote', text: '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m comment --comment "abc -j ACCEPT\nCOMMIT\n', line: 3 },
    { name: 'an unknown option', text: '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES --bogus 1 -j ACCEPT\nCOMMIT\n', line: 3 },
  ];
  for (const b of broken) {
    it(`${b.name} in a kube-proxy chain → exit 2 with --previous PATH:LINE`, async () => {
      const prev = writeText(b.text, 'broken', 'previous.txt');
      for (const cmd of ['diff', 'compile'] as const) {
        const r = await base(cmd, prev);
        expect(r.stderr).not.toMatch(/internal error/);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`--previous ${prev}:${b.line}:`);
      }
    });
  }

  // BUG (reported to the lead; the same change): a table without COMMIT (a truncated capture)
  // is read as a shorter state. iptables-restore refuses such input, and so did kpc's first
  // reader ("table nat has no COMMIT"). With a truncated KUBE-SERVICES the rule-level edits are
  // computed against rules the node does not have: here the delta inserts a second
  // "kubernetes service nodeports" jump into the node's real chain. Remove `.fails` once fixed.
  it('a capture truncated inside nat (no COMMIT) → exit 2, nothing written', async () => {
    const full = expected.split('\n');
    const lastService = full.findIndex((l) => l.startsWith('-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports'));
    const truncated = `${full.slice(0, lastService).join('\n')}\n`;
    const prev = writeText(truncated, 'truncated', 'iptables-save.txt');
    const r = await base('compile', prev);
    expect(r.code, `delta:\n${r.stdout}`).toBe(2);
    expect(r.stderr).toMatch(/no COMMIT/);
  });

  // A chain name iptables-restore cannot read back in a rule line (/tmp/rv/q.ipt: an
  // iptables-save with `:KUBE-SVC-a"b - [0:0]`): kpc used to write it unchecked as `-X KUBE-SVC-a"b`
  // in the delta, and the node's whole iptables-restore failed. Refused at its line, in both
  // readers (the fast one of diff/iptables/state.ts and the full one, which an -N line selects).
  const badNames: { name: string; text: string; line: number }[] = [
    { name: 'a stale kube-proxy chain with a quote', text: '# Generated by iptables-save v1.8.9\n*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SVC-a"b - [0:0]\nCOMMIT\n', line: 4 },
    { name: 'a kube-proxy chain in lower case', text: '*nat\n:KUBE-SVC-abc - [0:0]\nCOMMIT\n', line: 2 },
    { name: 'a kube-proxy chain over 28 characters', text: '*nat\n:KUBE-SVC-ABCDEFGHIJKLMNOPQRSTU - [0:0]\nCOMMIT\n', line: 2 },
    { name: 'a foreign chain with a quote', text: '*filter\n:cali-a"b - [0:0]\nCOMMIT\n', line: 2 },
    { name: 'a kube-proxy chain in lower case, full reader', text: '*nat\n-N KUBE-SEP-x.y\nCOMMIT\n', line: 2 },
    { name: 'a foreign chain with a backslash, full reader', text: '*nat\n:PREROUTING ACCEPT [0:0]\n-N other\n:x\\y - [0:0]\nCOMMIT\n', line: 4 },
  ];
  for (const b of badNames) {
    it(`${b.name} → exit 2 with --previous PATH:LINE, nothing written`, async () => {
      const prev = writeText(b.text, 'badname', 'iptables-save.txt');
      for (const cmd of ['diff', 'compile'] as const) {
        const r = await base(cmd, prev);
        expect(r.stderr).not.toMatch(/internal error/);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`--previous ${prev}:${b.line}: chain name`);
        expect(r.stdout).toBe('');
      }
    });
  }

  it('foreign chains with other names kpc never writes (lower case, _, ., 28 characters) are read', async () => {
    const prev = writeText(expected + '*filter\n:cali-fw-cali1234567890ab - [0:0]\n:DOCKER_USER.x - [0:0]\n:abcdefghijklmnopqrstuvwxyz12 - [0:0]\nCOMMIT\n', 'foreign', 'iptables-save.txt');
    const delta = await base('compile', prev);
    expect(delta.code, delta.stderr).toBe(0);
    expect(delta.stdout).toBe('');
  });
});

/**
 * Every golden `expected.out` that is a whole iptables-restore input must load on a real kernel.
 *
 * For each `fixtures/**\/case.yaml` (format: fixtures/README.md) with no `chain:` and exit 0 whose
 * command prints iptables-restore text (`compile`, iptables mode, to stdout), a fresh network
 * namespace gets:
 *   1. `iptables-restore --test` (`ip6tables-restore` when args say `--ip-family ipv6`), and
 *   2. a real `iptables-restore --noflush` load, as kube-proxy runs it, after creating the nfacct
 *      objects the text names (`nfacct add NAME`; they are per namespace).
 * Both must exit 0. Step 2 exists because with the nf_tables backend `--test` never reaches the
 * kernel: a jump to an undeclared chain, DNAT in the filter table or a missing nfacct object all
 * pass `--test` (see test/netns/lab.ts). Neither step needs kernel modules beyond what the
 * iptables-nft commands themselves use.
 *
 * Cases with `--previous PATH` (a delta for --noflush) get the previous state loaded first.
 * Cases that print something else (ipvs mode, other commands, `-o`) are listed as not loadable, with
 * the reason, and counted. An empty fixture set is fine; the count is printed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  checkRestorable,
  describeLab,
  iptablesRestoreLoad,
  iptablesRestoreTest,
  withNetns,
  type IpFamily,
} from '../netns/lab.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = join(REPO, 'fixtures');

interface GoldenCase {
  /** Path of the case folder relative to fixtures/. */
  name: string;
  dir: string;
  args: string[];
  exit: number;
  chain?: string;
}

type Plan =
  | { load: true; family: IpFamily; expected: string; previous?: string }
  | { load: false; why: string };

function findCases(): { cases: GoldenCase[]; broken: { name: string; why: string }[] } {
  const cases: GoldenCase[] = [];
  const broken: { name: string; why: string }[] = [];
  if (!existsSync(FIXTURES)) return { cases, broken };
  const files = readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' })
    .filter((f) => f === 'case.yaml' || f.endsWith('/case.yaml'))
    .filter((f) => !f.split('/').includes('node_modules'))
    .sort();
  for (const f of files) {
    const dir = join(FIXTURES, dirname(f));
    const name = relative(FIXTURES, dir) || '.';
    try {
      const doc = (parseYaml(readFileSync(join(FIXTURES, f), 'utf8')) ?? {}) as Record<string, unknown>;
      const args = doc.args;
      if (!Array.isArray(args) || !args.every((a) => typeof a === 'string' || typeof a === 'number')) {
        throw new Error('`args` must be a list of strings');
      }
      const exit = doc.exit ?? 0;
      if (typeof exit !== 'number') throw new Error('`exit` must be a number');
      const c: GoldenCase = { name, dir, args: args.map(String), exit };
      if (typeof doc.chain === 'string') c.chain = doc.chain;
      cases.push(c);
    } catch (e) {
      broken.push({ name, why: (e as Error).message });
    }
  }
  return { cases, broken };
}

/** Value of `--flag V` / `--flag=V` (last one wins, as with commander), or undefined. */
function flagValue(args: string[], ...names: string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    for (const n of names) {
      if (a === n && i + 1 < args.length) value = args[i + 1];
      else if (a.startsWith(`${n}=`)) value = a.slice(n.length + 1);
      else if (n.length === 2 && a.startsWith(n) && a.length > 2 && !a.startsWith('--')) value = a.slice(2); // -oPATH
    }
  }
  return value;
}

function plan(c: GoldenCase): Plan {
  if (c.chain !== undefined) return { load: false, why: `compares one chain (${c.chain})` };
  if (c.exit !== 0) return { load: false, why: `expects exit ${c.exit}` };
  if (c.args[0] !== 'compile') return { load: false, why: `command ${c.args[0] ?? '(none)'} does not print restore input` };
  if (flagValue(c.args, '-o', '--output') !== undefined) return { load: false, why: 'writes to -o, not stdout' };
  let mode = flagValue(c.args, '--proxy-mode');
  const configPath = join(c.dir, 'config.yaml');
  if (mode === undefined && existsSync(configPath)) {
    const config = (parseYaml(readFileSync(configPath, 'utf8')) ?? {}) as Record<string, unknown>;
    if (typeof config.mode === 'string' && config.mode !== '') mode = config.mode;
  }
  if (mode !== undefined && mode !== 'iptables') return { load: false, why: `proxy mode ${mode}` };
  const expectedPath = join(c.dir, 'expected.out');
  if (!existsSync(expectedPath)) return { load: false, why: 'no expected.out' };

  const family: IpFamily = flagValue(c.args, '--ip-family') === 'ipv6' ? 'ipv6' : 'ipv4';
  const p: Plan = { load: true, family, expected: readFileSync(expectedPath, 'utf8') };
  const prev = flagValue(c.args, '--previous');
  if (prev !== undefined) {
    const found = [resolve(c.dir, prev), resolve(REPO, prev)].find((x) => existsSync(x));
    if (!found) return { load: false, why: `--previous ${prev} not found (looked in the case folder and the repo root)` };
    p.previous = readFileSync(found, 'utf8');
  }
  return p;
}

const { cases, broken } = findCases();
const planned = cases.map((c) => ({ c, p: plan(c) }));
const loadable = planned.filter((x) => x.p.load);
const notLoadable = planned.filter((x) => !x.p.load);

console.info(
  `goldens-load: ${cases.length} golden case(s) under fixtures/, ${loadable.length} loadable with iptables-restore, ` +
    `${notLoadable.length} not (chain-only, non-zero exit, other output)` +
    (broken.length ? `, ${broken.length} with an unreadable case.yaml` : ''),
);

/**
 * A kube-proxy-shaped ruleset using every match and target kube-proxy writes (nfacct, recent,
 * statistic, addrtype, conntrack, comment, mark, MASQUERADE --random-fully, DNAT, REJECT): a
 * positive control that the harness accepts real kube-proxy output even while fixtures are few.
 */
const KUBE_PROXY_V4 = `*filter
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
-A KUBE-NODEPORTS -m comment --comment "ns2/svc2:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT
-A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46 --dport 80 -j REJECT
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 3003 -j REJECT
-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-PROXY-FIREWALL -m comment --comment "ns5/svc5:p80 traffic not accepted by KUBE-FW-NUKIZ6OKUXPJNT4C" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j DROP
COMMIT
*nat
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXT-AQI2S6QIMU7PVVRP - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SEP-OYPFS5VJICHGATKP - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-SVC-AQI2S6QIMU7PVVRP - [0:0]
-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 3001 -j KUBE-EXT-AQI2S6QIMU7PVVRP
-A KUBE-NODEPORTS -m comment --comment "ns1/svc1:p80 localhost" -d 127.0.0.0/8 -m nfacct --nfacct-name localhost_nps_accepted_pkts -m tcp -p tcp --dport 3001 -j KUBE-EXT-AQI2S6QIMU7PVVRP
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-AQI2S6QIMU7PVVRP -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SEP-OYPFS5VJICHGATKP -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-OYPFS5VJICHGATKP -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-OYPFS5VJICHGATKP --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m recent --name KUBE-SEP-OYPFS5VJICHGATKP --rcheck --seconds 10800 --reap -j KUBE-SEP-OYPFS5VJICHGATKP
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-OYPFS5VJICHGATKP
-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ
COMMIT
`;

/** The same shapes for IPv6 (bracketed DNAT address, v6 addresses). */
const KUBE_PROXY_V6 = KUBE_PROXY_V4.replace('-d 127.0.0.0/8 ! -s 127.0.0.0/8 ', '')
  .replace(/ -d 127\.0\.0\.0\/8 -m nfacct --nfacct-name localhost_nps_accepted_pkts/, '')
  .replaceAll('172.30.0.', 'fd00:172:30::')
  .replaceAll('5.6.7.8', 'fd00:5:6::8')
  .replaceAll('10.0.0.0/8', 'fd00:10::/64')
  .replace(/10\.180\.0\.(\d)(:80)?/g, (_m, d: string, port?: string) => (port ? `[fd00:10:180::${d}]:80` : `fd00:10:180::${d}`));

/** Broken rulesets the harness must reject, and which stage is expected to catch each. */
const BROKEN: { name: string; family: IpFamily; text: string }[] = [
  {
    name: 'a jump to an undeclared chain',
    family: 'ipv4',
    text: '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-SVC-NOTDECLARED\nCOMMIT\n',
  },
  {
    name: 'a rule appended to an undeclared chain',
    family: 'ipv4',
    text: '*nat\n-A KUBE-SVC-NOTDECLARED -j ACCEPT\nCOMMIT\n',
  },
  {
    name: 'DNAT in the filter table',
    family: 'ipv4',
    text: '*filter\n:KUBE-SEP-X - [0:0]\n-A KUBE-SEP-X -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80\nCOMMIT\n',
  },
  {
    name: 'an unknown match option',
    family: 'ipv4',
    text: '*filter\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m tcp -p tcp --dprot 80 -j ACCEPT\nCOMMIT\n',
  },
  {
    name: 'a table without COMMIT',
    family: 'ipv4',
    text: '*filter\n:KUBE-SERVICES - [0:0]\n',
  },
  {
    name: 'an IPv6 address given to iptables-restore (wrong family)',
    family: 'ipv4',
    text: '*filter\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -d fd00::1 -j ACCEPT\nCOMMIT\n',
  },
];

describeLab(
  'golden expected.out files load with iptables-restore',
  { commands: ['iptables-restore', 'ip6tables-restore', 'nfacct'] },
  () => {
    it(`inventory: ${cases.length} case(s), ${loadable.length} loadable`, () => {
      for (const { c, p } of notLoadable) {
        if (!p.load) console.info(`goldens-load: not loaded: ${c.name}: ${p.why}`);
      }
      expect(broken, 'case.yaml files that cannot be read').toEqual([]);
      expect(loadable.length + notLoadable.length).toBe(cases.length);
    });

    for (const { c, p } of loadable) {
      if (!p.load) continue;
      it(`${c.name} (${p.family})`, { timeout: 20_000 }, async () => {
        const r = await withNetns('gold', (ns) => checkRestorable(ns, p.expected, p.family, p.previous));
        expect(r.ok, `${c.name}/expected.out\n${r.message}`).toBe(true);
      });
    }

    it('accepts a kube-proxy-shaped IPv4 ruleset with every match kube-proxy uses', async () => {
      const r = await withNetns('ctl', (ns) => checkRestorable(ns, KUBE_PROXY_V4, 'ipv4'));
      expect(r.ok, r.message).toBe(true);
    });

    it('accepts the same ruleset for IPv6 with ip6tables-restore', async () => {
      const r = await withNetns('ctl', (ns) => checkRestorable(ns, KUBE_PROXY_V6, 'ipv6'));
      expect(r.ok, r.message).toBe(true);
    });

    for (const b of BROKEN) {
      it(`rejects ${b.name}`, async () => {
        const r = await withNetns('bad', (ns) => checkRestorable(ns, b.text, b.family));
        expect(r.ok, 'the harness accepted a broken ruleset').toBe(false);
        expect(r.message).not.toBe('');
      });
    }

    it('still rejects an undeclared chain when --test alone lets it through (nf_tables)', async () => {
      // With iptables-nft, --test sends nothing to the kernel, so this passes --test and only the
      // real load rejects it (the reason checkRestorable has a second stage). A stricter --test
      // (iptables-legacy) is fine too: the ruleset must be rejected either way.
      const r = await withNetns('bad', async (ns) => ({
        alone: await iptablesRestoreTest(ns, BROKEN[0]!.text, 'ipv4'),
        check: await checkRestorable(ns, BROKEN[0]!.text, 'ipv4'),
      }));
      console.info(`goldens-load: --test alone on an undeclared chain exits ${r.alone.code}; rejected at: ${r.check.failedAt}`);
      expect(r.check.ok).toBe(false);
      if (r.alone.code === 0) {
        expect(r.check.failedAt).toBe('load');
        expect(r.check.load?.stderr).toMatch(/does not exist|No such file|No chain/i);
      }
    });

    it('creates missing nfacct objects in the namespace: without them the real load fails', async () => {
      const text = '*filter\n:KUBE-FORWARD - [0:0]\n-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP\nCOMMIT\n';
      const without = await withNetns('nfacct', (ns) => iptablesRestoreLoad(ns, text, 'ipv4', { nfacct: false }));
      expect(without.code).not.toBe(0);
      const withObjects = await withNetns('nfacct', (ns) => iptablesRestoreLoad(ns, text, 'ipv4'));
      expect(withObjects.code, withObjects.stderr).toBe(0);
    });
  },
);

/**
 * IPVS-mode incremental output, without a kernel: the delta bundle's text for each step of
 * helpers/delta-states.ts (expectations written out and reviewed by hand against ipvs-mode.md
 * §2-§7: which virtual servers, real servers, set entries, addresses and chains each change
 * touches), the readers against real tool output (test/vm/fixtures/worked-example: what
 * ipvsadm-save -n, ipset save, iptables-save and `ip -o addr show` printed in the VM, for both
 * iptables backends), the ownership rules (what a delta never touches), and the command line
 * (`compile --previous`, `diff`, `check`, the new flag and its errors).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { computeIpvsDelta, unchangedIpvsDelta, readAddresses, readIpsetState, readIpvsTable, readNodeState, renderIpvsTable } from '../../src/diff/ipvs/index.js';
import { RuleFacts } from '../../src/diff/iptables/state.js';
import { runKpc } from '../helpers/run-kpc.js';
import { deltaBundle, fullBundle, nodeArgs, readDir, sequence, workspace, writeDir, type StateModel } from './helpers/delta-states.js';
import { KpcError } from '../../src/errors.js';

const ws = workspace('delta-unit');
afterAll(() => ws.cleanup());

const S = sequence();
const V6 = sequence({ family: 'ipv6' });
const state = (name: string, seq: StateModel[] = S) => seq.find((s) => s.name === name)!;

/** kpc's full bundle of a state, as a --previous directory. */
async function previousOf(name: string, seq: StateModel[] = S, files?: Record<string, string>): Promise<string> {
  return writeDir(join(ws.root, `prev-${seq[0]!.family}-${name}-${Math.random().toString(36).slice(2, 7)}`), files ?? (await fullBundle(ws, state(name, seq))));
}

const lines = (...l: string[]) => (l.length === 0 ? '' : l.join('\n') + '\n');

describe('delta text, step by step (hand-reviewed)', () => {
  it('s0 -> s1, an endpoint added to a NodePort Service: one -a per virtual server, nothing else', async () => {
    const d = await deltaBundle(ws, state('s1'), await previousOf('s0'));
    expect(d['ipvs.rules']).toBe(lines('-a -t 10.96.0.20:80 -r 10.244.2.8:8080 -m -w 1', '-a -t 192.168.1.10:30080 -r 10.244.2.8:8080 -m -w 1'));
    // c is on node-b: no KUBE-LOOP-BACK entry; no rule depends on the change
    expect(d['ipset.rules']).toBe('');
    expect(d['iptables.rules']).toBe('');
    // the full wanted list, as in a full bundle
    expect(d['kube-ipvs0.addrs']).toBe(lines('10.96.0.10/32', '10.96.0.20/32'));
  });

  it('s1 -> s2, a local endpoint removed: quiesced (weight 0) by default, its KUBE-LOOP-BACK entry deleted', async () => {
    const d = await deltaBundle(ws, state('s2'), await previousOf('s1'));
    expect(d['ipvs.rules']).toBe(lines('-e -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 0', '-e -t 192.168.1.10:30080 -r 10.244.1.5:8080 -m -w 0'));
    expect(d['ipset.rules']).toBe(lines('del KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5 -exist'));
    expect(d['iptables.rules']).toBe('');
  });

  it('s1 -> s2 with --ipvs-removed-real-servers delete: -d instead', async () => {
    const d = await deltaBundle(ws, state('s2'), await previousOf('s1'), ['--ipvs-removed-real-servers', 'delete']);
    expect(d['ipvs.rules']).toBe(lines('-d -t 10.96.0.20:80 -r 10.244.1.5:8080', '-d -t 192.168.1.10:30080 -r 10.244.1.5:8080'));
    expect(d['ipset.rules']).toBe(lines('del KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5 -exist'));
  });

  it('s2 -> s3, a LoadBalancer Service with an external IP added: four virtual servers, set entries, three addresses, KUBE-SERVICES rewritten whole', async () => {
    const d = await deltaBundle(ws, state('s3'), await previousOf('s2'));
    expect(d['ipvs.rules']).toBe(
      lines(
        '-A -t 10.96.0.30:443 -s rr',
        '-a -t 10.96.0.30:443 -r 10.244.3.9:8080 -m -w 1',
        '-A -t 192.168.1.10:30443 -s rr',
        '-a -t 192.168.1.10:30443 -r 10.244.3.9:8080 -m -w 1',
        '-A -t 198.51.100.20:443 -s rr',
        '-a -t 198.51.100.20:443 -r 10.244.3.9:8080 -m -w 1',
        '-A -t 203.0.113.10:443 -s rr',
        '-a -t 203.0.113.10:443 -r 10.244.3.9:8080 -m -w 1',
      ),
    );
    expect(d['ipset.rules']).toBe(
      lines(
        'add KUBE-CLUSTER-IP 10.96.0.30,tcp:443 -exist',
        'add KUBE-EXTERNAL-IP 198.51.100.20,tcp:443 -exist',
        'add KUBE-LOAD-BALANCER 203.0.113.10,tcp:443 -exist',
        'add KUBE-NODE-PORT-TCP 30443 -exist',
        'add KUBE-IPVS-IPS 10.96.0.30 -exist',
        'add KUBE-IPVS-IPS 198.51.100.20 -exist',
        'add KUBE-IPVS-IPS 203.0.113.10 -exist',
      ),
    );
    // The sets LOAD-BALANCER and EXTERNAL-IP became non-empty: their rules appear in KUBE-SERVICES.
    expect(d['iptables.rules']).toBe(
      lines(
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -j KUBE-MARK-MASQ',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m addrtype --dst-type LOCAL -j ACCEPT',
        '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
        '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
        '-A KUBE-SERVICES -m set --match-set KUBE-LOAD-BALANCER dst,dst -j ACCEPT',
        'COMMIT',
      ),
    );
    expect(d['kube-ipvs0.addrs']).toBe(lines('10.96.0.10/32', '10.96.0.20/32', '10.96.0.30/32', '198.51.100.20/32', '203.0.113.10/32'));
    const script = d['apply.sh']!;
    for (const a of ['10.96.0.30/32', '198.51.100.20/32', '203.0.113.10/32']) expect(script).toContain(`ip address replace ${a} dev kube-ipvs0\n`);
    expect(script).not.toContain('ip address del');
  });

  it('s3 -> s4, the Service deleted and ClientIP affinity added to another: -E with the whole option set, -D, dels, addresses removed after iptables', async () => {
    const d = await deltaBundle(ws, state('s4'), await previousOf('s3'));
    expect(d['ipvs.rules']).toBe(
      lines(
        '-E -t 10.96.0.20:80 -s rr -p 600',
        '-E -t 192.168.1.10:30080 -s rr -p 600',
        '-D -t 10.96.0.30:443',
        '-D -t 192.168.1.10:30443',
        '-D -t 198.51.100.20:443',
        '-D -t 203.0.113.10:443',
      ),
    );
    expect(d['ipset.rules']).toBe(
      lines(
        'del KUBE-CLUSTER-IP 10.96.0.30,tcp:443 -exist',
        'del KUBE-EXTERNAL-IP 198.51.100.20,tcp:443 -exist',
        'del KUBE-LOAD-BALANCER 203.0.113.10,tcp:443 -exist',
        'del KUBE-NODE-PORT-TCP 30443 -exist',
        'del KUBE-IPVS-IPS 10.96.0.30 -exist',
        'del KUBE-IPVS-IPS 198.51.100.20 -exist',
        'del KUBE-IPVS-IPS 203.0.113.10 -exist',
      ),
    );
    expect(d['iptables.rules']).toBe(
      lines(
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        '-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN',
        '-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ',
        '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT',
        '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
        'COMMIT',
      ),
    );
    const script = d['apply.sh']!;
    const step = (s: string) => script.indexOf(s);
    for (const a of ['10.96.0.30/32', '198.51.100.20/32', '203.0.113.10/32']) {
      expect(script).toContain(`if grep -qxF -- ${a} "$work/addrs"; then ip address del ${a} dev kube-ipvs0; fi\n`);
      // after the iptables restore that stops using the addresses' sets, before the -D step
      expect(step(`ip address del ${a}`)).toBeGreaterThan(step('iptables-restore -w --noflush'));
      expect(step(`ip address del ${a}`)).toBeLessThan(step('ipvsadm_part "$work/ipvs-2.rules"'));
    }
  });

  it('s4 -> s5, a UDP+TCP Service loses its pod and the scheduler changes: -E everywhere, UDP deleted at once, TCP quiesced; KUBE-POSTROUTING loses its hairpin rule', async () => {
    const d = await deltaBundle(ws, state('s5'), await previousOf('s4'));
    expect(d['ipvs.rules']).toBe(
      lines(
        '-E -t 10.96.0.10:53 -s wrr',
        '-e -t 10.96.0.10:53 -r 10.244.1.3:53 -m -w 0',
        '-E -t 10.96.0.20:80 -s wrr',
        '-E -t 192.168.1.10:30080 -s wrr',
        '-E -u 10.96.0.10:53 -s wrr',
        '-d -u 10.96.0.10:53 -r 10.244.1.3:53',
      ),
    );
    expect(d['ipset.rules']).toBe(lines('del KUBE-LOOP-BACK 10.244.1.3,tcp:53,10.244.1.3 -exist', 'del KUBE-LOOP-BACK 10.244.1.3,udp:53,10.244.1.3 -exist'));
    expect(d['iptables.rules']).toBe(
      lines(
        '*nat',
        ':KUBE-POSTROUTING - [0:0]',
        '-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN',
        '-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000',
        '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
        'COMMIT',
      ),
    );
  });

  it('IPv6 (s1 -> s2 and s2 -> s3): bracketed addresses, KUBE-6- sets, /128 addresses', async () => {
    const q = await deltaBundle(ws, state('s2', V6), await previousOf('s1', V6));
    expect(q['ipvs.rules']).toBe(lines('-e -t [fd00:1::10]:30080 -r [fd00:244:1::5]:8080 -m -w 0', '-e -t [fd00:96::20]:80 -r [fd00:244:1::5]:8080 -m -w 0'));
    expect(q['ipset.rules']).toBe(lines('del KUBE-6-LOOP-BACK fd00:244:1::5,tcp:8080,fd00:244:1::5 -exist'));
    const a = await deltaBundle(ws, state('s3', V6), await previousOf('s2', V6));
    expect(a['ipvs.rules']!.split('\n')[0]).toBe('-A -t [2001:db8:100::20]:443 -s rr');
    expect(a['ipset.rules']).toContain('add KUBE-6-IPVS-IPS fd00:96::30 -exist\n');
    expect(a['iptables.rules']).toContain('-A KUBE-SERVICES -s ::1/128 -j RETURN\n');
    expect(a['apply.sh']).toContain('ip address replace fd00:96::30/128 dev kube-ipvs0\n');
    expect(a['apply.sh']).toContain('ip6tables-restore -w --noflush');
  });

  it('no change: every part empty (but kube-ipvs0.addrs, the wanted list), and apply.sh still valid', async () => {
    const d = await deltaBundle(ws, state('s3'), await previousOf('s3'));
    expect([d['ipvs.rules'], d['ipset.rules'], d['iptables.rules']]).toEqual(['', '', '']);
    expect(d['kube-ipvs0.addrs']).toBe(lines('10.96.0.10/32', '10.96.0.20/32', '10.96.0.30/32', '198.51.100.20/32', '203.0.113.10/32'));
  });

  it('--full: every wanted server (-E/-e, -A/-a), set and entry (-exist), chain and address, plus the deletions', async () => {
    const d = await deltaBundle(ws, state('s2'), await previousOf('s1'), ['--full', '--ipvs-removed-real-servers', 'delete']);
    expect(d['ipvs.rules']).toBe(
      lines(
        '-E -t 10.96.0.10:53 -s rr',
        '-e -t 10.96.0.10:53 -r 10.244.1.3:53 -m -w 1',
        '-E -t 10.96.0.20:80 -s rr',
        '-e -t 10.96.0.20:80 -r 10.244.2.7:8080 -m -w 1',
        '-e -t 10.96.0.20:80 -r 10.244.2.8:8080 -m -w 1',
        '-E -t 192.168.1.10:30080 -s rr',
        '-e -t 192.168.1.10:30080 -r 10.244.2.7:8080 -m -w 1',
        '-e -t 192.168.1.10:30080 -r 10.244.2.8:8080 -m -w 1',
        '-E -u 10.96.0.10:53 -s rr',
        '-e -u 10.96.0.10:53 -r 10.244.1.3:53 -m -w 1',
        '-d -t 10.96.0.20:80 -r 10.244.1.5:8080',
        '-d -t 192.168.1.10:30080 -r 10.244.1.5:8080',
      ),
    );
    const ipset = d['ipset.rules']!.split('\n').filter(Boolean);
    expect(ipset.filter((l) => l.startsWith('create '))).toHaveLength(17);
    expect(ipset.every((l) => l.endsWith(' -exist'))).toBe(true);
    expect(ipset.at(-1)).toBe('del KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5 -exist');
    // all eleven IPVS-mode chains, whole
    expect(d['iptables.rules']!.split('\n').filter((l) => l.startsWith(':'))).toHaveLength(11);
    expect(d['apply.sh']).toContain('ip address replace 10.96.0.10/32 dev kube-ipvs0\n');
  });
});

describe('delta: what the previous state holds decides', () => {
  it('a real server the previous state already has at weight 0 (quiesced earlier) is deleted if still unwanted, and set back to weight 1 if wanted again', async () => {
    const full = await fullBundle(ws, state('s1'));
    const quiesced = full['ipvs.rules']!.replace('-a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 1', '-a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 0');
    const prev = await previousOf('s1', S, { ...full, 'ipvs.rules': quiesced });
    // still wanted in s1: back to weight 1 (kube-proxy deletes and re-adds; -e is equivalent)
    expect((await deltaBundle(ws, state('s1'), prev))['ipvs.rules']).toBe(lines('-e -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 1'));
    // unwanted in s2: the quiesced one is deleted, the other is quiesced
    expect((await deltaBundle(ws, state('s2'), prev))['ipvs.rules']).toBe(lines('-e -t 192.168.1.10:30080 -r 10.244.1.5:8080 -m -w 0', '-d -t 10.96.0.20:80 -r 10.244.1.5:8080'));
  });

  it('never touches what is not kube-proxy\'s: fwmark services, the other family, --ipvs-exclude-cidrs, other sets, other chains, other addresses', async () => {
    const full = await fullBundle(ws, state('s1'));
    const prev = await previousOf('s1', S, {
      ...full,
      'ipvs.rules':
        full['ipvs.rules'] +
        lines('-A -f 100 -s rr', '-a -f 100 -r 10.0.0.1:0 -m -w 1', '-A -t [fd00::1]:80 -s rr', '-A -t 10.250.0.1:80 -s rr', '-A -u 10.96.0.99:53 -s rr', '-a -u 10.96.0.99:53 -r 10.244.9.9:53 -m -w 1'),
      'ipset.rules': full['ipset.rules'] + lines('create cali40all-hosts hash:net family inet hashsize 1024 maxelem 1048576', 'add cali40all-hosts 192.168.1.0/24', 'create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536'),
      'iptables.rules': full['iptables.rules'] + lines('*filter', ':DOCKER-USER - [0:0]', '-A DOCKER-USER -j RETURN', '-A FORWARD -j DOCKER-USER', 'COMMIT'),
      'kube-ipvs0.addrs': full['kube-ipvs0.addrs'] + lines('fd00:96::1/128'),
    });
    const d = await deltaBundle(ws, state('s1'), prev, ['--ipvs-exclude-cidrs', '10.250.0.0/16']);
    // Only the stale IPv4 virtual server outside the excluded range goes.
    expect(d['ipvs.rules']).toBe(lines('-D -u 10.96.0.99:53'));
    expect(d['ipset.rules']).toBe('');
    expect(d['iptables.rules']).toBe('');
    expect(d['apply.sh']).not.toContain('ip address del');
  });

  it('a stale set of an older kube-proxy (KUBE-LOAD-BALANCER-MASQ) is destroyed last, after the iptables rules that used it are gone', async () => {
    const full = await fullBundle(ws, state('s1'));
    const prev = await previousOf('s1', S, { ...full, 'ipset.rules': full['ipset.rules'] + lines('create KUBE-LOAD-BALANCER-MASQ hash:ip,port family inet hashsize 1024 maxelem 65536', 'add KUBE-LOAD-BALANCER-MASQ 203.0.113.1,tcp:80') });
    const d = await deltaBundle(ws, state('s1'), prev);
    expect(d['ipset.rules']).toBe(lines('destroy KUBE-LOAD-BALANCER-MASQ'));
    const script = d['apply.sh']!;
    expect(script).toContain('if ipset -q list -n KUBE-LOAD-BALANCER-MASQ >/dev/null; then ipset destroy KUBE-LOAD-BALANCER-MASQ; fi\n');
    expect(script.indexOf('ipset destroy')).toBeGreaterThan(script.indexOf('-restore -w --noflush'));
  });

  it('a kube-proxy set that exists with another type cannot be changed in place: exit 2, nothing written', async () => {
    const full = await fullBundle(ws, state('s1'));
    const prev = await previousOf('s1', S, { ...full, 'ipset.rules': full['ipset.rules'].replace('create KUBE-NODE-PORT-TCP bitmap:port range 0-65535', 'create KUBE-NODE-PORT-TCP hash:ip,port family inet hashsize 1024 maxelem 65536') });
    const out = join(ws.root, 'never');
    const r = await runKpc(['compile', ...nodeArgs('ipv4'), '-f', ws.input(state('s1')), '-R', '--previous', prev, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ipset KUBE-NODE-PORT-TCP exists as hash:ip,port family inet, kube-proxy\'s is bitmap:port');
    expect(() => readDir(out)).toThrow();
  });
});

describe('size', () => {
  it('deletes more real servers than one call takes arguments (140,000 replaced at 14,000 Services), as ipvsadm lines', () => {
    // 130,000 real servers of one virtual server, all gone: the deletes once went through push(...).
    const count = 130_000;
    const servers = Array.from({ length: count }, (_, i) => `-a -t 10.96.0.20:80 -r 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080 -m -w 1`);
    const empty = { ipsetRules: '', iptablesRules: '', addresses: '10.96.0.20/32\n' };
    const facts = new RuleFacts('IPv4');
    const prev = readNodeState({ ...empty, ipvsRules: ['-A -t 10.96.0.20:80 -s rr', ...servers, ''].join('\n') }, 'IPv4', facts);
    const next = readNodeState({ ...empty, ipvsRules: lines('-A -t 10.96.0.20:80 -s rr') }, 'IPv4', facts);
    const d = computeIpvsDelta(prev, next, empty.addresses, { full: false, removedRealServers: 'delete' });
    const deletes = d.ipvsRules.split('\n').filter((l) => l.startsWith('-d '));
    expect(deletes).toHaveLength(count);
    expect(deletes).toContain('-d -t 10.96.0.20:80 -r 10.1.0.255:8080');
  });
});

describe('readers: real tool output reads as kpc\'s own files (test/vm/fixtures/worked-example)', () => {
  const dir = join(import.meta.dirname, '..', 'vm', 'fixtures', 'worked-example');
  const read = (p: string) => readFileSync(join(dir, p), 'utf8');
  const bundle = { ipvsRules: read('input/ipvs.rules'), ipsetRules: read('input/ipset.rules'), iptablesRules: read('input/iptables.rules'), addresses: read('input/kube-ipvs0.addrs') };

  for (const backend of ['nft', 'legacy']) {
    it(`${backend}: ipvsadm-save -n, ipset save, iptables-save and ip -o addr show say the same as the files that were loaded: an empty delta`, () => {
      const dumps = { ipvsRules: read(`${backend}/ipvsadm-save.txt`), ipsetRules: read(`${backend}/ipset-save.txt`), iptablesRules: read(`${backend}/iptables-save.txt`), addresses: read(`${backend}/kube-ipvs0.txt`) };
      const facts = new RuleFacts('IPv4');
      const prev = readNodeState(dumps, 'IPv4', facts);
      const next = readNodeState(bundle, 'IPv4', facts);
      expect(renderIpvsTable(prev.ipvs)).toBe(renderIpvsTable(next.ipvs));
      const d = computeIpvsDelta(prev, next, bundle.addresses, { full: false, removedRealServers: 'quiesce' });
      expect([d.ipvsRules, d.ipsetRules, d.iptablesRules, d.addressesAdded, d.addressesRemoved]).toEqual(['', '', '', [], []]);
    });
  }

  it('unchangedIpvsDelta (the delta compile --previous gives when the new bundle\'s texts are the previous ones) is computeIpvsDelta of a state to itself', () => {
    for (const texts of [bundle, { ipvsRules: read('nft/ipvsadm-save.txt'), ipsetRules: read('nft/ipset-save.txt'), iptablesRules: read('nft/iptables-save.txt'), addresses: read('nft/kube-ipvs0.txt') }]) {
      const s = readNodeState(texts, 'IPv4', new RuleFacts('IPv4'));
      expect(s.ipvs.virtualServers.size).toBeGreaterThan(0);
      for (const removedRealServers of ['quiesce', 'delete'] as const) {
        expect(unchangedIpvsDelta(texts.addresses)).toEqual(computeIpvsDelta(s, s, texts.addresses, { full: false, removedRealServers }));
      }
    }
  });

  it('ipvsadm: defaults made explicit, long options, -p without a value, names canonical, -E/-e/-d/-D replayed', () => {
    const t = readIpvsTable(
      lines(
        '-A --tcp-service [FD00:0::0010]:443 --scheduler rr',
        '-a -t [fd00::10]:443 --real-server [fd00:244::5]:8443 --masquerading',
        '-A -t 10.0.0.1:80 -p',
        '-a -t 10.0.0.1:80 -r 10.244.0.9:9999',
        '-A -u 10.0.0.2:53 -s rr -M 255.255.255.255',
        '-a -u 10.0.0.2:53 -r 10.244.0.1:53 -m -w 3',
        '-e -u 10.0.0.2:53 -r 10.244.0.1:53 -m -w 0',
        '-E -u 10.0.0.2:53 -s wrr -p 60',
        '-a -u 10.0.0.2:53 -r 10.244.0.2:53 -m',
        '-d -u 10.0.0.2:53 -r 10.244.0.2:53',
        '-A -t 10.0.0.3:80 -s rr',
        '-D -t 10.0.0.3:80',
      ),
    );
    expect(renderIpvsTable(t)).toBe(
      lines(
        '-A -t 10.0.0.1:80 -s wlc -p 360',
        '-a -t 10.0.0.1:80 -r 10.244.0.9:80 -g -w 1',
        '-A -t [fd00::10]:443 -s rr',
        '-a -t [fd00::10]:443 -r [fd00:244::5]:8443 -m -w 1',
        '-A -u 10.0.0.2:53 -s wrr -p 60',
        '-a -u 10.0.0.2:53 -r 10.244.0.1:53 -m -w 0',
      ),
    );
  });

  it('ipvsadm: errors carry the line (port names, unknown options, -a of a missing virtual server)', () => {
    expect(described(() => readIpvsTable('-A -t 10.0.0.1:http -s rr\n'))).toMatch(/line 1: .*the port must be a number/);
    expect(described(() => readIpvsTable('-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.0.2:80 --bogus\n'))).toMatch(/line 2: unknown option "--bogus"/);
    expect(described(() => readIpvsTable('\n-a -t 10.0.0.1:80 -r 10.0.0.2:80 -m\n'))).toMatch(/line 2: real server of a virtual server that does not exist/);
  });

  it('ipset: host CIDRs without /32, implied tcp, -exist, flush, del, destroy, comments', () => {
    const s = readIpsetState(
      lines(
        '# a comment',
        'create A hash:ip,port,net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x1234abcd',
        'add A 203.0.113.10,tcp:80,198.51.100.7/32',
        'add A 203.0.113.10,tcp:80,198.51.100.7 -exist',
        'create B hash:ip,port family inet hashsize 1024 maxelem 65536 -exist',
        'add B 10.0.0.1,80',
        'create B hash:ip,port family inet hashsize 1024 maxelem 65536 -exist',
        'create C bitmap:port range 0-65535',
        'add C 30080',
        'flush C',
        'create D hash:ip family inet6',
        'add D FD00::0001',
        'del D fd00::1',
        'create E hash:ip',
        'destroy E',
      ),
    );
    expect([...s.keys()]).toEqual(['A', 'B', 'C', 'D']);
    expect([...s.get('A')!.entries.keys()]).toEqual(['203.0.113.10,tcp:80,198.51.100.7']);
    expect([...s.get('B')!.entries.keys()]).toEqual(['10.0.0.1,tcp:80']);
    expect(s.get('C')!.entries.size).toBe(0);
    expect(s.get('D')!.family).toBe('inet6');
    expect(described(() => readIpsetState('add X 1.2.3.4\n'))).toMatch(/line 1: add: no set "X"/);
  });

  it('addresses: kpc\'s list, bare addresses, ip commands, ip addr show (with and without -o); only the family\'s', () => {
    const text = lines(
      '10.96.0.10/32',
      '10.96.0.11',
      'ip addr add 10.96.0.12/32 dev kube-ipvs0',
      'address add 10.96.0.13/32 dev kube-ipvs0',
      '7: kube-ipvs0    inet 10.96.0.14/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever',
      '7: kube-ipvs0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default',
      '    link/ether 5a:1b:2c:3d:4e:5f brd ff:ff:ff:ff:ff:ff',
      '    inet 10.96.0.15/32 scope global kube-ipvs0',
      '       valid_lft forever preferred_lft forever',
      '    inet6 fd00:96::1/128 scope global',
    );
    expect([...readAddresses(text, 'IPv4').values()]).toEqual(['10.96.0.10/32', '10.96.0.11/32', '10.96.0.12/32', '10.96.0.13/32', '10.96.0.14/32', '10.96.0.15/32']);
    expect([...readAddresses(text, 'IPv6').values()]).toEqual(['fd00:96::1/128']);
    expect(described(() => readAddresses('10.96.0.300\n', 'IPv4'))).toMatch(/line 1: "10.96.0.300" is not an address/);
  });
});

describe('command line', () => {
  const compile = (args: string[]) => runKpc(['compile', ...nodeArgs('ipv4'), ...args]);

  it('--previous accepts the inline apply.sh kpc prints without -o, and gives the same delta as the directory', async () => {
    const inline = join(ws.root, 'inline-s1.sh');
    const r = await compile(['-f', ws.input(state('s1')), '-R', '-o', join(ws.root, 'dir-s1')]);
    expect(r.code).toBe(0);
    const printed = await compile(['-f', ws.input(state('s1')), '-R']);
    writeDir(ws.root, { 'inline-s1.sh': printed.stdout });
    const viaScript = await compile(['-f', ws.input(state('s2')), '-R', '--previous', inline]);
    const viaDir = await compile(['-f', ws.input(state('s2')), '-R', '--previous', join(ws.root, 'dir-s1')]);
    expect(viaScript.code).toBe(0);
    expect(viaScript.stdout).toBe(viaDir.stdout);
    // without -o the delta is one script with the parts inline
    expect(viaScript.stdout).toContain("cat > \"$dir/ipvs.rules\" <<'KPC_END_OF_IPVS_RULES'\n-e -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 0\n");
    expect(viaScript.stdout).toContain('# kpc-bundle: delta\n');
  });

  it('refuses a delta bundle, a directory without the bundle files, and a file that is not kpc\'s apply.sh (exit 2)', async () => {
    const delta = join(ws.root, 'delta-as-prev');
    expect((await compile(['-f', ws.input(state('s2')), '-R', '--previous', await previousOf('s1'), '-o', delta])).code).toBe(0);
    const r1 = await compile(['-f', ws.input(state('s3')), '-R', '--previous', delta]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain('is a delta bundle');
    const empty = writeDir(join(ws.root, 'empty-prev'), { 'ipvs.rules': '' });
    const r2 = await compile(['-f', ws.input(state('s3')), '-R', '--previous', empty]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('has no ipset.rules, iptables.rules, kube-ipvs0.addrs');
    expect(r2.stderr).toContain('ipvsadm-save -n > DIR/ipvs.rules');
    const r3 = await compile(['-f', ws.input(state('s3')), '-R', '--previous', join(empty, 'ipvs.rules')]);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toContain('is neither a directory nor an apply.sh that kpc printed');
  });

  it('a bad line in the previous state is exit 2 with FILE:LINE', async () => {
    const full = await fullBundle(ws, state('s1'));
    const prev = await previousOf('s1', S, { ...full, 'ipvs.rules': full['ipvs.rules'] + '-a -t 10.96.0.20:80 -r nonsense -m -w 1\n' });
    const r = await compile(['-f', ws.input(state('s2')), '-R', '--previous', prev]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ipvs\.rules:13: real server "nonsense" is not ADDRESS:PORT/);
  });

  it('--ipvs-removed-real-servers: only with --previous, only in ipvs mode, only quiesce|delete', async () => {
    const input = ws.input(state('s1'));
    const r1 = await compile(['-f', input, '-R', '--ipvs-removed-real-servers', 'delete']);
    expect([r1.code, r1.stderr]).toEqual([2, 'error: --ipvs-removed-real-servers goes with --previous\n']);
    const r2 = await runKpc(['compile', '--hostname-override', 'node-a', '--node-ip', '192.168.1.10', '-f', input, '-R', '--ipvs-removed-real-servers', 'delete']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('--ipvs-removed-real-servers goes with --proxy-mode ipvs');
    const r3 = await compile(['-f', input, '-R', '--previous', await previousOf('s0'), '--ipvs-removed-real-servers', 'drain']);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toContain("argument 'drain' is invalid");
  });

  it('compile --help describes the ipvs delta bundle and the flag', async () => {
    const r = await runKpc(['compile', '--help']);
    expect(r.stdout).toContain('--ipvs-removed-real-servers <policy>');
    expect(r.stdout).toContain('kube-ipvs0.addrs  the full wanted address list; apply.sh adds and removes the difference');
  });
});

describe('kpc diff --proxy-mode ipvs', () => {
  const diff = (name: string, prev: string, extra: string[] = []) => runKpc(['diff', ...nodeArgs('ipv4'), ...(state(name).args ?? []), '-f', ws.input(state(name)), '-R', '--previous', prev, ...extra]);

  it('same state: "no differences", exit 0', async () => {
    const r = await diff('s2', await previousOf('s2'));
    expect([r.code, r.stdout]).toEqual([0, 'no differences\n']);
  });

  it('an endpoint removed: grouped under its Service port, exit 1; -o json', async () => {
    const prev = await previousOf('s1');
    const r = await diff('s2', prev);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      lines(
        'default/web:http',
        '  - real server 10.244.1.5:8080 of 10.96.0.20:80/TCP',
        '  - real server 10.244.1.5:8080 of 192.168.1.10:30080/TCP',
        '  - entry 10.244.1.5,tcp:8080,10.244.1.5 in KUBE-LOOP-BACK',
      ),
    );
    const j = await diff('s2', prev, ['-o', 'json']);
    expect(j.code).toBe(1);
    const report = JSON.parse(j.stdout) as { changed: boolean; groups: { servicePort: string; realServersRemoved: unknown[]; setEntriesRemoved: unknown[] }[] };
    expect(report.changed).toBe(true);
    expect(report.groups.map((g) => g.servicePort)).toEqual(['default/web:http']);
    expect(report.groups[0]!.realServersRemoved).toEqual([
      { virtualServer: '10.96.0.20:80/TCP', realServer: '10.244.1.5:8080' },
      { virtualServer: '192.168.1.10:30080/TCP', realServer: '10.244.1.5:8080' },
    ]);
    expect(report.groups[0]!.setEntriesRemoved).toEqual([{ set: 'KUBE-LOOP-BACK', entry: '10.244.1.5,tcp:8080,10.244.1.5' }]);
  });

  it('a Service deleted and another changed: the changed one by name, the deleted one as "gone", addresses and chains node-wide', async () => {
    const r = await diff('s4', await previousOf('s3'));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      lines(
        'default/web:http',
        '  ~ virtual server 10.96.0.20:80/TCP: -s rr -> -s rr -p 600',
        '  ~ virtual server 192.168.1.10:30080/TCP: -s rr -> -s rr -p 600',
        'gone (no Service port of the input has these)',
        '  - virtual server 10.96.0.30:443/TCP',
        '  - virtual server 192.168.1.10:30443/TCP',
        '  - virtual server 198.51.100.20:443/TCP',
        '  - virtual server 203.0.113.10:443/TCP',
        '  - real server 10.244.3.9:8080 of 10.96.0.30:443/TCP',
        '  - real server 10.244.3.9:8080 of 192.168.1.10:30443/TCP',
        '  - real server 10.244.3.9:8080 of 198.51.100.20:443/TCP',
        '  - real server 10.244.3.9:8080 of 203.0.113.10:443/TCP',
        '  - entry 10.96.0.30,tcp:443 in KUBE-CLUSTER-IP',
        '  - entry 198.51.100.20,tcp:443 in KUBE-EXTERNAL-IP',
        '  - entry 203.0.113.10,tcp:443 in KUBE-LOAD-BALANCER',
        '  - entry 30443 in KUBE-NODE-PORT-TCP',
        'node-wide',
        '  - entry 10.96.0.30 in KUBE-IPVS-IPS',
        '  - entry 198.51.100.20 in KUBE-IPVS-IPS',
        '  - entry 203.0.113.10 in KUBE-IPVS-IPS',
        '  - address 10.96.0.30/32 on kube-ipvs0',
        '  - address 198.51.100.20/32 on kube-ipvs0',
        '  - address 203.0.113.10/32 on kube-ipvs0',
        '  ~ chain nat/KUBE-SERVICES',
        '      - -m comment --comment "Kubernetes service lb portal" -m set --match-set KUBE-LOAD-BALANCER dst,dst -j KUBE-LOAD-BALANCER',
        '      - -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -j KUBE-MARK-MASQ',
        '      - -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT',
        '      - -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m addrtype --dst-type LOCAL -j ACCEPT',
        '      - -m set --match-set KUBE-LOAD-BALANCER dst,dst -j ACCEPT',
      ),
    );
  });

  it('a Service added, and a pod removed from a UDP+TCP Service: entries by Service port (KUBE-LOOP-BACK through the real server they name)', async () => {
    const added = await diff('s3', await previousOf('s2'));
    expect(added.stdout.split('\n').slice(0, 13)).toEqual([
      'default/api:https',
      '  + virtual server 10.96.0.30:443/TCP',
      '  + virtual server 192.168.1.10:30443/TCP',
      '  + virtual server 198.51.100.20:443/TCP',
      '  + virtual server 203.0.113.10:443/TCP',
      '  + real server 10.244.3.9:8080 of 10.96.0.30:443/TCP',
      '  + real server 10.244.3.9:8080 of 192.168.1.10:30443/TCP',
      '  + real server 10.244.3.9:8080 of 198.51.100.20:443/TCP',
      '  + real server 10.244.3.9:8080 of 203.0.113.10:443/TCP',
      '  + entry 10.96.0.30,tcp:443 in KUBE-CLUSTER-IP',
      '  + entry 198.51.100.20,tcp:443 in KUBE-EXTERNAL-IP',
      '  + entry 203.0.113.10,tcp:443 in KUBE-LOAD-BALANCER',
      '  + entry 30443 in KUBE-NODE-PORT-TCP',
    ]);
    const removed = await diff('s5', await previousOf('s4'));
    expect(removed.stdout).toContain(lines('kube-system/kube-dns:dns', '  ~ virtual server 10.96.0.10:53/UDP: -s rr -> -s wrr', '  - real server 10.244.1.3:53 of 10.96.0.10:53/UDP', '  - entry 10.244.1.3,udp:53,10.244.1.3 in KUBE-LOOP-BACK'));
    expect(removed.stdout).toContain(lines('kube-system/kube-dns:dns-tcp', '  ~ virtual server 10.96.0.10:53/TCP: -s rr -> -s wrr', '  - real server 10.244.1.3:53 of 10.96.0.10:53/TCP', '  - entry 10.244.1.3,tcp:53,10.244.1.3 in KUBE-LOOP-BACK'));
  });

  it('a real server at weight 0 that is wanted again shows as changed', async () => {
    const full = await fullBundle(ws, state('s1'));
    const prev = await previousOf('s1', S, { ...full, 'ipvs.rules': full['ipvs.rules']!.replace('-a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 1', '-a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 0') });
    const r = await diff('s1', prev);
    expect(r.stdout).toBe(lines('default/web:http', '  ~ real server 10.244.1.5:8080 of 10.96.0.20:80/TCP: -m -w 0 -> -m -w 1'));
  });
});

describe('kpc check --proxy-mode ipvs', () => {
  const check = (name: string, golden: string, extra: string[] = []) => runKpc(['check', ...nodeArgs('ipv4'), ...extra, '-f', ws.input(state(name)), '-R', '--golden', golden]);

  it('a bundle directory: identical → exit 0, nothing printed', async () => {
    const golden = await previousOf('s2');
    const r = await check('s2', golden);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
  });

  it('drift: one unified diff per file that differs, exit 1', async () => {
    const golden = await previousOf('s1');
    const r = await check('s2', golden);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`drift: ${golden} differs from what kpc compiles (ipvs.rules, ipset.rules)\n`);
    expect(r.stdout).toContain(`--- ${join(golden, 'ipvs.rules')}\n+++ kpc compile (ipvs.rules)\n`);
    expect(r.stdout).toContain('--a -t 10.96.0.20:80 -r 10.244.1.5:8080 -m -w 1\n');
    expect(r.stdout).toContain(`--- ${join(golden, 'ipset.rules')}\n+++ kpc compile (ipset.rules)\n`);
    expect(r.stdout).toContain('-add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5\n');
    expect(r.stdout).not.toContain('iptables.rules');
  });

  it('a missing file is reported and compared as empty; --standalone compares the standalone bundle', async () => {
    const { 'apply.sh': _drop, ...rest } = await fullBundle(ws, state('s2'));
    const golden = await previousOf('s2', S, rest);
    const r = await check('s2', golden);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`note: ${join(golden, 'apply.sh')} is missing: compared as empty\n`);
    const standalone = await previousOf('s2', S, await fullBundle(ws, state('s2'), ['--standalone']));
    expect((await check('s2', standalone, ['--standalone'])).code).toBe(0);
    expect((await check('s2', standalone)).code).toBe(1);
  });

  it('a file: the inline apply.sh', async () => {
    const printed = await runKpc(['compile', ...nodeArgs('ipv4'), '-f', ws.input(state('s2')), '-R']);
    writeDir(join(ws.root, 'inline-golden'), { 'apply.sh': printed.stdout });
    expect((await check('s2', join(ws.root, 'inline-golden', 'apply.sh'))).code).toBe(0);
    const r = await check('s3', join(ws.root, 'inline-golden', 'apply.sh'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('+add KUBE-CLUSTER-IP 10.96.0.30,tcp:443\n');
  });
});

/** The error `work` throws, as kpc tells it (`line N: ...` for a reader's error). */
function described(work: () => unknown): string {
  try {
    work();
  } catch (e) {
    return e instanceof KpcError ? e.describe() : String(e);
  }
  return 'no error';
}

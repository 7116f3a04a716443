/**
 * Smoke test of the real-kernel VM harness (vm.ts), with HAND-WRITTEN files, in ONE boot:
 *
 *  1. "smoke": an apply.sh loads one ipset (hash:ip,port, two entries), kube-ipvs0 with one
 *     address, two rr virtual servers (ClusterIP 10.96.0.10:80 and NodePort 192.168.0.10:30080)
 *     with two masq real servers each, and a few kube-proxy-shaped iptables rules (-m set,
 *     -m comment, -m addrtype, -m conntrack, MARK, MASQUERADE). Every read-back must equal the
 *     input after normalisation, and a client namespace must reach BOTH pods through the
 *     ClusterIP and the NodePort, masqueraded (the pods see the node, 169.254.1.1).
 *  2. "fresh-node": the next case starts from an empty node (nothing of case 1 is left), an
 *     IPv6 service round-trips, and a broken line makes apply fail with ipvsadm's message.
 *
 * Skipped loudly when qemu or the image cannot be had (see describeVM); fails under CI=true.
 * Run alone: npx vitest run test/vm
 */
import { expect, it } from 'vitest';
import { normaliseAddrs, normaliseIpset, normaliseIptables, normaliseIpvs } from './normalise.js';
import { describeVM, probeAnswers, runVM, vmRequirements, type VmCase, type VmRun } from './vm.js';

const req = await vmRequirements();

const IPVS_RULES = `-A -t 10.96.0.10:80 -s rr
-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1
-a -t 10.96.0.10:80 -r 10.244.2.7:8080 -m -w 1
-A -t 192.168.0.10:30080 -s rr
-a -t 192.168.0.10:30080 -r 10.244.1.5:8080 -m -w 1
-a -t 192.168.0.10:30080 -r 10.244.2.7:8080 -m -w 1
`;

const IPSET_RULES = `create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
add KUBE-CLUSTER-IP 10.96.0.10,tcp:80
add KUBE-CLUSTER-IP 10.96.0.10,udp:53
`;

const IPTABLES_RULES = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
-A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -p tcp --dport 30080 -j KUBE-MARK-MASQ
-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
COMMIT
*filter
:KUBE-FORWARD - [0:0]
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
-A KUBE-FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
COMMIT
`;

/** The jumps apply.sh adds with `iptables -I` (as kube-proxy's "ensure rule" does). */
const JUMPS = `*nat
-I PREROUTING -j KUBE-SERVICES
-I OUTPUT -j KUBE-SERVICES
-I POSTROUTING -j KUBE-POSTROUTING
COMMIT
*filter
-I FORWARD -j KUBE-FORWARD
COMMIT
`;

const APPLY_SH = `#!/bin/sh
# hand-written stand-in for kpc's apply.sh (POSIX sh: /bin/sh is dash in the guest, as on Debian)
set -eu
cd "$(dirname "$0")"
ip link show kube-ipvs0 >/dev/null 2>&1 || ip link add kube-ipvs0 type dummy
ipset restore -exist < ipset.rules
while read -r a; do ip addr replace "$a" dev kube-ipvs0; done < kube-ipvs0.addrs
ipvsadm -R < ipvs.rules
iptables-restore --noflush < iptables.rules
iptables -t nat -C PREROUTING -j KUBE-SERVICES 2>/dev/null || iptables -t nat -I PREROUTING -j KUBE-SERVICES
iptables -t nat -C OUTPUT -j KUBE-SERVICES 2>/dev/null || iptables -t nat -I OUTPUT -j KUBE-SERVICES
iptables -t nat -C POSTROUTING -j KUBE-POSTROUTING 2>/dev/null || iptables -t nat -I POSTROUTING -j KUBE-POSTROUTING
iptables -t filter -C FORWARD -j KUBE-FORWARD 2>/dev/null || iptables -t filter -I FORWARD -j KUBE-FORWARD
`;

const SMOKE: VmCase = {
  name: 'smoke',
  files: {
    'apply.sh': APPLY_SH,
    'ipvs.rules': IPVS_RULES,
    'ipset.rules': IPSET_RULES,
    'iptables.rules': IPTABLES_RULES,
    'kube-ipvs0.addrs': '10.96.0.10/32\n',
  },
  nodeIPs: ['192.168.0.10'],
  netns: [
    { name: 'pod-a', ips: ['10.244.1.5'], tcp: [8080], peer: true },
    { name: 'pod-b', ips: ['10.244.2.7'], tcp: [8080], peer: true },
    { name: 'client', ips: ['192.168.0.100'] },
  ],
  probes: [
    { name: 'cluster-ip', from: 'client', target: '10.96.0.10:80', count: 4 },
    { name: 'node-port', from: 'client', target: '192.168.0.10:30080', count: 2 },
    { name: 'closed-port', from: 'client', target: '10.96.0.10:81', waitSec: 1 },
  ],
};

const V6_RULES = `-A -t [fd00:10:96::a]:443 -s rr
-a -t [fd00:10:96::a]:443 -r [fd00:10:244::5]:8443 -m -w 1
`;

const FRESH: VmCase = {
  name: 'fresh-node',
  files: { 'v6.rules': V6_RULES, 'bad.rules': '-a -t 10.96.0.99:80 -r 10.244.1.5:8080 -m -w 1\n' },
  apply: 'ipvsadm -R < bad.rules',
  script: 'kpc_dump before; ipvsadm -R < v6.rules',
};

describeVM('real-kernel VM harness (qemu, Debian cloud kernel)', req, () => {
  let run: VmRun;

  it('boots once and runs both cases', { timeout: 180_000 }, async () => {
    run = await runVM([SMOKE, FRESH]);
    const info = req.image!.info;
    console.log(
      `[vm] kernel ${run.kernel} (${run.accel}), image prepared/checked in ${req.image!.prepareMs} ms` +
        ` (cold build: ${info.BUILD_SECONDS ?? '?'} s); qemu wall ${run.wallMs} ms, guest ready at ${run.readySec} s, done at ${run.doneSec} s;` +
        ` cases: ${run.results.map((r) => `${r.name} ${r.seconds} s`).join(', ')}`,
    );
    for (const r of run.results) expect(r.error, `${r.name}: ${r.error}\n${r.log ?? ''}`).toBeUndefined();
    if (process.env.KPC_VM_VERBOSE) for (const r of run.results) console.log(`[vm] ${r.name}:\n${r.log}`);
  });

  it('reads back what apply.sh loaded (ipvs, ipset, iptables, kube-ipvs0)', () => {
    const o = run.results[0]!.outputs;
    expect(o.apply, JSON.stringify(o.apply)).toEqual({ code: 0, stdout: '', stderr: '' });
    // ipvsadm -S sorts; 192.168.0.10 comes before 10.96.0.10 (libipvs compares int32(a - b))
    expect(o['ipvsadm-save']!.stdout.split('\n')[0]).toBe('-A -t 192.168.0.10:30080 -s rr');
    expect(normaliseIpvs(o['ipvsadm-save']!.stdout)).toBe(normaliseIpvs(IPVS_RULES));
    expect(o['ipset-save']!.stdout).toMatch(/^create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x[0-9a-f]+$/m);
    expect(normaliseIpset(o['ipset-save']!.stdout)).toBe(normaliseIpset(IPSET_RULES));
    expect(normaliseIptables(o['iptables-save']!.stdout)).toBe(normaliseIptables(IPTABLES_RULES + JUMPS));
    expect(o['iptables-save']!.stdout).toContain('(nf_tables)');
    expect(o['ip6tables-save']!.stdout).toBe('');
    expect(normaliseAddrs(o['kube-ipvs0']!.stdout)).toBe(normaliseAddrs('10.96.0.10/32\n'));
  });

  it('routes client traffic through the ClusterIP and the NodePort to both pods, masqueraded', () => {
    const o = run.results[0]!.outputs;
    const cip = probeAnswers(o['probe:cluster-ip']);
    expect(o['probe:cluster-ip']!.code, JSON.stringify(o['probe:cluster-ip'])).toBe(0);
    expect(cip).toHaveLength(4);
    // rr: both pods answer, and each saw the node (169.254.1.1), not the client (192.168.0.100)
    expect(new Set(cip)).toEqual(new Set(['pod-a 169.254.1.1', 'pod-b 169.254.1.1']));
    const np = probeAnswers(o['probe:node-port']);
    expect(new Set(np)).toEqual(new Set(['pod-a 169.254.1.1', 'pod-b 169.254.1.1']));
    // a port with no virtual server is refused
    expect(o['probe:closed-port']!.code).toBe(1);
    expect(probeAnswers(o['probe:closed-port'])[0]).toMatch(/^!fail rc=/);
  });

  it('gives every case a fresh node, and reports a failing apply', () => {
    const o = run.results[1]!.outputs;
    expect(o.apply!.code).not.toBe(0);
    expect(o.apply!.stderr).toMatch(/Service not defined|No such service/i);
    // kpc_dump before: nothing of case 1 (no services, sets, rules, kube-ipvs0)
    expect(o['ipvsadm-save@before']!.stdout).toBe('');
    expect(o['ipset-save@before']!.stdout).toBe('');
    expect(o['iptables-save@before']!.stdout).toBe('');
    expect(o['kube-ipvs0@before']!.code).not.toBe(0);
    expect(o.script!.code).toBe(0);
    expect(normaliseIpvs(o['ipvsadm-save']!.stdout)).toBe(normaliseIpvs(V6_RULES));
  });
});

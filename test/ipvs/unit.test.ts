/**
 * Unit tests of the IPVS emitter's parts: orders, names, guards, knobs.
 */

import { describe, expect, it } from 'vitest';
import { emitIpvs, IPSET_INFO, setName } from '../../src/emit/ipvs/index.js';
import { glibcMergeSort } from '../../src/emit/ipvs/order.js';
import { sortRealServers, sortVirtualServers } from '../../src/emit/ipvs/ipvsadm.js';
import { fixedComment, safeIP, safeSetEntry, unsafeOutput } from '../../src/emit/ipvs/safe-text.js';
import type { VirtualServer } from '../../src/emit/ipvs/state.js';
import { parseDurationSeconds, resolveSettings } from '../../src/config/settings.js';
import { configOf } from '../../src/cli/pipeline.js';
import type { KnobFlags } from '../../src/config/flags.js';
import { contextFor } from '../../src/ir/context.js';
import type { ProxyIR, ServicePort } from '../../src/ir/model.js';

const vs = (ip: string, port = 80, protocol: VirtualServer['protocol'] = 'TCP'): VirtualServer => ({ ip, port, protocol, scheduler: 'rr', realServers: [], spn: 'ns/x', kind: 'cluster-ip' });

describe('glibcMergeSort', () => {
  it('sorts like Array.prototype.sort for a consistent comparator, stably', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 1000);
    for (let n = 0; n < 60; n++) {
      const items = Array.from({ length: n }, (_, i) => ({ k: rand() % 17, i }));
      const cmp = (a: { k: number }, b: { k: number }) => a.k - b.k;
      expect(glibcMergeSort(items, cmp)).toEqual([...items].sort(cmp));
    }
  });
});

describe('ipvsadm -S order', () => {
  it('compares addresses as C int differences: 192.168.x before 10.96.x, 172.16.x first of three', () => {
    expect(sortVirtualServers([vs('10.96.0.10'), vs('192.168.1.10', 30080)], 'IPv4').map((v) => v.ip)).toEqual(['192.168.1.10', '10.96.0.10']);
    expect(sortVirtualServers([vs('10.96.0.20'), vs('192.168.1.10'), vs('172.16.0.5')], 'IPv4').map((v) => v.ip)).toEqual(['172.16.0.5', '192.168.1.10', '10.96.0.20']);
  });

  it('orders by protocol number first, then address, then port', () => {
    const out = sortVirtualServers([vs('10.0.0.1', 9, 'SCTP'), vs('10.0.0.1', 53, 'UDP'), vs('10.0.0.2', 53), vs('10.0.0.1', 80), vs('10.0.0.1', 53)], 'IPv4');
    expect(out.map((v) => `${v.protocol} ${v.ip}:${v.port}`)).toEqual(['TCP 10.0.0.1:53', 'TCP 10.0.0.1:80', 'TCP 10.0.0.2:53', 'UDP 10.0.0.1:53', 'SCTP 10.0.0.1:9']);
  });

  it('compares IPv6 word by word with the same wrap-around', () => {
    expect(sortVirtualServers([vs('2001:db8::1'), vs('fd00::1'), vs('2001:db8:1::1')], 'IPv6').map((v) => v.ip)).toEqual(['fd00::1', '2001:db8::1', '2001:db8:1::1']);
  });

  it('gives one answer whatever the input order, even when the comparison is not transitive', () => {
    // 1.x, 100.x, 200.x: each pair is less than 2^31 apart going round the circle.
    const list = [vs('1.0.0.1'), vs('100.0.0.1'), vs('200.0.0.1')];
    const a = sortVirtualServers(list, 'IPv4').map((v) => v.ip);
    expect(sortVirtualServers([...list].reverse(), 'IPv4').map((v) => v.ip)).toEqual(a);
  });

  it('orders real servers the same way', () => {
    const rs = (ip: string, port: number) => ({ ip, port, address: `${ip}:${port}` });
    expect(sortRealServers([rs('10.244.2.7', 8080), rs('192.168.1.20', 8080), rs('10.244.2.7', 80)]).map((r) => r.address)).toEqual(['192.168.1.20:8080', '10.244.2.7:80', '10.244.2.7:8080']);
  });
});

describe('ipset names', () => {
  it('IPv6 names: KUBE-6- prefix, at most 31 characters; two are cut', () => {
    const names = IPSET_INFO.map((i) => setName(i.key, 'IPv6'));
    expect(names).toContain('KUBE-6-LOAD-BALANCER-SOURCE-CID');
    expect(names).toContain('KUBE-6-NODE-PORT-LOCAL-SCTP-HAS');
    for (const n of names) expect(n.length).toBeLessThanOrEqual(31);
    expect(IPSET_INFO.map((i) => setName(i.key, 'IPv4'))).toEqual(IPSET_INFO.map((i) => i.key));
    expect(IPSET_INFO).toHaveLength(17);
  });
});

describe('output guards', () => {
  it('rejects what must never reach a rule file', () => {
    expect(() => safeIP('10.0.0.1\n-A', 'IPv4')).toThrow(/refusing to write unsafe/);
    expect(() => safeIP('010.0.0.1', 'IPv4')).toThrow(/refusing to write unsafe/);
    expect(() => safeIP('fd00::1', 'IPv4')).toThrow(/refusing to write unsafe/);
    expect(() => safeSetEntry('10.0.0.1,tcp:80 -exist')).toThrow(/refusing to write unsafe/);
    expect(() => fixedComment('a "quoted" text')).toThrow(/refusing to write unsafe/);
    expect(fixedComment("nodeport SCTP port with type 'hash ip:port'")).toBe(`"nodeport SCTP port with type 'hash ip:port'"`);
  });

  it('an IR value that is not canonical stops the emitter instead of reaching the output', () => {
    const flags = { hostnameOverride: 'node-a', proxyMode: 'ipvs' };
    const ctx = contextFor(resolveSettings(configOf(flags), flags, []).proxy, 'IPv4');
    const sp: ServicePort = {
      namespace: 'ns', name: 'svc', portName: 'p', protocol: 'TCP', spn: 'ns/svc:p', clusterIP: '10.0.0.1\n*nat', port: 80, nodePort: 0,
      externalIPs: [], loadBalancerVIPs: [], loadBalancerSourceRanges: [], externalPolicyLocal: false, internalPolicyLocal: false, healthCheckNodePort: 0, endpoints: [],
    };
    const ir: ProxyIR = { family: 'IPv4', node: ctx.node, knobs: ctx.knobs, servicePorts: [sp] };
    expect(() => emitIpvs(ir, { standalone: false })).toThrow(/refusing to write unsafe/);
  });
});

describe('IPVS knobs', () => {
  it('parses Go durations to whole seconds', () => {
    expect(parseDurationSeconds('f', '0')).toBe(0);
    expect(parseDurationSeconds('f', '0s')).toBe(0);
    expect(parseDurationSeconds('f', '15m')).toBe(900);
    expect(parseDurationSeconds('f', '2m0s')).toBe(120);
    expect(parseDurationSeconds('f', '1h30m')).toBe(5400);
    expect(parseDurationSeconds('f', '1.5s')).toBe(1);
    expect(parseDurationSeconds('f', '500ms')).toBe(0);
    for (const bad of ['', 'abc', '-5s', '5', '5x', 's']) expect(() => parseDurationSeconds('f', bad)).toThrow();
  });

  it('resolves scheduler, timeouts, strict ARP and exclude CIDRs from flags and config', () => {
    const settings = (flags: KnobFlags, doc?: object) => resolveSettings(configOf(flags, doc && { apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', ...doc }), flags, []);
    const fromFlags = settings({ hostnameOverride: 'n', proxyMode: 'ipvs', ipvsScheduler: 'mh', ipvsTcpTimeout: '900s', ipvsStrictArp: true, ipvsExcludeCidrs: '10.0.0.0/8,fd00::/64' }).proxy;
    expect(fromFlags).toMatchObject({ ipvsScheduler: 'mh', ipvsTCPTimeout: 900, ipvsTCPFinTimeout: 0, ipvsUDPTimeout: 0, ipvsStrictARP: true, ipvsExcludeCIDRs: ['10.0.0.0/8', 'fd00::/64'] });
    const fromConfig = settings({ hostnameOverride: 'n' }, { mode: 'ipvs', ipvs: { scheduler: '', tcpFinTimeout: '2m0s', udpTimeout: '5m0s', excludeCIDRs: ['192.0.2.0/24'] } }).proxy;
    expect(fromConfig).toMatchObject({ ipvsScheduler: 'rr', ipvsTCPFinTimeout: 120, ipvsUDPTimeout: 300, ipvsExcludeCIDRs: ['192.0.2.0/24'] });
    const ctx4 = contextFor(fromFlags, 'IPv4');
    const ctx6 = contextFor(fromFlags, 'IPv6');
    expect(ctx4.knobs.ipvs.excludeCIDRs).toEqual(['10.0.0.0/8']);
    expect(ctx6.knobs.ipvs.excludeCIDRs).toEqual(['fd00::/64']);
  });

  it('rejects an unknown scheduler and a bad exclude CIDR in ipvs mode only', () => {
    const settings = (flags: KnobFlags) => resolveSettings(configOf(flags), flags, []);
    expect(() => settings({ hostnameOverride: 'n', proxyMode: 'ipvs', ipvsScheduler: 'fastest' })).toThrow(/--ipvs-scheduler/);
    expect(() => settings({ hostnameOverride: 'n', proxyMode: 'ipvs', ipvsExcludeCidrs: '10.0.0.0' })).toThrow(/--ipvs-exclude-cidrs/);
    expect(settings({ hostnameOverride: 'n', proxyMode: 'iptables', ipvsScheduler: 'fastest' }).proxy.ipvsScheduler).toBe('fastest');
  });
});

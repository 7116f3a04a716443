import { describe, expect, it } from 'vitest';
import { decodeProxyConfig, type ProxyConfigResult } from '../../../src/parser/k8s/proxy-config.js';
import { formatGoDuration, parseGoDuration } from '../../../src/parser/k8s/proxy-config/duration.js';
import { isValidPortRange } from '../../../src/parser/k8s/proxy-config/validate.js';
import { render, type Raw } from './helpers.js';

const V1 = 'kubeproxy.config.k8s.io/v1alpha1';

function config(fields: Raw = {}, apiVersion = V1): Raw {
  return { apiVersion, kind: 'KubeProxyConfiguration', ...fields };
}

function errors(r: ProxyConfigResult): string[] {
  return r.status === 'invalid' ? render(r.errors) : [];
}

function okConfig(r: ProxyConfigResult) {
  if (r.status !== 'ok') throw new Error(render(r.errors).join('\n'));
  return r.config;
}

describe('decodeProxyConfig: defaults', () => {
  it('an empty v1alpha1 file gets kube-proxy defaults', () => {
    expect(okConfig(decodeProxyConfig(config()))).toEqual({
      apiVersion: V1,
      release: '1.37',
      hostnameOverride: '',
      serviceProxyName: '',
      mode: 'iptables',
      clusterCIDR: '',
      detectLocalMode: 'ClusterCIDR',
      detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
      nodePortAddresses: [],
      iptables: { masqueradeBit: 14, masqueradeAll: false, localhostNodePorts: true },
      linux: { masqueradeAll: false },
      ipvs: { scheduler: 'rr', strictARP: false, excludeCIDRs: [], tcpTimeout: '0s', tcpFinTimeout: '0s', udpTimeout: '0s' },
      nftables: { masqueradeBit: 14 },
      conntrack: {
        maxPerCore: 32768,
        min: 131072,
        tcpEstablishedTimeout: '24h0m0s',
        tcpCloseWaitTimeout: '1h0m0s',
        tcpBeLiberal: false,
        udpTimeout: '0s',
        udpStreamTimeout: '0s',
      },
      syncPeriod: '30s',
      minSyncPeriod: '1s',
      configSyncPeriod: '15m0s',
      featureGates: {},
    });
  });

  it('reads the settings kpc uses', () => {
    const c = okConfig(
      decodeProxyConfig(
        config({
          hostnameOverride: 'node-a',
          mode: 'ipvs',
          clusterCIDR: '10.244.0.0/16,fd00:10:244::/56',
          detectLocalMode: 'InterfaceNamePrefix',
          detectLocal: { interfaceNamePrefix: 'veth' },
          nodePortAddresses: ['primary'],
          iptables: { masqueradeAll: true, masqueradeBit: 12, localhostNodePorts: false },
          ipvs: { scheduler: 'lc', strictARP: true, excludeCIDRs: ['10.0.0.0/8'], tcpTimeout: '900s', syncPeriod: '10s', minSyncPeriod: '2s' },
          conntrack: { tcpBeLiberal: true, maxPerCore: 0 },
          featureGates: { PreferSameTrafficDistribution: true },
        }),
      ),
    );
    expect(c.mode).toBe('ipvs');
    expect(c.clusterCIDR).toBe('10.244.0.0/16,fd00:10:244::/56');
    expect(c.detectLocal.interfaceNamePrefix).toBe('veth');
    expect(c.iptables).toEqual({ masqueradeBit: 12, masqueradeAll: true, localhostNodePorts: false });
    expect(c.linux.masqueradeAll).toBe(true);
    expect(c.ipvs).toEqual({ scheduler: 'lc', strictARP: true, excludeCIDRs: ['10.0.0.0/8'], tcpTimeout: '15m0s', tcpFinTimeout: '0s', udpTimeout: '0s' });
    // In ipvs mode the sync periods come from the ipvs section.
    expect([c.syncPeriod, c.minSyncPeriod]).toEqual(['10s', '2s']);
    expect(c.conntrack.tcpBeLiberal).toBe(true);
    expect(c.conntrack.maxPerCore).toBe(0);
    expect(c.featureGates).toEqual({ PreferSameTrafficDistribution: true });
  });

  it('an explicit minSyncPeriod of 0 is defaulted to 1s, as upstream defaulting does', () => {
    expect(okConfig(decodeProxyConfig(config({ iptables: { minSyncPeriod: '0s' } }))).minSyncPeriod).toBe('1s');
  });

  it('in nftables mode masqueradeAll comes from the nftables section', () => {
    const c = okConfig(decodeProxyConfig(config({ mode: 'nftables', nftables: { masqueradeAll: true }, iptables: { masqueradeAll: false } })));
    expect(c.linux.masqueradeAll).toBe(true);
  });

  it('accepts the fields kube-proxy writes in its own round-trip output', () => {
    const r = decodeProxyConfig(
      config({
        bindAddress: '0.0.0.0',
        bindAddressHardFail: false,
        clientConnection: { acceptContentTypes: '', burst: 10, contentType: 'application/vnd.kubernetes.protobuf', kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf', qps: 5 },
        configSyncPeriod: '15m0s',
        conntrack: { maxPerCore: 32768, min: 131072, tcpCloseWaitTimeout: '1h0m0s', tcpEstablishedTimeout: '24h0m0s' },
        detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
        enableProfiling: false,
        healthzBindAddress: '0.0.0.0:10256',
        ipvs: { excludeCIDRs: null, minSyncPeriod: '0s', scheduler: '', strictARP: false, syncPeriod: '30s', tcpFinTimeout: '0s', tcpTimeout: '0s', udpTimeout: '0s' },
        logging: { flushFrequency: 0, options: { json: { infoBufferSize: '0' } }, verbosity: 0 },
        metricsBindAddress: '127.0.0.1:10249',
        nodePortAddresses: null,
        oomScoreAdj: -999,
        portRange: '',
        showHiddenMetricsForVersion: '',
        winkernel: { enableDSR: false, forwardHealthCheckVip: false, networkName: '', rootHnsEndpointName: '', sourceVip: '' },
      }),
    );
    expect(errors(r)).toEqual([]);
    expect(r.status === 'ok' && r.warnings).toEqual([]);
  });
});

describe('decodeProxyConfig: decoding', () => {
  it('unknown v1alpha1 fields are warnings: kube-proxy falls back to lenient decoding', () => {
    const r = decodeProxyConfig(config({ iptables: { masqueradeAl: true }, udpIdleTimeout: '250ms' }));
    expect(r.status).toBe('ok');
    expect(render(r.warnings)).toEqual([
      'iptables.masqueradeAl: unknown field "iptables.masqueradeAl" (did you mean "masqueradeAll"?) (ignored: kube-proxy falls back to lenient decoding for v1alpha1)',
      'udpIdleTimeout: unknown field "udpIdleTimeout" (ignored: kube-proxy falls back to lenient decoding for v1alpha1)',
    ]);
  });

  it('unknownFields: error makes them errors', () => {
    expect(errors(decodeProxyConfig(config({ foo: 1 }), { unknownFields: 'error' }))).toEqual(['foo: unknown field "foo"']);
  });

  it('v1alpha2 is refused: kube-proxy v1.34–v1.37 register only v1alpha1 (pkg/proxy/apis/config/scheme)', () => {
    expect(errors(decodeProxyConfig(config({ linux: { masqueradeAll: true } }, 'kubeproxy.config.k8s.io/v1alpha2')))).toEqual([
      'apiVersion: Invalid value: "kubeproxy.config.k8s.io/v1alpha2": no kind "KubeProxyConfiguration" is registered for version "kubeproxy.config.k8s.io/v1alpha2"; use kubeproxy.config.k8s.io/v1alpha1',
    ]);
  });

  it('a wrong type is an error even in v1alpha1', () => {
    expect(errors(decodeProxyConfig(config({ iptables: { masqueradeBit: '14' } })))).toEqual([
      'iptables.masqueradeBit: Invalid value: "14": iptables.masqueradeBit in body must be of type integer: "string"',
    ]);
  });

  it('a bad duration is a decode error with Go time text', () => {
    expect(errors(decodeProxyConfig(config({ iptables: { syncPeriod: '30' }, configSyncPeriod: '5 min' })))).toEqual([
      'iptables.syncPeriod: Invalid value: "30": time: missing unit in duration "30"',
      'configSyncPeriod: Invalid value: "5 min": time: unknown unit " min" in duration "5 min"',
    ]);
  });

  it.each([
    [{ apiVersion: V1 }, ['kind: Required value']],
    [{ apiVersion: V1, kind: 'KubeletConfiguration' }, ['kind: Invalid value: "KubeletConfiguration": must be KubeProxyConfiguration (kube-proxy --config reads only this kind)']],
    [{ kind: 'KubeProxyConfiguration' }, ['apiVersion: Required value']],
    [
      { apiVersion: 'kubeproxy.config.k8s.io/v1beta1', kind: 'KubeProxyConfiguration' },
      ['apiVersion: Invalid value: "kubeproxy.config.k8s.io/v1beta1": no kind "KubeProxyConfiguration" is registered for version "kubeproxy.config.k8s.io/v1beta1"; use kubeproxy.config.k8s.io/v1alpha1'],
    ],
  ])('kind and version %j', (raw, expected) => expect(errors(decodeProxyConfig(raw))).toEqual(expected));
});

describe('decodeProxyConfig: validation (pkg/proxy/apis/config/validation)', () => {
  it.each([
    [{ iptables: { masqueradeBit: 32 } }, ['iptables.masqueradeBit: Invalid value: 32: must be within the range [0, 31]']],
    [{ mode: 'nftables', nftables: { masqueradeBit: -1 } }, ['nftables.masqueradeBit: Invalid value: -1: must be within the range [0, 31]']],
    [{ mode: 'userspace' }, ['mode: Invalid value: "userspace": must be iptables, ipvs, nftables or blank (blank means the best-available proxy [currently iptables])']],
    [{ mode: 'ipvs', ipvs: { tcpTimeout: '-1s' } }, ['ipvs.tcpTimeout: Invalid value: "-1s": must be greater than or equal to 0']],
    [{ mode: 'ipvs', ipvs: { excludeCIDRs: ['10.0.0.0/8', '10.0.0.0'] } }, ['ipvs.excludeCIDRs[1]: Invalid value: "10.0.0.0": must be a valid CIDR']],
    [{ ipvs: { tcpTimeout: '-1s' } }, []],
    [{ conntrack: { maxPerCore: -1, min: -2, udpTimeout: '-5s' } }, [
      'conntrack.maxPerCore: Invalid value: -1: must be greater than or equal to 0',
      'conntrack.min: Invalid value: -2: must be greater than or equal to 0',
      'conntrack.udpTimeout: Invalid value: "-5s": must be greater than or equal to 0',
    ]],
    [{ oomScoreAdj: 1001 }, ['oomScoreAdj: Invalid value: 1001: must be within the range [-1000, 1000]']],
    [{ clientConnection: { burst: -1 } }, ['clientConnection.burst: Invalid value: -1: must be greater than or equal to 0']],
    [{ configSyncPeriod: '-1m' }, ['configSyncPeriod: Invalid value: "-1m0s": must be greater than 0']],
    [{ iptables: { syncPeriod: '-30s' } }, [
      'iptables.syncPeriod: Invalid value: "-30s": must be greater than 0',
      'iptables.syncPeriod: Invalid value: "1s": must be greater than or equal to KubeProxyConfiguration.MinSyncPeriod',
    ]],
    [{ iptables: { syncPeriod: '1s', minSyncPeriod: '2s' } }, ['iptables.syncPeriod: Invalid value: "2s": must be greater than or equal to KubeProxyConfiguration.MinSyncPeriod']],
    [{ bindAddress: '0.0.0.0.0' }, ['bindAddress: Invalid value: "0.0.0.0.0": not a valid textual representation of an IP address']],
    [{ healthzBindAddress: 'localhost:10256' }, ['healthzBindAddress: Invalid value: "localhost": must be a valid IP']],
    [{ metricsBindAddress: '127.0.0.1:0' }, ['metricsBindAddress: Invalid value: "0": must be a valid port']],
    [{ metricsBindAddress: '1:2:3' }, ['metricsBindAddress: Invalid value: "1:2:3": must be IP:port']],
    [{ metricsBindAddress: '::1' }, []],
    [{ portRange: '2000-300' }, ['portRange: Invalid value: "2000-300": must be a valid port range (e.g. 300-2000)']],
    [{ nodePortAddresses: ['10.0.0.0/8', 'primary'] }, ['nodePortAddresses[1]: Invalid value: "primary": can\'t use both \'primary\' and CIDRs']],
    [{ nodePortAddresses: ['10.0.0.1'] }, ['nodePortAddresses[0]: Invalid value: "10.0.0.1": must be a valid CIDR']],
    [{ detectLocalMode: 'PodCIDR' }, ['detectLocalMode: Unsupported value: "PodCIDR": supported values: "ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", ""']],
    [{ detectLocalMode: 'BridgeInterface' }, ['detectLocal.bridgeInterface: Invalid value: "": must not be empty']],
    [{ detectLocalMode: 'InterfaceNamePrefix' }, ['detectLocal.interfaceNamePrefix: Invalid value: "": must not be empty']],
    [{ clusterCIDR: '10.244.0.0/16,10.245.0.0/16' }, [
      'clusterCIDR: Invalid value: ["10.244.0.0/16","10.245.0.0/16"]: must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]',
    ]],
    [{ clusterCIDR: '10.244.0.0/16,bogus' }, ['clusterCIDR: Invalid value: "bogus": must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)']],
    [{ clusterCIDR: 'a/1,b/2,c/3' }, ['clusterCIDR: Invalid value: ["a/1","b/2","c/3"]: must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]']],
  ])('v1.34 %j', (fields, expected) => expect(errors(decodeProxyConfig(config(fields), { release: '1.34' }))).toEqual(expected));

  it.each([
    [{ nodePortAddresses: ['10.0.0.0/8', 'primary', 'localhost', 'all'] }, []],
    [{ nodePortAddresses: ['primary', 'primary'] }, ['nodePortAddresses[1]: Duplicate value: "primary"']],
    [{ nodePortAddresses: ['10.0.0.1', 'local'] }, [
      "nodePortAddresses[0]: Invalid value: \"10.0.0.1\": must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'",
      "nodePortAddresses[1]: Invalid value: \"local\": must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'",
    ]],
    [{ mode: 'ipvs', featureGates: { KubeProxyIPVS: false } }, ['mode: Invalid value: "ipvs": must be iptables, nftables or blank (blank means the best-available proxy [currently iptables])']],
    [{ mode: 'ipvs' }, []],
  ])('v1.37 %j', (fields, expected) => expect(errors(decodeProxyConfig(config(fields), { release: '1.37' }))).toEqual(expected));

  it('v1.34–v1.36 know no nodePortAddresses keyword but primary, and no KubeProxyIPVS gate', () => {
    for (const release of ['1.34', '1.35', '1.36'] as const) {
      expect(errors(decodeProxyConfig(config({ nodePortAddresses: ['localhost'] }), { release }))).toEqual(['nodePortAddresses[0]: Invalid value: "localhost": must be a valid CIDR']);
      expect(errors(decodeProxyConfig(config({ featureGates: { KubeProxyIPVS: true } }), { release }))).toEqual(['featureGates.KubeProxyIPVS: unrecognized feature gate: KubeProxyIPVS']);
    }
  });

  it('kpc rule: in ipvs mode the scheduler must be one the kernel has (it is written into ipvsadm input)', () => {
    expect(errors(decodeProxyConfig(config({ mode: 'ipvs', ipvs: { scheduler: 'rr\n-C' } })))).toEqual([
      'ipvs.scheduler: Unsupported value: "rr\\n-C": supported values: "dh", "fo", "lblc", "lblcr", "lc", "mh", "nq", "ovf", "rr", "sed", "sh", "twos", "wlc", "wrr"',
    ]);
  });

  it('kpc rule: detect-local interface names are interface names (they are written into -i)', () => {
    expect(errors(decodeProxyConfig(config({ detectLocalMode: 'BridgeInterface', detectLocal: { bridgeInterface: 'cbr0 -j ACCEPT' } })))).toEqual([
      "detectLocal.bridgeInterface: Invalid value: \"cbr0 -j ACCEPT\": must be a network interface name: 1-15 characters from A-Z, a-z, 0-9, '_', '.', '@' and '-' (kpc writes it into rules)",
    ]);
  });
});

describe('Go durations', () => {
  it.each([
    ['0', 0],
    ['30s', 30e9],
    ['1h2m3.5s', 3723.5e9],
    ['250ms', 250e6],
    ['1.5µs', 1500],
    ['-1m', -60e9],
    ['+5s', 5e9],
  ])('parses %j', (text, ns) => expect(parseGoDuration(text)).toEqual({ ns }));

  it.each([
    ['', 'time: invalid duration ""'],
    ['30', 'time: missing unit in duration "30"'],
    ['5d', 'time: unknown unit "d" in duration "5d"'],
    ['.s', 'time: invalid duration ".s"'],
    ['1\ns', 'time: unknown unit "\\x0as" in duration "1\\x0as"'],
  ])('rejects %j', (text, error) => expect(parseGoDuration(text)).toEqual({ error }));

  it.each([
    [0, '0s'],
    [30e9, '30s'],
    [3600e9, '1h0m0s'],
    [90e9, '1m30s'],
    [1.5e9, '1.5s'],
    [250e6, '250ms'],
    [1500, '1.5µs'],
    [12, '12ns'],
    [-60e9, '-1m0s'],
  ])('formats %d ns as %j', (ns, text) => expect(formatGoDuration(ns)).toBe(text));
});

describe('port ranges (utilnet.ParsePortRange)', () => {
  it.each([
    ['', true],
    ['300-2000', true],
    ['1000+100', true],
    ['8080', true],
    ['2000-300', false],
    ['1-70000', false],
    ['a-b', false],
    ['1-2+3', false],
  ])('%j', (v, valid) => expect(isValidPortRange(v)).toBe(valid));
});

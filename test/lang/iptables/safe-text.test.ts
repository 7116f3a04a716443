import { describe, expect, it } from 'vitest';
import { bareComment, chainName, quotedComment, unsafeOutput } from '../../../src/lang/iptables/safe-text.js';
import { emitIptables } from '../../../src/emit/iptables/index.js';
import type { ProxyIR } from '../../../src/ir/model.js';

describe('the emitter refuses text that could break out of the restore input', () => {
  it.each(['a"b', 'a\nCOMMIT', 'a\rb', 'a\u2028b', 'a\u0000b', 'a\\b', '$(reboot)', 'x'.repeat(256)])('comment %j', (text) => {
    expect(() => quotedComment(text)).toThrow(/refusing to write unsafe/);
    expect(() => bareComment(text)).toThrow(/refusing to write unsafe/);
  });

  it('accepts what kube-proxy writes', () => {
    expect(quotedComment('ns1/svc1:p80 -> [fd00::1]:80')).toBe('"ns1/svc1:p80 -> [fd00::1]:80"');
    expect(bareComment('ns1/svc1:p80')).toBe('ns1/svc1:p80');
  });

  it.each(['kube-svc', 'KUBE-SVC-ABCDEFGHIJKLMNOPQRSTU', '-X', 'A B'])('chain name %j', (name) => {
    expect(() => chainName(name)).toThrow(/refusing to write unsafe/);
  });

  it('even when validation is bypassed, a hostile name never reaches the output', () => {
    const ir: ProxyIR = {
      family: 'IPv4',
      node: { name: 'n', zone: '', ips: [] },
      knobs: {
        masqueradeAll: false,
        masqueradeBit: 14,
        nodePortAddresses: [],
        nodeHints: true,
        iptables: { localhostNodePorts: true, randomFully: true, nfacct: false, tcpBeLiberal: false },
        ipvs: { scheduler: 'rr', strictARP: false, tcpTimeout: 0, tcpFinTimeout: 0, udpTimeout: 0, excludeCIDRs: [] },
      },
      servicePorts: [
        {
          namespace: 'ns', name: 'web"\n-A INPUT -j ACCEPT', portName: '', protocol: 'TCP', spn: 'ns/web"\n-A INPUT -j ACCEPT', clusterIP: '10.0.0.1', port: 80, nodePort: 0,
          externalIPs: [], loadBalancerVIPs: [], loadBalancerSourceRanges: [], externalPolicyLocal: false, internalPolicyLocal: false, healthCheckNodePort: 0, endpoints: [],
        },
      ],
    };
    expect(() => emitIptables(ir, { standalone: false })).toThrow(/refusing to write unsafe/);
  });
});

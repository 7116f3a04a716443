import { describe, expect, it } from 'vitest';
import { endpointChainName, hashSuffix, servicePortChains } from '../../../src/emit/iptables/chain-names.js';

// Worked examples from kube-proxy's proxier_test.go expectations (iptables-mode.md §2.4).
describe('chain names hash like kube-proxy', () => {
  it.each([
    ['ns1/svc1:p80', 'KUBE-SVC-XPGD46QRK7WJZT7O'],
    ['ns2/svc2:p80', 'KUBE-SVC-GNZBNJ2PO5MGZ6GT'],
    ['ns5/svc5:p80', 'KUBE-SVC-NUKIZ6OKUXPJNT4C'],
    ['ns2/svc2:p8080', 'KUBE-SVC-2VJB64SDSIJUP5T6'],
  ])('%s tcp → %s', (spn, chain) => {
    expect(servicePortChains(spn, 'TCP').svc).toBe(chain);
  });

  it.each([
    ['ns1/svc1:p80', '10.180.0.1:80', 'KUBE-SEP-SXIVWICOYRO3J4NJ'],
    ['ns5/svc5:p80', '10.180.0.3:80', 'KUBE-SEP-I77PXRDZVX7PMWMN'],
    ['ns3/svc3:p8081', '203.0.113.4:8081', 'KUBE-SEP-RUVVH7YV3PHQBDOS'],
  ])('%s %s → %s', (spn, ep, chain) => {
    expect(endpointChainName(spn, 'TCP', ep)).toBe(chain);
  });

  it('hashes the protocol lower-case', () => {
    expect(hashSuffix('ns1/svc1tcp')).toBe('AQI2S6QIMU7PVVRP');
    expect(hashSuffix('ns1/svc1TCP')).not.toBe('AQI2S6QIMU7PVVRP');
    expect(servicePortChains('ns2/svc2:dns-udp', 'UDP').ext).toBe('KUBE-EXT-56EGM3ZB4YILLRBZ');
    expect(endpointChainName('ns1/svc1:p80', 'TCP', '[fd00:10:180::1]:80')).toBe('KUBE-SEP-OGYCNMB4EMRUSJ6N');
  });
});

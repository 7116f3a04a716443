/**
 * Which Service port `kpc diff` in nftables mode puts a changed chain under
 * (src/diff/nftables/report.ts Ownership): a per-port chain by the port its name says, one whose
 * name hashAndTruncate cut short by the port whose chains jump to it, and a fixed chain every
 * port jumps to (mark-for-masquerade) under "node", not under whichever port reached it first.
 * Hand-written states in kpc's transaction form: the expected report is read off them.
 */

import { describe, expect, it } from 'vitest';
import { diffNftStates } from '../../../src/diff/nftables/report.js';
import { readNftState } from '../../../src/lang/nftables/index.js';

const T = 'ip kube-proxy';
const SVC = 'service-AAAAAAAA-ns1/svc1/tcp/p80';

function state(lines: string[]) {
  return readNftState([`add table ${T} { comment "rules for kube-proxy" ; }`, ...lines, ''].join('\n'), 'ip', 'kube-proxy').state;
}

/** One Service port whose service chain jumps to mark-for-masquerade and goes to one endpoint chain. */
function cluster(endpointChain: string, endpoint: string, mark: string) {
  return state([
    `add chain ${T} mark-for-masquerade`,
    `add rule ${T} mark-for-masquerade mark set mark or ${mark}`,
    `add chain ${T} ${SVC}`,
    `add rule ${T} ${SVC} jump mark-for-masquerade`,
    `add rule ${T} ${SVC} goto ${endpointChain}`,
    `add chain ${T} ${endpointChain}`,
    `add rule ${T} ${endpointChain} meta l4proto tcp dnat to ${endpoint}`,
  ]);
}

describe('kpc diff, nftables: who owns a changed chain', () => {
  it('an endpoint chain named in full: its port; mark-for-masquerade: node', () => {
    const ep = 'endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80';
    const r = diffNftStates(cluster(ep, '10.0.1.1:80', '0x4000'), cluster(ep, '10.0.1.2:80', '0x8000'));
    expect(r.servicePorts.map((c) => [c.servicePort, c.chainsChanged.map((x) => x.chain), c.endpointsAdded, c.endpointsRemoved])).toEqual([
      ['ns1/svc1:p80', [ep], ['10.0.1.2:80'], ['10.0.1.1:80']],
      ['node', ['mark-for-masquerade'], [], []],
    ]);
  });

  it('an endpoint chain whose name was cut short (…p8...): the port whose service chain goes to it', () => {
    const ep = 'endpoint-BBBBBBBB-ns1/svc1/tcp/p8...';
    const r = diffNftStates(cluster(ep, '10.0.1.1:80', '0x4000'), cluster(ep, '10.0.1.2:80', '0x4000'));
    expect(r.servicePorts.map((c) => [c.servicePort, c.chainsChanged.map((x) => x.chain), c.endpointsAdded, c.endpointsRemoved])).toEqual([
      ['ns1/svc1:p80', [ep], ['10.0.1.2:80'], ['10.0.1.1:80']],
    ]);
  });

  it('an endpoint chain added and one removed: both under the port, with the endpoints', () => {
    const a = 'endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80';
    const b = 'endpoint-CCCCCCCC-ns1/svc1/tcp/p80__10.0.1.2/80';
    const r = diffNftStates(cluster(a, '10.0.1.1:80', '0x4000'), cluster(b, '10.0.1.2:80', '0x4000'));
    expect(r.servicePorts).toHaveLength(1);
    const c = r.servicePorts[0]!;
    expect([c.servicePort, c.chainsAdded, c.chainsRemoved, c.chainsChanged.map((x) => x.chain), c.endpointsAdded, c.endpointsRemoved]).toEqual([
      'ns1/svc1:p80',
      [b],
      [a],
      [SVC],
      ['10.0.1.2:80'],
      ['10.0.1.1:80'],
    ]);
  });
});

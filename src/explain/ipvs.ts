/**
 * `kpc explain` for IPVS mode: the same Explanation (src/explain/explain.ts: the plan says which
 * endpoints each entry point reaches and why others are left out), with each entry's IPVS and
 * ipset objects instead of per-Service iptables rules (IPVS mode's iptables rules are shared and
 * match ipsets): the virtual server (`-A`, scheduler, persistence) and its real servers with
 * their weights (`-a`), from ipvs.rules, and the ipset entries keyed by the entry's destination
 * (KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP[-LOCAL], KUBE-LOAD-BALANCER*, KUBE-NODE-PORT-*,
 * KUBE-HEALTH-CHECK-NODE-PORT), from
 * ipset.rules. `rules` is the two files' text (ipvsadm-restore and ipset restore forms).
 */

import type { ProxyIR } from '../ir/model.js';
import { formatHostPort } from '../net/ip.js';
import { explainService, type EntryPoint, type ExplainedRule, type Explanation } from './explain.js';

const PROTO_FLAG: Record<string, string> = { tcp: '-t', udp: '-u', sctp: '--sctp-service' };

export interface IpvsRulesText {
  ipvs: string;
  ipset: string;
}

export function explainServiceIpvs(ir: ProxyIR, files: IpvsRulesText, namespace: string, name: string): Explanation {
  const x = explainService(ir, '', namespace, name);
  const ipvsLines = files.ipvs.split('\n').filter((l) => /^-[Aa] /.test(l));
  const ipsetLines = files.ipset.split('\n').filter((l) => l.startsWith('add '));
  const sp = ir.servicePorts.filter((p) => p.namespace === namespace && p.name === name);
  x.ports.forEach((port, i) => {
    const s = sp[i]!;
    const proto = s.protocol.toLowerCase();
    const flag = PROTO_FLAG[proto]!;
    const virtualServer = (ip: string, p: number): ExplainedRule[] => {
      const vip = formatHostPort(ip, p);
      return ipvsLines
        .filter((l) => l.startsWith(`-A ${flag} ${vip} `) || l === `-A ${flag} ${vip}` || l.startsWith(`-a ${flag} ${vip} `))
        .map((text, k) => ({ table: 'ipvs', chain: vip, index: k + 1, text }));
    };
    const ipset = (keys: string[], sets: (set: string) => boolean): ExplainedRule[] =>
      ipsetLines
        .filter((l) => {
          const [, set, entry] = l.split(' ');
          return set !== undefined && entry !== undefined && sets(set.replace(/^KUBE-6-/, 'KUBE-')) && keys.some((k) => entry === k || entry.startsWith(`${k},`));
        })
        .map((text, k) => ({ table: 'ipset', chain: text.split(' ')[1]!, index: k + 1, text }));
    const fill = (entry: EntryPoint, rules: ExplainedRule[]) => {
      entry.rules = rules;
      entry.sharedChains = [];
      entry.notes = entry.notes
        .map((n) => n.replace('(recent lists)', '(IPVS persistence)').replace('dropped by filter KUBE-PROXY-FIREWALL', 'dropped (KUBE-LOAD-BALANCER-FW and its KUBE-LOAD-BALANCER-SOURCE-* sets)'))
        .filter((n) => !n.startsWith('localhost node port: connections to 127.0.0.1 are counted'));
    };
    for (const entry of port.entries) {
      const m = /(?:IP|ip) \[?([0-9a-fA-F.:]+?)\]?:(\d+)\//.exec(entry.title);
      if (entry.kind === 'cluster-ip') {
        fill(entry, [...virtualServer(s.clusterIP, s.port), ...ipset([`${s.clusterIP},${proto}:${s.port}`], (n) => n === 'KUBE-CLUSTER-IP')]);
      } else if ((entry.kind === 'external-ip' || entry.kind === 'load-balancer-ip') && m) {
        const key = `${m[1]},${proto}:${s.port}`;
        const sets = entry.kind === 'external-ip' ? (n: string) => n.startsWith('KUBE-EXTERNAL-IP') : (n: string) => n.startsWith('KUBE-LOAD-BALANCER');
        fill(entry, [...virtualServer(m[1]!, s.port), ...ipset([key], sets)]);
      } else if (entry.kind === 'node-port') {
        // One virtual server per node address that serves node ports.
        const vs = ipvsLines
          .filter((l) => new RegExp(`^-[Aa] ${flag.replace(/-/g, '\\-')} \\[?[0-9a-fA-F.:]+\\]?:${s.nodePort}( |$)`).test(l))
          .filter((l) => !s.externalIPs.concat(s.loadBalancerVIPs, [s.clusterIP]).some((ip) => l.includes(` ${formatHostPort(ip, s.nodePort)}`)))
          .map((text, k) => ({ table: 'ipvs', chain: `*:${s.nodePort}`, index: k + 1, text }));
        fill(entry, [...vs, ...ipset([String(s.nodePort)], (n) => n.startsWith(`KUBE-NODE-PORT-`) && n.includes(proto.toUpperCase()))]);
      } else if (entry.kind === 'health-check-node-port') {
        fill(entry, ipset([String(s.healthCheckNodePort)], (n) => n === 'KUBE-HEALTH-CHECK-NODE-PORT'));
      } else {
        fill(entry, []);
      }
    }
    port.otherRules = [];
  });
  return x;
}

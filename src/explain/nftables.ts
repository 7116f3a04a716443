/**
 * `kpc explain` for nftables mode: the same Explanation as for iptables (src/explain/explain.ts:
 * the plan says which endpoints each entry point reaches and why others are left out), with
 * each entry's nftables objects instead of iptables rules — the map and set elements keyed by
 * the entry's destination (service-ips, no-endpoint-services, firewall-ips, cluster-ips,
 * service-nodeports, no-endpoint-nodeports, localhost-nodeport-reject-ports) and every rule of
 * the chains those elements (and then those chains' rules) go to: external-, firewall-,
 * service-, local-, endpoint- chains. A chain already listed under an earlier entry is named
 * there instead of listed again.
 */

import type { ProxyIR } from '../ir/model.js';
import { ruleTokens, type NftTableView } from '../lang/nftables/index.js';
import { explainService, type EntryPoint, type ExplainedRule, type Explanation } from './explain.js';

const TABLE = 'kube-proxy';

function elementText(set: string, key: string, value: string, comment: string | undefined): string {
  return `element ${set} { ${key}${comment !== undefined ? ` comment "${comment}"` : ''}${value !== '' ? ` : ${value}` : ''} }`;
}

/** The chains a verdict or rule names (goto/jump X). */
function targets(tokens: string[]): string[] {
  const out: string[] = [];
  tokens.forEach((t, i) => {
    if ((t === 'goto' || t === 'jump') && tokens[i + 1]) out.push(tokens[i + 1]!);
  });
  return out;
}

export function explainServiceNft(ir: ProxyIR, state: NftTableView, namespace: string, name: string): Explanation {
  // The plan's part (reaches, endpoints, reasons), with no iptables rules to attach.
  const x = explainService(ir, '', namespace, name);
  const sp = ir.servicePorts.filter((p) => p.namespace === namespace && p.name === name);
  x.ports.forEach((port, i) => {
    const s = sp[i]!;
    const proto = s.protocol.toLowerCase();
    const listed = new Map<string, string>();
    const withChains = (entry: EntryPoint, keys: Array<[string, string]>): void => {
      const rules: ExplainedRule[] = [];
      const queue: string[] = [];
      for (const [set, key] of keys) {
        const el = state.set(set)?.elements.get(key);
        if (!el) continue;
        rules.push({ table: TABLE, chain: set, index: 0, text: elementText(set, el.key, el.value, el.comment) });
        queue.push(...targets(el.value.split(' ')));
      }
      const shared: EntryPoint['sharedChains'] = [];
      const seen = new Set<string>();
      // An index into the queue, not shift(): a Service's chain can jump to 100,000 endpoints' chains.
      for (let next = 0; next < queue.length; next++) {
        const chain = queue[next]!;
        if (seen.has(chain) || chain === 'reject-chain' || chain.startsWith('localhost-nodeport-reject-')) continue;
        seen.add(chain);
        const under = listed.get(chain);
        if (under !== undefined) {
          shared.push({ table: TABLE, chain, listedUnder: under });
          continue;
        }
        listed.set(chain, entry.title);
        const c = state.chain(chain);
        if (!c) continue;
        c.rules.forEach((r, k) => {
          rules.push({ table: TABLE, chain, index: k + 1, text: `rule ${chain} ${r.text}${r.comment !== undefined ? ` comment "${r.comment}"` : ''}` });
          const toks = ruleTokens(r.key);
          queue.push(...targets(toks));
          for (const t of toks) if (t.startsWith('@affinity-') && !seen.has(t)) {
            seen.add(t);
            rules.push({ table: TABLE, chain: t.slice(1), index: 0, text: `set ${t.slice(1)} (ClientIP affinity, timeout ${state.set(t.slice(1))?.timeout ?? '?'}s)` });
          }
        });
      }
      entry.rules = rules;
      entry.sharedChains = shared;
      entry.notes = entry.notes.map((n) =>
        n.replace('(recent lists)', '(per-endpoint affinity sets)').replace('dropped by filter KUBE-PROXY-FIREWALL', 'dropped by the firewall chain (firewall-ips)').replace('; not subject to loadBalancerSourceRanges', '; not subject to loadBalancerSourceRanges').replace(/connections to 127\.0\.0\.1 are counted by nfacct.*/, 'localhost node port'),
      );
    };
    for (const entry of port.entries) {
      const ipPort = /(?:IP|ip) \[?([0-9a-fA-F.:]+?)\]?:(\d+)\//.exec(entry.title);
      if (entry.kind === 'cluster-ip') {
        const k = `${s.clusterIP} . ${proto} . ${s.port}`;
        withChains(entry, [['cluster-ips', s.clusterIP], ['service-ips', k], ['no-endpoint-services', k]]);
      } else if ((entry.kind === 'external-ip' || entry.kind === 'load-balancer-ip') && ipPort) {
        const k = `${ipPort[1]} . ${proto} . ${s.port}`;
        withChains(entry, [['firewall-ips', k], ['service-ips', k], ['no-endpoint-services', k]]);
      } else if (entry.kind === 'node-port') {
        const k = `${proto} . ${s.nodePort}`;
        withChains(entry, [['service-nodeports', k], ['no-endpoint-nodeports', k], ['localhost-nodeport-reject-ports', k]]);
        entry.notes = entry.notes.map((n) => n.replace(' and on 127.0.0.0/8', ''));
      } else {
        // kube-proxy's nftables proxier installs nothing for the health-check node port: its
        // health server listens on it.
        entry.rules = [];
        entry.sharedChains = [];
      }
    }
    port.otherRules = [];
  });
  return x;
}

/**
 * The rules `kpc explain` reads, in each explainer's own form (ExplainRules), as a mode's
 * backend hands them over (modes' explainRules); explainThrough explains one Service by them.
 */

import type { ProxyIR } from '../ir/model.js';
import type { NftTableView } from '../lang/nftables/index.js';
import { explainService, type Explanation } from './explain.js';
import { explainServiceIpvs, type IpvsRulesText } from './ipvs.js';
import { explainServiceNft } from './nftables.js';

export type ExplainRules =
  /** iptables-restore text (possibly focused on the Service: explain/explain.ts reads it). */
  | { form: 'iptables'; text: string }
  /** kube-proxy's nftables table. */
  | { form: 'nftables'; table: NftTableView }
  /** IPVS mode's ipvs.rules and ipset.rules. */
  | { form: 'ipvs'; files: IpvsRulesText };

export function explainThrough(rules: ExplainRules, ir: ProxyIR, namespace: string, name: string): Explanation {
  switch (rules.form) {
    case 'iptables':
      return explainService(ir, rules.text, namespace, name);
    case 'nftables':
      return explainServiceNft(ir, rules.table, namespace, name);
    case 'ipvs':
      return explainServiceIpvs(ir, rules.files, namespace, name);
  }
}

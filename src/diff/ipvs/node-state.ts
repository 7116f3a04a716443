/**
 * One node's IPVS-mode state as kpc compares it: the IPVS table, the ipsets, the iptables
 * tables and the kube-ipvs0 addresses of the proxier's family. Read from a previous bundle
 * (bundle-dir.ts) or from kpc's own bundle for the new state, through the same readers, so the
 * two sides are always compared in the same terms.
 */

import type { IpvsBundle } from '../../emit/ipvs/bundle.js';
import { BUNDLE_FILES } from '../../emit/ipvs/bundle.js';
import type { IPFamily } from '../../net/ip.js';
import { RulesReadError } from '../../lang/iptables/read.js';
import { readState, type IptablesState, type RuleFacts } from '../iptables/state.js';
import { AddressReadError, readAddresses, type AddressSet } from './addresses.js';
import { BundleReadError } from './bundle-dir.js';
import { IpsetReadError, readIpsetState, type IpsetState } from './ipset-state.js';
import { IpvsReadError, readIpvsTable, type IpvsTable } from './ipvs-table.js';

export interface IpvsNodeState {
  family: IPFamily;
  ipvs: IpvsTable;
  sets: IpsetState;
  iptables: IptablesState;
  /** kube-ipvs0's addresses of this family. */
  addresses: AddressSet;
}

/** Read the four parts; `where` names the source in error messages (a directory or a script). */
export function readNodeState(bundle: IpvsBundle, family: IPFamily, facts: RuleFacts, where = ''): IpvsNodeState {
  const at = (file: string, line: number, detail: string) => new BundleReadError(`${where ? `${where}/` : ''}${file}:${line}: ${detail}`);
  try {
    return {
      family,
      ipvs: readIpvsTable(bundle.ipvsRules),
      sets: readIpsetState(bundle.ipsetRules),
      iptables: readState(bundle.iptablesRules, facts),
      addresses: readAddresses(bundle.addresses, family),
    };
  } catch (e) {
    if (e instanceof IpvsReadError) throw at(BUNDLE_FILES.ipvsRules, e.line, e.detail);
    if (e instanceof IpsetReadError) throw at(BUNDLE_FILES.ipsetRules, e.line, e.detail);
    if (e instanceof RulesReadError) throw at(BUNDLE_FILES.iptablesRules, e.line, e.detail);
    if (e instanceof AddressReadError) throw at(BUNDLE_FILES.addresses, e.line, e.detail);
    throw e;
  }
}

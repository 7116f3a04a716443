/**
 * One node's IPVS-mode state as kpc compares it: the IPVS table, the ipsets, the iptables
 * tables and the kube-ipvs0 addresses of the proxier's family. Read from a previous bundle
 * (bundle-dir.ts) or from kpc's own bundle for the new state, through the same readers, so the
 * two sides are always compared in the same terms.
 */

import type { IpvsBundle } from '../../emit/ipvs/bundle.js';
import { BUNDLE_FILES } from '../../emit/ipvs/bundle.js';
import type { IPFamily } from '../../net/ip.js';
import { readState, type IptablesState, type RuleFacts } from '../iptables/state.js';
import { readAddresses, type AddressSet } from '../../lang/ipvs/addresses.js';
import { isKpcError } from '../../errors.js';
import { readIpsetState, type IpsetState } from '../../lang/ipvs/ipset-state.js';
import { readIpvsTable, type IpvsTable } from '../../lang/ipvs/ipvs-table.js';

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
  /** Each part read on its own, so that a line problem names its file. */
  const part = <T>(file: string, read: () => T): T => {
    try {
      return read();
    } catch (e) {
      if (isKpcError(e, 'previous.unreadable')) throw e.inFile(`${where ? `${where}/` : ''}${file}`);
      throw e;
    }
  };
  return {
    family,
    ipvs: part(BUNDLE_FILES.ipvsRules, () => readIpvsTable(bundle.ipvsRules)),
    sets: part(BUNDLE_FILES.ipsetRules, () => readIpsetState(bundle.ipsetRules)),
    iptables: part(BUNDLE_FILES.iptablesRules, () => readState(bundle.iptablesRules, facts)),
    addresses: part(BUNDLE_FILES.addresses, () => readAddresses(bundle.addresses, family)),
  };
}

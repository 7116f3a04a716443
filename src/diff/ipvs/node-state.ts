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
import { readChangedTables, readPreviousTable } from './aligned-table.js';

export interface IpvsNodeState {
  family: IPFamily;
  ipvs: IpvsTable;
  sets: IpsetState;
  iptables: IptablesState;
  /** kube-ipvs0's addresses of this family. */
  addresses: AddressSet;
}

/** Each part read on its own, so that a line problem names its file. */
function partOf<T>(where: string, file: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) throw e.inFile(`${where ? `${where}/` : ''}${file}`);
    throw e;
  }
}

/** Read the four parts; `where` names the source in error messages (a directory or a script). */
export function readNodeState(bundle: IpvsBundle, family: IPFamily, facts: RuleFacts, where = ''): IpvsNodeState {
  const part = <T>(file: string, read: () => T): T => partOf(where, file, read);
  return {
    family,
    ipvs: part(BUNDLE_FILES.ipvsRules, () => readIpvsTable(bundle.ipvsRules)),
    sets: part(BUNDLE_FILES.ipsetRules, () => readIpsetState(bundle.ipsetRules)),
    iptables: part(BUNDLE_FILES.iptablesRules, () => readState(bundle.iptablesRules, facts)),
    addresses: part(BUNDLE_FILES.addresses, () => readAddresses(bundle.addresses, family)),
  };
}

/**
 * What readNodeState(previous) gives, read beside the new bundle and its state: a part whose
 * text is the new one's is the new state's part (the same object: consumers may skip what is
 * the same on both sides), and ipvs.rules is read block by block against the new table
 * (aligned-table.ts; the whole text when that reader declines it).
 */
export function readNodeStateBeside(previous: IpvsBundle, next: { bundle: IpvsBundle; state: IpvsNodeState }, facts: RuleFacts, where = ''): IpvsNodeState {
  const { bundle, state } = next;
  const part = <T>(file: string, read: () => T): T => partOf(where, file, read);
  return {
    family: state.family,
    ipvs:
      previous.ipvsRules === bundle.ipvsRules
        ? state.ipvs
        : part(BUNDLE_FILES.ipvsRules, () => readPreviousTable(previous.ipvsRules, bundle.ipvsRules, state.ipvs) ?? readIpvsTable(previous.ipvsRules)),
    sets: previous.ipsetRules === bundle.ipsetRules ? state.sets : part(BUNDLE_FILES.ipsetRules, () => readIpsetState(previous.ipsetRules)),
    iptables: previous.iptablesRules === bundle.iptablesRules ? state.iptables : part(BUNDLE_FILES.iptablesRules, () => readState(previous.iptablesRules, facts)),
    addresses: previous.addresses === bundle.addresses ? state.addresses : part(BUNDLE_FILES.addresses, () => readAddresses(previous.addresses, state.family)),
  };
}

/**
 * Only what differs between a previous bundle and the new one, on both sides: a part whose
 * texts are equal is left out of both (empty), and of ipvs.rules only the virtual servers
 * whose blocks differ are read (aligned-table.ts readChangedTables; both texts whole when that
 * reader declines). For consumers that only look at what differs (computeIpvsDelta without
 * --full); the previous parts are still read and checked, so a bad one is reported.
 */
export function readChangedStates(previous: IpvsBundle, next: IpvsBundle, family: IPFamily, facts: RuleFacts, where = ''): { before: IpvsNodeState; after: IpvsNodeState } {
  const part = <T>(file: string, read: () => T): T => partOf(where, file, read);
  const before: IpvsNodeState = { family, ipvs: { virtualServers: new Map() }, sets: new Map(), iptables: new Map(), addresses: new Map() };
  const after: IpvsNodeState = { family, ipvs: { virtualServers: new Map() }, sets: new Map(), iptables: new Map(), addresses: new Map() };
  if (previous.ipvsRules !== next.ipvsRules) {
    const changed = readChangedTables(previous.ipvsRules, next.ipvsRules);
    before.ipvs = changed?.before ?? part(BUNDLE_FILES.ipvsRules, () => readIpvsTable(previous.ipvsRules));
    after.ipvs = changed?.after ?? readIpvsTable(next.ipvsRules);
  }
  if (previous.ipsetRules !== next.ipsetRules) {
    before.sets = part(BUNDLE_FILES.ipsetRules, () => readIpsetState(previous.ipsetRules));
    after.sets = readIpsetState(next.ipsetRules);
  }
  if (previous.iptablesRules !== next.iptablesRules) {
    before.iptables = part(BUNDLE_FILES.iptablesRules, () => readState(previous.iptablesRules, facts));
    after.iptables = readState(next.iptablesRules, facts);
  }
  if (previous.addresses !== next.addresses) {
    before.addresses = part(BUNDLE_FILES.addresses, () => readAddresses(previous.addresses, family));
    after.addresses = readAddresses(next.addresses, family);
  }
  return { before, after };
}

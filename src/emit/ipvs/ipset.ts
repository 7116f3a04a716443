/**
 * `ipset.rules`: `ipset restore` input that leaves the 17 sets exactly as kube-proxy's sync
 * does (ensureIPSet + syncIPSetEntries):
 *
 *   create <NAME> <TYPE> <options> -exist     every set, even when empty, in ipsetInfo order
 *   flush <NAME>                              entries from an earlier state go
 *   add <NAME> <entry>                        sorted (kube-proxy adds in sets.List() order)
 *
 * `-exist` on `create` is kube-proxy's own (CreateSet(set, true)): an identical set is kept,
 * a set of the same name with other parameters is an error. kube-proxy removes stale entries
 * one by one; a full state file cannot know them, hence `flush` (while this file loads, a set
 * is briefly empty). `ipset save` prints the same sets with `bucketsize`/`initval` added and
 * host-length CIDRs without their prefix.
 */

import { compareStrings } from './order.js';
import { safeSetEntry, safeSetName } from './safe-text.js';
import { createOptions, IPSET_INFO, setName } from './sets.js';
import type { IpvsState } from './state.js';

export function renderIpsetRules(state: IpvsState): string {
  const lines: string[] = [];
  for (const info of IPSET_INFO) {
    const name = safeSetName(setName(info.key, state.family));
    lines.push(`create ${name} ${info.type} ${createOptions(info.type, state.family)} -exist`);
    lines.push(`flush ${name}`);
    for (const entry of [...state.sets.get(info.key)!].sort(compareStrings)) lines.push(`add ${name} ${safeSetEntry(entry)}`);
  }
  return lines.join('\n') + '\n';
}

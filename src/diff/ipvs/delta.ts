/**
 * The smallest change that turns a node's previous IPVS-mode state into the new one, as the
 * four parts of a delta bundle (apply-delta.ts runs them in a safe order):
 *
 *   ipvs.rules        `ipvsadm -R` input with only edit commands:
 *                       -A / -E / -D   virtual servers added / changed (the whole option set:
 *                                      an omitted -s means wlc, an omitted -p no persistence) /
 *                                      gone (their real servers go with them)
 *                       -a / -e / -d   real servers added / changed or quiesced / deleted
 *                     (`--set` first when the IPVS timeouts are set and were not before)
 *   ipset.rules       `ipset restore` input: `create … -exist` for missing sets, `add … -exist`,
 *                     `del … -exist`, and `destroy` for stale kube-proxy sets
 *   iptables.rules    `iptables-restore --noflush` input: changed IPVS-mode chains rewritten
 *                     whole (src/diff/delta.ts with IPVS_CHAIN_POLICY); empty when none changed
 *   kube-ipvs0.addrs  the FULL wanted address list (as in a full bundle); the additions and
 *                     removals are returned separately and become `ip address` lines of apply.sh
 *
 * What kpc owns, and so may delete: virtual servers of the proxier's family that are not fwmark
 * services and not inside --ipvs-exclude-cidrs (kube-proxy's rule); the 17 ipsets of the
 * family and LEGACY_SETS; the family's addresses on kube-ipvs0; the IPVS-mode iptables chains.
 *
 * Removed real servers (kube-proxy's graceful termination, graceful_termination.go): kube-proxy
 * deletes a UDP or SCTP real server at once, and a TCP one at once only when it has no
 * connections; otherwise it sets weight 0 (no new connections) and deletes it once its
 * connections have drained, checking every minute. kpc cannot see connections, so a flag
 * decides for TCP:
 *   quiesce (default)  `-e … -w 0` the first time; a real server the previous state already has
 *                      at weight 0 and that is still unwanted is deleted (`-d`): the next kpc
 *                      run stands in for kube-proxy's reaper, so a drain gets at least one
 *                      apply interval and live connections are never cut by kpc;
 *   delete             `-d` at once (kube-proxy's behaviour for an idle server).
 * UDP and SCTP real servers are always deleted at once, as kube-proxy does. A wanted real
 * server found at weight 0 (quiesced earlier) is set back to weight 1 (`-e … -w 1`).
 *
 * With `full`, every wanted virtual and real server is written (`-A`/`-E`, `-a`/`-e`), every set
 * with all its entries, every IPVS-mode chain and every address: the full bundle, plus the
 * deletions.
 */

import { compareStrings } from '../../emit/ipvs/order.js';
import { createOptions, IPSET_INFO, setName } from '../../emit/ipvs/sets.js';
import { cidrContains, parseCIDR, parseIP, type IPFamily } from '../../net/ip.js';
import { renderDelta } from '../iptables/delta.js';
import { IPVS_CHAIN_POLICY } from './chains.js';
import { compareAddresses, compareVirtualServers, serviceOptions, type IpvsRealServer, type IpvsVirtualServer } from '../../lang/ipvs/ipvs-table.js';
import type { IpvsNodeState } from './node-state.js';
import { KpcError } from '../../errors.js';
import { append } from '../../arrays.js';

export type RemovedRealServerPolicy = 'quiesce' | 'delete';
export const REMOVED_REAL_SERVER_POLICIES: readonly RemovedRealServerPolicy[] = ['quiesce', 'delete'];

export interface IpvsDeltaOptions {
  full: boolean;
  /** What to do with a TCP real server that is no longer wanted (see the file comment). */
  removedRealServers: RemovedRealServerPolicy;
  /** --ipvs-exclude-cidrs: virtual servers inside are never deleted. */
  excludeCIDRs?: readonly string[];
}

export interface IpvsDelta {
  ipvsRules: string;
  ipsetRules: string;
  iptablesRules: string;
  /** kube-ipvs0.addrs: the full wanted list, as the new bundle has it. */
  addresses: string;
  /** `address/prefix` to add to kube-ipvs0, and to remove from it. */
  addressesAdded: string[];
  addressesRemoved: string[];
  /** Sets the delta destroys (after the iptables rules that used them are gone). */
  setsDestroyed: string[];
}

/** A set or server the delta cannot change in place. */
/** A previous state the delta cannot be written against (an entry that cannot be written back). */
function deltaError(message: string): KpcError {
  return new KpcError('input', 'previous.unreadable', message);
}


/**
 * Sets older kube-proxy releases created and current ones do not: destroyed when a previous
 * state still has them (KUBE-LOAD-BALANCER-MASQ: kube-proxy 1.9-1.10, pkg/proxy/ipvs/ipset.go).
 */
export const LEGACY_SETS: readonly string[] = ['KUBE-LOAD-BALANCER-MASQ'];

/** LEGACY_SETS under this family's names. */
export function legacySetNames(family: IPFamily): Set<string> {
  return new Set(LEGACY_SETS.map((n) => (family === 'IPv4' ? n : n.replace('KUBE-', 'KUBE-6-').slice(0, 31))));
}

/** Virtual servers kube-proxy's stale-service clean-up may delete (proxier.go cleanLegacyService). */
export function ownedVirtualServer(vs: IpvsVirtualServer, family: IPFamily, excludeCIDRs: readonly string[]): boolean {
  if (vs.fwmark !== undefined || vs.family !== family || vs.ip === undefined) return false;
  const ip = parseIP(vs.ip)?.ip;
  if (!ip) return false;
  return !excludeCIDRs.some((c) => {
    const cidr = parseCIDR(c)?.cidr;
    return cidr !== undefined && cidr.ip.family === ip.family && cidrContains(cidr, ip);
  });
}

function realServerLine(verb: 'a' | 'e', vs: IpvsVirtualServer, rs: IpvsRealServer, weight = rs.weight): string {
  return `-${verb} ${vs.args} -r ${rs.address} -${rs.method} -w ${weight}`;
}

function ipvsDelta(prev: IpvsNodeState, next: IpvsNodeState, options: IpvsDeltaOptions): string {
  const lines: string[] = [];
  const t = next.ipvs.timeouts;
  if (t !== undefined && (options.full || t !== prev.ipvs.timeouts)) lines.push(`--set ${t}`);
  const deletes: string[] = [];
  // A server that is the same object on both sides (read beside the new one: node-state.ts) has nothing to change.
  const servers = [...next.ipvs.virtualServers.values()].filter((vs) => options.full || prev.ipvs.virtualServers.get(vs.key) !== vs);
  for (const vs of servers.sort(compareVirtualServers)) {
    const old = prev.ipvs.virtualServers.get(vs.key);
    if (!old) {
      lines.push(`-A ${vs.args}${serviceOptions(vs)}`);
      for (const rs of [...vs.realServers.values()].sort(compareAddresses)) lines.push(realServerLine('a', vs, rs));
      continue;
    }
    if (options.full || serviceOptions(old) !== serviceOptions(vs)) lines.push(`-E ${vs.args}${serviceOptions(vs)}`);
    for (const rs of [...vs.realServers.values()].sort(compareAddresses)) {
      const was = old.realServers.get(rs.address);
      if (!was) lines.push(realServerLine('a', vs, rs));
      else if (options.full || was.method !== rs.method || was.weight !== rs.weight) lines.push(realServerLine('e', vs, rs));
    }
    for (const was of [...old.realServers.values()].sort(compareAddresses)) {
      if (vs.realServers.has(was.address)) continue;
      // kube-proxy: UDP and SCTP at once; TCP by policy (a server already at weight 0 was quiesced earlier).
      const quiesce = vs.protocol === 'TCP' && options.removedRealServers === 'quiesce' && was.weight !== 0;
      if (quiesce) lines.push(realServerLine('e', vs, was, 0));
      else deletes.push(`-d ${vs.args} -r ${was.address}`);
    }
  }
  const gone = [...prev.ipvs.virtualServers.values()]
    .filter((vs) => !next.ipvs.virtualServers.has(vs.key) && ownedVirtualServer(vs, next.family, options.excludeCIDRs ?? []))
    .sort(compareVirtualServers);
  for (const vs of gone) deletes.push(`-D ${vs.args}`);
  append(lines, deletes);
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/** What ipset accepts in a file kpc writes: addresses, `proto:port`, CIDRs and commas. */
function checkedEntry(set: string, entry: string): string {
  if (!/^[0-9A-Fa-f.:,/a-z]{1,120}$/.test(entry)) throw deltaError(`ipset ${set}: cannot write the entry ${JSON.stringify(entry)} back`);
  return entry;
}

function ipsetDelta(prev: IpvsNodeState, next: IpvsNodeState, options: IpvsDeltaOptions): { text: string; destroyed: string[] } {
  const adds: string[] = [];
  const dels: string[] = [];
  for (const info of IPSET_INFO) {
    const name = setName(info.key, next.family);
    const want = next.sets.get(name);
    if (!want) continue;
    const have = prev.sets.get(name);
    if (have === want && !options.full) continue;
    if (have && (have.type !== want.type || have.family !== want.family)) {
      throw deltaError(
        `ipset ${name} exists as ${have.type}${have.family ? ` family ${have.family}` : ''}, kube-proxy's is ${want.type}${want.family ? ` family ${want.family}` : ''}: ` +
          'it cannot be changed in place (destroy it, then load the full bundle)',
      );
    }
    if (!have || options.full) adds.push(`create ${name} ${info.type} ${createOptions(info.type, next.family)} -exist`);
    const added = [...want.entries].filter(([key]) => options.full || !have?.entries.has(key)).map(([, text]) => text);
    for (const e of added.sort(compareStrings)) adds.push(`add ${name} ${checkedEntry(name, e)} -exist`);
    if (have) {
      const removed = [...have.entries].filter(([key]) => !want.entries.has(key)).map(([key]) => key);
      for (const e of removed.sort(compareStrings)) dels.push(`del ${name} ${checkedEntry(name, e)} -exist`);
    }
  }
  const legacy = legacySetNames(next.family);
  const destroyed = [...prev.sets.keys()].filter((n) => legacy.has(n) && !next.sets.has(n)).sort(compareStrings);
  const lines = [...adds, ...dels, ...destroyed.map((n) => `destroy ${n}`)];
  return { text: lines.length === 0 ? '' : lines.join('\n') + '\n', destroyed };
}

function addressDelta(prev: IpvsNodeState, next: IpvsNodeState, options: IpvsDeltaOptions): { added: string[]; removed: string[] } {
  const order = (a: string, b: string) => compareAddresses({ ip: a.split('/')[0]! }, { ip: b.split('/')[0]! });
  const added = [...next.addresses].filter(([ip]) => options.full || !prev.addresses.has(ip)).map(([, text]) => text);
  const removed = [...prev.addresses].filter(([ip]) => !next.addresses.has(ip)).map(([, text]) => text);
  return { added: added.sort(order), removed: removed.sort(order) };
}

/**
 * The delta from `prev` to `next`. `addressesText` is the new bundle's kube-ipvs0.addrs,
 * passed through as the delta's (the full wanted list).
 */
export function computeIpvsDelta(prev: IpvsNodeState, next: IpvsNodeState, addressesText: string, options: IpvsDeltaOptions): IpvsDelta {
  const ipset = ipsetDelta(prev, next, options);
  const addresses = addressDelta(prev, next, options);
  return {
    ipvsRules: ipvsDelta(prev, next, options),
    ipsetRules: ipset.text,
    iptablesRules: renderDelta(prev.iptables, next.iptables, { full: options.full, chains: IPVS_CHAIN_POLICY }),
    addresses: addressesText,
    addressesAdded: addresses.added,
    addressesRemoved: addresses.removed,
    setsDestroyed: ipset.destroyed,
  };
}

/**
 * What computeIpvsDelta(s, s, addressesText, { full: false }) gives for any state s: nothing
 * to change (the address list is the full wanted one, as always). For the new bundle whose
 * texts are the previous ones, without reading either into a state.
 */
export function unchangedIpvsDelta(addressesText: string): IpvsDelta {
  return { ipvsRules: '', ipsetRules: '', iptablesRules: '', addresses: addressesText, addressesAdded: [], addressesRemoved: [], setsDestroyed: [] };
}

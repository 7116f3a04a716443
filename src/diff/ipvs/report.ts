/**
 * `kpc diff --proxy-mode ipvs`: what changed between a previous IPVS-mode state and the new
 * one, grouped by Service port:
 *
 *   <ns/name:port>  its virtual servers added / removed / changed (scheduler, persistence, …),
 *                   their real servers added / removed / changed (weight, forwarding), and the
 *                   set entries that belong to it
 *   gone            virtual servers (and their set entries) no Service port of the input has
 *   node            kube-ipvs0 addresses, KUBE-IPVS-IPS, sets created or destroyed, entries
 *                   kpc cannot attribute, and the IPVS-mode iptables chains that changed
 *
 * Set entries are attributed through the virtual server they name (`ip,proto:port…` = the
 * virtual server `ip:port/PROTO`), node-port bitmap entries through the node-port virtual
 * servers, KUBE-LOOP-BACK entries through the real server they name, health-check node ports
 * through the Service port that has them.
 */

import type { ProxyIR } from '../../ir/model.js';
import { IPSET_INFO, setName, type SetKey } from '../../emit/ipvs/sets.js';
import type { IpvsState } from '../../emit/ipvs/state.js';
import { virtualServerKey } from '../../emit/ipvs/state.js';
import { ruleEditScript, sameRules, type ChainState } from '../iptables/state.js';
import { isIpvsModeChain } from './chains.js';
import { legacySetNames, ownedVirtualServer } from './delta.js';
import { compareAddresses, compareVirtualServers, serviceOptions, type IpvsRealServer, type IpvsTable, type IpvsVirtualServer } from '../../lang/ipvs/ipvs-table.js';
import type { IpvsNodeState } from './node-state.js';
import type { Paint } from '../port-report.js';
import { NO_PAINT } from '../port-report.js';

export interface RealServerRef {
  virtualServer: string;
  realServer: string;
}

export interface SetEntryRef {
  set: string;
  entry: string;
}

export interface IpvsGroupChange {
  /** `ns/name:port`, `gone` or `node`. */
  servicePort: string;
  virtualServersAdded: string[];
  virtualServersRemoved: string[];
  virtualServersChanged: { virtualServer: string; from: string; to: string }[];
  realServersAdded: RealServerRef[];
  realServersRemoved: RealServerRef[];
  realServersChanged: (RealServerRef & { from: string; to: string })[];
  setEntriesAdded: SetEntryRef[];
  setEntriesRemoved: SetEntryRef[];
  setsAdded: string[];
  setsRemoved: string[];
  addressesAdded: string[];
  addressesRemoved: string[];
  chainsChanged: { chain: string; rulesAdded: string[]; rulesRemoved: string[] }[];
}

export interface IpvsDiffReport {
  changed: boolean;
  groups: IpvsGroupChange[];
}

/** Which Service port each virtual server and set entry of the new state belongs to. */
export interface Attribution {
  /** virtual server key → spn */
  virtualServers: Map<string, string>;
  /** `PROTO/port` of node-port virtual servers → spn */
  nodePorts: Map<string, string>;
  /** KUBE-LOOP-BACK entry → spn */
  loopBack: Map<string, string>;
  /** health-check node port → spn */
  healthChecks: Map<string, string>;
}

export function attributionOf(ir: ProxyIR, state: IpvsState): Attribution {
  const a: Attribution = { virtualServers: new Map(), nodePorts: new Map(), loopBack: new Map(), healthChecks: new Map() };
  for (const vs of state.virtualServers) {
    a.virtualServers.set(virtualServerKey(vs), vs.spn);
    if (vs.kind === 'node-port') a.nodePorts.set(`${vs.protocol}/${vs.port}`, vs.spn);
  }
  for (const sp of ir.servicePorts) {
    const proto = sp.protocol.toLowerCase();
    for (const ep of sp.endpoints) if (ep.isLocal && !a.loopBack.has(`${ep.ip},${proto}:${ep.port},${ep.ip}`)) a.loopBack.set(`${ep.ip},${proto}:${ep.port},${ep.ip}`, sp.spn);
    if (sp.healthCheckNodePort !== 0) a.healthChecks.set(String(sp.healthCheckNodePort), sp.spn);
  }
  return a;
}

function emptyGroup(servicePort: string): IpvsGroupChange {
  return {
    servicePort,
    virtualServersAdded: [],
    virtualServersRemoved: [],
    virtualServersChanged: [],
    realServersAdded: [],
    realServersRemoved: [],
    realServersChanged: [],
    setEntriesAdded: [],
    setEntriesRemoved: [],
    setsAdded: [],
    setsRemoved: [],
    addressesAdded: [],
    addressesRemoved: [],
    chainsChanged: [],
  };
}

const rsText = (rs: IpvsRealServer) => `-${rs.method} -w ${rs.weight}`;
const optionsText = (vs: IpvsVirtualServer) => serviceOptions(vs).trim();

const NODE_PORT_SET_PROTOCOL: Partial<Record<SetKey, string>> = {
  'KUBE-NODE-PORT-TCP': 'TCP',
  'KUBE-NODE-PORT-LOCAL-TCP': 'TCP',
  'KUBE-NODE-PORT-UDP': 'UDP',
  'KUBE-NODE-PORT-LOCAL-UDP': 'UDP',
};

/**
 * The report from `prev` to `next`. The two may hold only what differs (node-state.ts
 * readChangedStates): everything here but one lookup looks only at what differs or at what
 * `attribution` (every server of the new state) answers. That lookup, which server held a
 * KUBE-LOOP-BACK entry that no Service port of the input has now, needs the whole previous
 * table: `wholePrevious` gives it, read only when such an entry is removed.
 */
export function diffIpvsStates(
  prev: IpvsNodeState,
  next: IpvsNodeState,
  attribution: Attribution,
  excludeCIDRs: readonly string[] = [],
  wholePrevious: () => IpvsTable = () => prev.ipvs,
): IpvsDiffReport {
  const groups = new Map<string, IpvsGroupChange>();
  const group = (name: string) => groups.get(name) ?? groups.set(name, emptyGroup(name)).get(name)!;
  const ownerOfKey = (key: string): string => attribution.virtualServers.get(key) ?? (prev.ipvs.virtualServers.has(key) ? 'gone' : 'node');

  // Virtual and real servers (one that is the same object on both sides has not changed: node-state.ts).
  const servers = [...next.ipvs.virtualServers.values()].filter((vs) => prev.ipvs.virtualServers.get(vs.key) !== vs);
  for (const vs of servers.sort(compareVirtualServers)) {
    const g = group(ownerOfKey(vs.key));
    const old = prev.ipvs.virtualServers.get(vs.key);
    if (!old) {
      g.virtualServersAdded.push(vs.key);
      for (const rs of [...vs.realServers.values()].sort(compareAddresses)) g.realServersAdded.push({ virtualServer: vs.key, realServer: rs.address });
      continue;
    }
    if (optionsText(old) !== optionsText(vs)) g.virtualServersChanged.push({ virtualServer: vs.key, from: optionsText(old), to: optionsText(vs) });
    for (const rs of [...vs.realServers.values()].sort(compareAddresses)) {
      const was = old.realServers.get(rs.address);
      if (!was) g.realServersAdded.push({ virtualServer: vs.key, realServer: rs.address });
      else if (rsText(was) !== rsText(rs)) g.realServersChanged.push({ virtualServer: vs.key, realServer: rs.address, from: rsText(was), to: rsText(rs) });
    }
    for (const was of [...old.realServers.values()].sort(compareAddresses)) {
      if (!vs.realServers.has(was.address)) g.realServersRemoved.push({ virtualServer: vs.key, realServer: was.address });
    }
  }
  const gone = [...prev.ipvs.virtualServers.values()].filter((vs) => !next.ipvs.virtualServers.has(vs.key) && ownedVirtualServer(vs, next.family, excludeCIDRs));
  for (const vs of gone.sort(compareVirtualServers)) {
    const g = group('gone');
    g.virtualServersRemoved.push(vs.key);
    for (const rs of [...vs.realServers.values()].sort(compareAddresses)) g.realServersRemoved.push({ virtualServer: vs.key, realServer: rs.address });
  }

  // Set entries, attributed where possible (indexes of the previous table built on first use).
  const proto = (p: string) => p.toUpperCase();
  let prevByRealServer: Map<string, string> | undefined;
  let goneNodePorts: Set<string> | undefined;
  const vsOfRealServer = (protocol: string, rs: string): string | undefined => {
    if (!prevByRealServer) {
      prevByRealServer = new Map();
      for (const v of wholePrevious().virtualServers.values()) for (const r of v.realServers.keys()) if (!prevByRealServer.has(`${v.protocol}/${r}`)) prevByRealServer.set(`${v.protocol}/${r}`, v.key);
    }
    return prevByRealServer.get(`${protocol}/${rs}`);
  };
  const isGoneNodePort = (protocol: string, port: string): boolean => {
    if (!goneNodePorts) {
      goneNodePorts = new Set();
      for (const v of prev.ipvs.virtualServers.values()) if (!next.ipvs.virtualServers.has(v.key)) goneNodePorts.add(`${v.protocol}/${v.port}`);
    }
    return goneNodePorts.has(`${protocol}/${Number(port)}`);
  };
  const ownerOfEntry = (key: SetKey, entry: string): string => {
    const parts = entry.split(',');
    if (key === 'KUBE-IPVS-IPS') return 'node';
    if (key === 'KUBE-HEALTH-CHECK-NODE-PORT') return attribution.healthChecks.get(entry) ?? 'node';
    const np = NODE_PORT_SET_PROTOCOL[key];
    if (np !== undefined) return attribution.nodePorts.get(`${np}/${entry}`) ?? (isGoneNodePort(np, entry) ? 'gone' : 'node');
    const pp = /^([a-z]+):(\d+)$/.exec(parts[1] ?? '');
    if (!pp) return 'node';
    if (key === 'KUBE-LOOP-BACK') {
      const owner = attribution.loopBack.get(entry);
      if (owner) return owner;
      const vs = vsOfRealServer(proto(pp[1]!), parts[0]!.includes(':') ? `[${parts[0]}]:${pp[2]}` : `${parts[0]}:${pp[2]}`);
      return vs ? ownerOfKey(vs) : 'node';
    }
    const ip = parts[0]!;
    return ownerOfKey(`${ip.includes(':') ? `[${ip}]` : ip}:${pp[2]}/${proto(pp[1]!)}`);
  };
  for (const info of IPSET_INFO) {
    const name = setName(info.key, next.family);
    const want = next.sets.get(name);
    const have = prev.sets.get(name);
    if (!want || have === want) continue;
    if (!have) group('node').setsAdded.push(name);
    for (const [key, text] of [...want.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!have?.entries.has(key)) group(ownerOfEntry(info.key, key)).setEntriesAdded.push({ set: name, entry: text });
    }
    for (const [key, text] of [...(have?.entries ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!want.entries.has(key)) group(ownerOfEntry(info.key, key)).setEntriesRemoved.push({ set: name, entry: text });
    }
  }

  const legacy = legacySetNames(next.family);
  for (const name of [...prev.sets.keys()].sort()) if (legacy.has(name) && !next.sets.has(name)) group('node').setsRemoved.push(name);

  // Node-wide: addresses and chains.
  for (const [ip, text] of next.addresses) if (!prev.addresses.has(ip)) group('node').addressesAdded.push(text);
  for (const [ip, text] of prev.addresses) if (!next.addresses.has(ip)) group('node').addressesRemoved.push(text);
  const byAddress = (a: string, b: string) => compareAddresses({ ip: a.split('/')[0]! }, { ip: b.split('/')[0]! });
  if (groups.has('node')) {
    group('node').addressesAdded.sort(byAddress);
    group('node').addressesRemoved.sort(byAddress);
  }
  for (const table of ['nat', 'filter'] as const) {
    const before = prev.iptables.get(table) ?? new Map<string, ChainState>();
    const after = next.iptables.get(table) ?? new Map<string, ChainState>();
    const names = [...new Set([...before.keys(), ...after.keys()])].filter((n) => isIpvsModeChain(table, n)).sort();
    for (const name of names) {
      const b = before.get(name) ?? { name, builtin: false, rules: [] };
      const a = after.get(name) ?? { name, builtin: false, rules: [] };
      if (before.has(name) && after.has(name) && sameRules(b, a)) continue;
      const script = ruleEditScript(b.rules, a.rules) ?? [];
      const rulesAdded: string[] = [];
      const rulesRemoved: string[] = [];
      for (const e of script) {
        if (e.op === 'insert') rulesAdded.push(a.rules[e.newIndex]!.spec);
        else if (e.op === 'delete') rulesRemoved.push(b.rules[e.oldIndex]!.spec);
      }
      group('node').chainsChanged.push({ chain: `${table}/${name}`, rulesAdded, rulesRemoved });
    }
  }

  const rank = (n: string) => (n === 'node' ? 2 : n === 'gone' ? 1 : 0);
  const list = [...groups.values()].filter((g) => !isEmpty(g)).sort((x, y) => rank(x.servicePort) - rank(y.servicePort) || (x.servicePort < y.servicePort ? -1 : x.servicePort > y.servicePort ? 1 : 0));
  return { changed: list.length > 0, groups: list };
}

function isEmpty(g: IpvsGroupChange): boolean {
  return Object.values(g).every((v) => !Array.isArray(v) || v.length === 0);
}

/** The human view: one block per Service port, then gone virtual servers, then the node. */
export function renderIpvsReport(report: IpvsDiffReport, paint: Paint = NO_PAINT): string {
  if (!report.changed) return 'no differences\n';
  let out = '';
  const line = (p: (s: string) => string, s: string) => (out += `${p(s)}\n`);
  for (const g of report.groups) {
    out += `${paint.heading(g.servicePort === 'node' ? 'node-wide' : g.servicePort === 'gone' ? 'gone (no Service port of the input has these)' : g.servicePort)}\n`;
    for (const v of g.virtualServersAdded) line(paint.added, `  + virtual server ${v}`);
    for (const v of g.virtualServersRemoved) line(paint.removed, `  - virtual server ${v}`);
    for (const v of g.virtualServersChanged) line(paint.changed, `  ~ virtual server ${v.virtualServer}: ${v.from} -> ${v.to}`);
    for (const r of g.realServersAdded) line(paint.added, `  + real server ${r.realServer} of ${r.virtualServer}`);
    for (const r of g.realServersRemoved) line(paint.removed, `  - real server ${r.realServer} of ${r.virtualServer}`);
    for (const r of g.realServersChanged) line(paint.changed, `  ~ real server ${r.realServer} of ${r.virtualServer}: ${r.from} -> ${r.to}`);
    for (const s of g.setsAdded) line(paint.added, `  + set ${s}`);
    for (const s of g.setsRemoved) line(paint.removed, `  - set ${s}`);
    for (const e of g.setEntriesAdded) line(paint.added, `  + entry ${e.entry} in ${e.set}`);
    for (const e of g.setEntriesRemoved) line(paint.removed, `  - entry ${e.entry} in ${e.set}`);
    for (const a of g.addressesAdded) line(paint.added, `  + address ${a} on kube-ipvs0`);
    for (const a of g.addressesRemoved) line(paint.removed, `  - address ${a} on kube-ipvs0`);
    for (const c of g.chainsChanged) {
      line(paint.changed, `  ~ chain ${c.chain}`);
      for (const r of c.rulesRemoved) line(paint.removed, `      - ${r}`);
      for (const r of c.rulesAdded) line(paint.added, `      + ${r}`);
    }
  }
  return out;
}

/** `-o json`: stable keys, no colour. */
export function ipvsReportJSON(report: IpvsDiffReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

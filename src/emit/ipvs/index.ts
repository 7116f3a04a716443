/**
 * IPVS mode: the IR in, what kube-proxy's IPVS proxier programs on the node out, as a bundle
 * of four texts that the real tools load (a full sync; pure: same IR, same bytes).
 *
 * Exports for the CLI (`kpc compile --proxy-mode ipvs`):
 *
 *   emitIpvs(ir, { standalone }) → IpvsBundle
 *       { ipvsRules, ipsetRules, iptablesRules, addresses } = the contents of
 *       ipvs.rules, ipset.rules, iptables.rules and kube-ipvs0.addrs (names: BUNDLE_FILES).
 *       `standalone` adds the jumps from the built-in chains to iptables.rules (`-I` lines).
 *   renderApplyScript(bundle, { inline, family, standalone, strictARP?, excludeCIDRs? }) → string
 *       apply.sh. `inline: true` embeds the four files (what `compile` prints without -o);
 *       `inline: false` reads them from the script's directory (`-o DIR`).
 *   applyScriptOptions(ir, { inline, standalone }) → ApplyScriptOptions
 *       the options above filled from the IR (family, --ipvs-strict-arp, --ipvs-exclude-cidrs).
 *   bundleFiles(ir, { standalone, inline? }) → Array<{ name, content, mode }>
 *       everything `-o DIR` writes (apply.sh mode 0o755), in a fixed order.
 *   syncIpvs(ir) → IpvsState        the same sync as data (virtual servers, set entries, ...),
 *                                   for `explain`/`trace`/`diff`.
 */

import type { ProxyIR, ServicePort } from '../../ir/model.js';
import { renderAddresses } from './addresses.js';
import { renderApplyScript, type ApplyScriptOptions } from './apply-script.js';
import { BUNDLE_FILES, type IpvsBundle } from './bundle.js';
import { renderIpsetRules } from './ipset.js';
import { renderIptablesRules } from './iptables-rules.js';
import { renderIpvsRules } from './ipvsadm.js';
import { syncIpvs } from './sync.js';
import type { IpvsState } from './state.js';

export { BUNDLE_FILES, renderApplyScript, syncIpvs };
export type { ApplyScriptOptions, IpvsBundle };
export type { IpvsState, VirtualServer, RealServer, NoNodeAccessEntry, VirtualServerKind } from './state.js';
export { setName, IPSET_INFO, overfullSets, type SetKey } from './sets.js';
export { IPVS_SCHEDULERS, isKnownScheduler } from './scheduler.js';

export interface IpvsOptions {
  /** Also write the jumps from the built-in chains (fresh node or network namespace). */
  standalone: boolean;
}

/** `state` is syncIpvs(ir); pass it when the caller already has it (it is the costly part). */
export function emitIpvs(ir: ProxyIR, options: IpvsOptions, state: IpvsState = syncIpvs(ir)): IpvsBundle {
  return {
    ipvsRules: renderIpvsRules(state, ir.knobs),
    ipsetRules: renderIpsetRules(state),
    iptablesRules: renderIptablesRules(ir, state, { standalone: options.standalone }),
    addresses: renderAddresses(state),
  };
}

/**
 * emitIpvs for kpc trace and explain: the bundle with only the virtual servers the service
 * ports `focus` keeps could have written (those on their cluster, external and load-balancer
 * IPs, and on their node ports), and every ipset entry, iptables rule and kube-ipvs0 address.
 * A connection to `ip:port` meets only the virtual server `ip:port` (trace/focus.ts keeps the
 * ports with that address or node port), and the ipsets and addresses stay whole so every
 * membership and every LOCAL address is the full sync's. Most of ipvs.rules (a virtual
 * server and its real servers per entry point) is neither printed nor read back.
 */
export function emitFocusedIpvs(ir: ProxyIR, options: IpvsOptions, focus: (sp: ServicePort) => boolean): IpvsBundle {
  const state = syncIpvs(ir);
  const kept = ir.servicePorts.filter(focus);
  const ips = new Set(kept.flatMap((sp) => [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerVIPs]));
  const nodePorts = new Set(kept.flatMap((sp) => (sp.nodePort !== 0 ? [sp.nodePort] : [])));
  const virtualServers = state.virtualServers.filter((vs) => ips.has(vs.ip) || nodePorts.has(vs.port));
  return emitIpvs(ir, options, { ...state, virtualServers });
}

export function applyScriptOptions(ir: ProxyIR, options: { inline: boolean; standalone: boolean }): ApplyScriptOptions {
  return {
    inline: options.inline,
    family: ir.family,
    standalone: options.standalone,
    strictARP: ir.knobs.ipvs.strictARP,
    excludeCIDRs: ir.knobs.ipvs.excludeCIDRs,
  };
}

export interface BundleFile {
  name: string;
  content: string;
  /** File mode for `-o DIR`. */
  mode: number;
}

/** Every file of an `-o DIR` bundle: the four parts, then apply.sh reading them. */
export function bundleFiles(ir: ProxyIR, options: { standalone: boolean; inline?: boolean }, state: IpvsState = syncIpvs(ir)): BundleFile[] {
  const bundle = emitIpvs(ir, options, state);
  const script = renderApplyScript(bundle, applyScriptOptions(ir, { inline: options.inline ?? false, standalone: options.standalone }));
  return [
    { name: BUNDLE_FILES.ipvsRules, content: bundle.ipvsRules, mode: 0o644 },
    { name: BUNDLE_FILES.ipsetRules, content: bundle.ipsetRules, mode: 0o644 },
    { name: BUNDLE_FILES.iptablesRules, content: bundle.iptablesRules, mode: 0o644 },
    { name: BUNDLE_FILES.addresses, content: bundle.addresses, mode: 0o644 },
    { name: BUNDLE_FILES.applyScript, content: script, mode: 0o755 },
  ];
}

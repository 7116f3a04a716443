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

import type { ProxyIR } from '../../ir/model.js';
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

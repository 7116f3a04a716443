/**
 * Incremental output for IPVS mode: a previous node state in, the changes out.
 *
 *   readBundleTexts(path)                     the four parts of a previous state on disk: a
 *                                             bundle directory (kpc's, or a node's dumps) or an
 *                                             inline apply.sh (bundle-dir.ts)
 *   readNodeState(bundle, family, facts)      parse them: IPVS table (lang/ipvs/ipvs-table.ts), ipsets
 *                                             (lang/ipvs/ipset-state.ts), iptables (../state.ts),
 *                                             kube-ipvs0 addresses (addresses.ts)
 *   readNodeStateBeside(prev, next, facts)    the same for a previous bundle beside the new one:
 *                                             only what differs is read (aligned-table.ts)
 *   readChangedStates(prev, next, family, …)  only what differs, on both sides (for a delta)
 *   computeIpvsDelta(prev, next, addrs, opts) the delta bundle's parts (delta.ts)
 *   renderDeltaScript(delta, opts)            its apply.sh (apply-delta.ts)
 *   diffIpvsStates(prev, next, attribution)   `kpc diff`'s report, by Service port (report.ts)
 */

export { readBundleTexts, bundleFromScript, extractInlineBundle, DELTA_MARKER, CAPTURE_HINT } from './bundle-dir.js';
export { readChangedStates, readNodeState, readNodeStateBeside, type IpvsNodeState } from './node-state.js';
export { computeIpvsDelta, unchangedIpvsDelta, REMOVED_REAL_SERVER_POLICIES, type IpvsDelta, type IpvsDeltaOptions, type RemovedRealServerPolicy } from './delta.js';
export { renderDeltaScript, type DeltaScriptOptions } from './apply-delta.js';
export { attributionOf, diffIpvsStates, ipvsReportJSON, renderIpvsReport, type IpvsDiffReport } from './report.js';
export { readIpvsTable, renderIpvsTable } from '../../lang/ipvs/ipvs-table.js';
export { readIpsetState } from '../../lang/ipvs/ipset-state.js';
export { readAddresses } from '../../lang/ipvs/addresses.js';

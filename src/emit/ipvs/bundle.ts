/**
 * The IPVS bundle: the four files that describe one node's IPVS-mode state, and their names in
 * an `-o DIR` output (apply.sh, which applies them, is the fifth file).
 */

export interface IpvsBundle {
  /** `ipvsadm -R` input in `ipvsadm-save -n` form. */
  ipvsRules: string;
  /** `ipset restore` input. */
  ipsetRules: string;
  /** `iptables-restore --noflush` input (ip6tables-restore for IPv6). */
  iptablesRules: string;
  /** kube-ipvs0 addresses, one `address/prefix` per line. */
  addresses: string;
}

/** File names inside an `-o DIR` bundle. */
export const BUNDLE_FILES = {
  ipvsRules: 'ipvs.rules',
  ipsetRules: 'ipset.rules',
  iptablesRules: 'iptables.rules',
  addresses: 'kube-ipvs0.addrs',
  applyScript: 'apply.sh',
} as const;

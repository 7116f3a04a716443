/**
 * The chain names of the iptables language kpc speaks: the kernel's built-in chains per table,
 * kube-proxy's fixed chains (iptables and IPVS modes), and the jumps kube-proxy installs from
 * the built-in chains with single `iptables -I` calls (proxier.go iptablesJumpChains and
 * iptablesKubeletJumpChains; the IPVS proxier's iptablesJumpChain). Defined once: the
 * emitters write them, the readers and the tracer recognise them.
 */

import { lineError } from '../line-error.js';

/** The built-in chains of each table (iptables(8)). */
export const BUILTIN_CHAINS_BY_TABLE: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** Every built-in chain name of any table. */
export const BUILTIN_CHAIN_NAMES: ReadonlySet<string> = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

export function isBuiltinChain(table: string, chain: string): boolean {
  return (BUILTIN_CHAINS_BY_TABLE[table] ?? []).includes(chain);
}

// kube-proxy's fixed chains (both modes).
export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
/** kubelet's chain, which kube-proxy also ensures. */
export const KUBE_FIREWALL = 'KUBE-FIREWALL';
// IPVS mode's own.
export const KUBE_SOURCE_RANGES_FIREWALL = 'KUBE-SOURCE-RANGES-FIREWALL';
export const KUBE_NODE_PORT = 'KUBE-NODE-PORT';
export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER';
export const KUBE_IPVS_FILTER = 'KUBE-IPVS-FILTER';
export const KUBE_IPVS_OUT_FILTER = 'KUBE-IPVS-OUT-FILTER';

export type JumpTable = 'filter' | 'nat';

/** One jump from a built-in chain into a kube-proxy chain. */
export interface BuiltinJump {
  table: JumpTable;
  from: string;
  to: string;
  /** Matches before the comment ('' for none). */
  extraArgs: string;
  /** '' for none (kubelet's jumps carry no comment). */
  comment: string;
}

const NEW = '-m conntrack --ctstate NEW';

/** iptables mode, in kube-proxy's ensure order; each is prepended, so a chain ends up in reverse order. */
export const IPTABLES_BUILTIN_JUMPS: readonly BuiltinJump[] = [
  { table: 'filter', from: 'INPUT', to: KUBE_EXTERNAL_SERVICES, extraArgs: NEW, comment: 'kubernetes externally-visible service portals' },
  { table: 'filter', from: 'FORWARD', to: KUBE_EXTERNAL_SERVICES, extraArgs: NEW, comment: 'kubernetes externally-visible service portals' },
  { table: 'filter', from: 'INPUT', to: KUBE_NODEPORTS, extraArgs: '', comment: 'kubernetes health check service ports' },
  { table: 'filter', from: 'FORWARD', to: KUBE_SERVICES, extraArgs: NEW, comment: 'kubernetes service portals' },
  { table: 'filter', from: 'OUTPUT', to: KUBE_SERVICES, extraArgs: NEW, comment: 'kubernetes service portals' },
  { table: 'filter', from: 'FORWARD', to: KUBE_FORWARD, extraArgs: '', comment: 'kubernetes forwarding rules' },
  { table: 'filter', from: 'INPUT', to: KUBE_PROXY_FIREWALL, extraArgs: NEW, comment: 'kubernetes load balancer firewall' },
  { table: 'filter', from: 'OUTPUT', to: KUBE_PROXY_FIREWALL, extraArgs: NEW, comment: 'kubernetes load balancer firewall' },
  { table: 'filter', from: 'FORWARD', to: KUBE_PROXY_FIREWALL, extraArgs: NEW, comment: 'kubernetes load balancer firewall' },
  { table: 'nat', from: 'OUTPUT', to: KUBE_SERVICES, extraArgs: '', comment: 'kubernetes service portals' },
  { table: 'nat', from: 'PREROUTING', to: KUBE_SERVICES, extraArgs: '', comment: 'kubernetes service portals' },
  { table: 'nat', from: 'POSTROUTING', to: KUBE_POSTROUTING, extraArgs: '', comment: 'kubernetes postrouting rules' },
  // kubelet's jumps, which kube-proxy ensures too (the chain may be empty).
  { table: 'filter', from: 'INPUT', to: KUBE_FIREWALL, extraArgs: '', comment: '' },
  { table: 'filter', from: 'OUTPUT', to: KUBE_FIREWALL, extraArgs: '', comment: '' },
];

/** IPVS mode (proxier.go iptablesJumpChain), in the order kube-proxy prepends them. */
export const IPVS_BUILTIN_JUMPS: readonly BuiltinJump[] = [
  { table: 'nat', from: 'OUTPUT', to: KUBE_SERVICES, extraArgs: '', comment: 'kubernetes service portals' },
  { table: 'nat', from: 'PREROUTING', to: KUBE_SERVICES, extraArgs: '', comment: 'kubernetes service portals' },
  { table: 'nat', from: 'POSTROUTING', to: KUBE_POSTROUTING, extraArgs: '', comment: 'kubernetes postrouting rules' },
  { table: 'filter', from: 'FORWARD', to: KUBE_FORWARD, extraArgs: '', comment: 'kubernetes forwarding rules' },
  { table: 'filter', from: 'INPUT', to: KUBE_NODE_PORT, extraArgs: '', comment: 'kubernetes health check rules' },
  { table: 'filter', from: 'INPUT', to: KUBE_PROXY_FIREWALL, extraArgs: '', comment: 'kube-proxy firewall rules' },
  { table: 'filter', from: 'FORWARD', to: KUBE_PROXY_FIREWALL, extraArgs: '', comment: 'kube-proxy firewall rules' },
  { table: 'filter', from: 'INPUT', to: KUBE_IPVS_FILTER, extraArgs: '', comment: 'kubernetes ipvs access filter' },
  { table: 'filter', from: 'OUTPUT', to: KUBE_IPVS_OUT_FILTER, extraArgs: '', comment: 'kubernetes ipvs access filter' },
];

/**
 * The rule arguments of a jump (what follows `-A|-I CHAIN`). The comments are kube-proxy's
 * fixed texts, quoted as iptables-save quotes them.
 */
export function jumpArgs(j: BuiltinJump): string {
  const parts = [j.extraArgs, j.comment ? `-m comment --comment "${j.comment}"` : '', `-j ${j.to}`];
  return parts.filter((s) => s !== '').join(' ');
}

/**
 * A chain name read from a previous state (iptables-save output, restore text); throws
 * previous.unreadable at `lineNo`. kube-proxy's own chains (`KUBE-…`) may be written back into a
 * delta (`:KUBE-SVC-… - [0:0]`, `-X KUBE-SVC-…`), so they must be what kpc writes:
 * `[A-Z][A-Z0-9-]*`, at most 28 characters (safe-text.ts chainName). Any other chain is only
 * kept, never written, but a name with a quote, a backslash, a blank or a control character, or
 * over iptables' 28 characters, is one iptables-restore could not read back in a rule line.
 */
export function checkReadChainName(name: string, lineNo: number): string {
  if (name.startsWith('KUBE-') ? !/^[A-Z][A-Z0-9-]{0,27}$/.test(name) : name.length > 28 || /["'\\\s\x00-\x1f\x7f]/.test(name)) {
    throw lineError(lineNo, `chain name ${JSON.stringify(name)} is not one iptables-restore can read back${name.startsWith('KUBE-') ? ' (kube-proxy\'s chains are [A-Z0-9-], at most 28 characters)' : ' (at most 28 characters, no quotes, backslashes or blanks)'}`);
  }
  return name;
}

/**
 * The jumps from the built-in chains into kube-proxy's chains. kube-proxy installs these
 * with single `iptables -I` calls (iptablesJumpChains + iptablesKubeletJumpChains in
 * proxier.go), not through iptables-restore; `--standalone` adds them so one restore of
 * kpc's output sets up a fresh node or network namespace.
 */

import type { Ruleset, TableName } from './ruleset.js';
import { quotedComment } from './safe-text.js';
import { KUBE_FIREWALL, KUBE_FORWARD, KUBE_POSTROUTING } from './fixed-rules.js';
import { KUBE_EXTERNAL_SERVICES, KUBE_NODEPORTS, KUBE_PROXY_FIREWALL, KUBE_SERVICES } from './service-rules.js';

interface Jump {
  table: TableName;
  from: string;
  to: string;
  extraArgs: string;
  comment: string;
}

const NEW = '-m conntrack --ctstate NEW';

/** In kube-proxy's order; each is prepended, so a built-in chain ends up in reverse order. */
const JUMPS: readonly Jump[] = [
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

export function writeStandaloneJumps(rs: Ruleset): void {
  for (const jump of [...JUMPS].reverse()) {
    const table = rs[jump.table];
    table.declare(jump.from);
    table.declare(jump.to); // KUBE-FIREWALL is not declared on IPv6 or without localhost node ports
    const parts = [jump.extraArgs, jump.comment ? `-m comment --comment ${quotedComment(jump.comment)}` : '', `-j ${jump.to}`].filter((s) => s !== '');
    table.append(jump.from, parts.join(' '));
  }
}

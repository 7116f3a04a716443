/**
 * `kube-ipvs0.addrs`: the addresses kube-proxy binds on the dummy interface kube-ipvs0, one
 * `address/prefix` per line (host prefix: /32 or /128), sorted numerically. They are the
 * cluster IPs plus the external and LB IPs no other node interface has; node-port addresses
 * are never bound. `ip addr add <line> dev kube-ipvs0` binds one.
 */

import { safeIP } from './safe-text.js';
import type { IpvsState } from './state.js';

export function renderAddresses(state: IpvsState): string {
  const prefix = state.family === 'IPv4' ? 32 : 128;
  return state.bindAddresses.map((ip) => `${safeIP(ip, state.family)}/${prefix}\n`).join('');
}

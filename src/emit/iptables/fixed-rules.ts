/**
 * The rules kube-proxy writes on every sync whatever the Services: the top-level chains,
 * KUBE-POSTROUTING / KUBE-MARK-MASQ, kubelet's KUBE-FIREWALL duplicate, the KUBE-FORWARD
 * rules and the final jump to KUBE-NODEPORTS (proxier.go syncProxyRules).
 */

import type { ProxyIR } from '../../ir/model.js';
import type { Ruleset } from '../../lang/iptables/ruleset.js';
import { KUBE_EXTERNAL_SERVICES, KUBE_FIREWALL, KUBE_FORWARD, KUBE_MARK_MASQ, KUBE_NODEPORTS, KUBE_POSTROUTING, KUBE_PROXY_FIREWALL, KUBE_SERVICES } from '../../lang/iptables/chains.js';
import { quotedComment } from '../../lang/iptables/safe-text.js';
import { masqueradeMark } from '../common/masquerade-mark.js';


/** Declare the top-level chains and write the rules that come before the services. */
export function writeFixedHead(rs: Ruleset, ir: ProxyIR): void {
  for (const chain of [KUBE_SERVICES, KUBE_EXTERNAL_SERVICES, KUBE_FORWARD, KUBE_NODEPORTS, KUBE_PROXY_FIREWALL]) rs.filter.declare(chain);
  for (const chain of [KUBE_SERVICES, KUBE_NODEPORTS, KUBE_POSTROUTING, KUBE_MARK_MASQ]) rs.nat.declare(chain);

  const mark = masqueradeMark(ir.knobs.masqueradeBit);
  rs.nat.append(KUBE_POSTROUTING, `-m mark ! --mark ${mark}/${mark} -j RETURN`);
  // Clear the mark so a packet that traverses the stack again is not masqueraded twice.
  rs.nat.append(KUBE_POSTROUTING, `-j MARK --xor-mark ${mark}`);
  const randomFully = ir.knobs.iptables.randomFully ? ' --random-fully' : '';
  rs.nat.append(KUBE_POSTROUTING, `-m comment --comment ${quotedComment('kubernetes service traffic requiring SNAT')} -j MASQUERADE${randomFully}`);
  rs.nat.append(KUBE_MARK_MASQ, `-j MARK --or-mark ${mark}`);

  if (ir.family === 'IPv4' && ir.knobs.iptables.localhostNodePorts) {
    // route_localnet makes node ports answer on 127.0.0.1; this closes the hole it opens
    // for martian packets from outside (kubernetes#90259). kubelet writes the same rule.
    rs.filter.declare(KUBE_FIREWALL);
    rs.filter.append(KUBE_FIREWALL, `-m comment --comment ${quotedComment('block incoming localnet connections')} -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`);
  }
}

/** The jump(s) to KUBE-NODEPORTS that end KUBE-SERVICES, then the KUBE-FORWARD rules. */
export function writeFixedTail(rs: Ruleset, ir: ProxyIR, nodePortIPs: readonly string[]): void {
  const last = `-m comment --comment ${quotedComment('kubernetes service nodeports; NOTE: this must be the last rule in this chain')}`;
  if (ir.knobs.nodePortAddresses.length === 0) {
    let destinations = '-m addrtype --dst-type LOCAL';
    // Localhost node ports never work on IPv6, and on IPv4 only with route_localnet.
    if (ir.family === 'IPv6') destinations += ' ! -d ::1/128';
    else if (!ir.knobs.iptables.localhostNodePorts) destinations += ' ! -d 127.0.0.0/8';
    rs.nat.append(KUBE_SERVICES, `${last} ${destinations} -j ${KUBE_NODEPORTS}`);
  } else {
    for (const ip of nodePortIPs) rs.nat.append(KUBE_SERVICES, `${last} -d ${ip} -j ${KUBE_NODEPORTS}`);
  }

  const mark = masqueradeMark(ir.knobs.masqueradeBit);
  if (!ir.knobs.iptables.tcpBeLiberal) {
    // INVALID packets would otherwise reset connections (kubernetes#74839, #117924).
    const nfacct = ir.knobs.iptables.nfacct ? ' -m nfacct --nfacct-name ct_state_invalid_dropped_pkts' : '';
    rs.filter.append(KUBE_FORWARD, `-m conntrack --ctstate INVALID${nfacct} -j DROP`);
  }
  rs.filter.append(KUBE_FORWARD, `-m comment --comment ${quotedComment('kubernetes forwarding rules')} -m mark --mark ${mark}/${mark} -j ACCEPT`);
  rs.filter.append(KUBE_FORWARD, `-m comment --comment ${quotedComment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`);
}

/**
 * The match text of kube-proxy's local-traffic detectors (pkg/proxy/util/localdetector.go):
 * by source CIDR (ClusterCIDR, NodeCIDR) or by input interface (bridge name, name prefix).
 */

import type { LocalDetector } from '../../ir/model.js';
import { interfaceName } from '../../lang/iptables/safe-text.js';

export function detectorIfLocal(d: LocalDetector): string {
  switch (d.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR':
      return `-s ${d.cidr}`;
    case 'BridgeInterface':
      return `-i ${interfaceName(d.interfaceName)}`;
    case 'InterfaceNamePrefix':
      return `-i ${interfaceName(`${d.interfacePrefix}+`)}`;
  }
}

export function detectorIfNotLocal(d: LocalDetector): string {
  return `! ${detectorIfLocal(d)}`;
}

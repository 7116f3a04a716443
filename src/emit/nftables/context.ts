/** What every part of one nftables sync shares. */

import type { LocalDetector, ProxyIR } from '../../ir/model.js';
import { NftTransaction, nftInterface, nftWord, KUBE_PROXY_TABLE, MARK_MASQ_CHAIN } from '../../lang/nftables/index.js';
import type { NftablesBehaviour } from '../../releases/index.js';
import { behaviourOf } from '../../releases/index.js';
import { masqueradeMark } from '../common/masquerade-mark.js';

export interface SyncContext {
  ir: ProxyIR;
  tx: NftTransaction;
  behaviour: NftablesBehaviour;
  /** `ip` or `ip6` (rule matches). */
  ipX: 'ip' | 'ip6';
  /** `ipv4_addr` or `ipv6_addr` (set types). */
  addrType: 'ipv4_addr' | 'ipv6_addr';
  /** `0x00004000`: fmt.Sprintf("%#08x", 1 << masqueradeBit). */
  mark: string;
  /** How a rule asks for masquerading: `jump mark-for-masquerade` (E2) or `mark set mark or MARK` (E3+). */
  masqueradeRule: string;
  /** The local detector's IfLocalNFT / IfNotLocalNFT words; undefined without a detector. */
  ifLocal: string | undefined;
  ifNotLocal: string | undefined;
  /**
   * proxier.go ensureChain: add `chain` and flush it, once per `created` set (setupNFTables'
   * createdChains, syncProxyRules' activeChains). kpc always writes a full sync, so there is no
   * skipCreation.
   */
  ensureChain(chain: string, created: Set<string>): void;
}

/** pkg/proxy/util/localdetector.go IfLocalNFT / IfNotLocalNFT. */
function detectorWords(d: LocalDetector, ipX: string, negate: boolean): string {
  const not = negate ? ' !=' : '';
  switch (d.mode) {
    case 'ClusterCIDR':
    case 'NodeCIDR':
      return `${ipX} saddr${not} ${nftWord(d.cidr)}`;
    case 'BridgeInterface':
      return `iifname${not} ${nftInterface(d.interfaceName)}`;
    case 'InterfaceNamePrefix':
      return `iifname${not} ${nftInterface(`${d.interfacePrefix}*`)}`;
  }
}

export function syncContext(ir: ProxyIR): SyncContext {
  const ipX = ir.family === 'IPv4' ? 'ip' : 'ip6';
  const behaviour = behaviourOf(ir.knobs.release).nftables;
  const mark = masqueradeMark(ir.knobs.masqueradeBit);
  const d = ir.knobs.localDetector;
  const tx = new NftTransaction(ipX, KUBE_PROXY_TABLE);
  return {
    ir,
    tx,
    behaviour,
    ipX,
    addrType: ir.family === 'IPv4' ? 'ipv4_addr' : 'ipv6_addr',
    mark,
    masqueradeRule: behaviour.markChain ? `jump ${MARK_MASQ_CHAIN}` : `mark set mark or ${mark}`,
    ifLocal: d ? detectorWords(d, ipX, false) : undefined,
    ifNotLocal: d ? detectorWords(d, ipX, true) : undefined,
    ensureChain(chain, created) {
      if (created.has(chain)) return;
      created.add(chain);
      tx.add({ kind: 'chain', name: chain });
      tx.flush({ kind: 'chain', name: chain });
    },
  };
}

/**
 * kube-proxy's nftables chain and set names for service ports and endpoints
 * (pkg/proxy/nftables/proxier.go hashAndTruncate, servicePortChainNameBase,
 * servicePortEndpointChainNameBase): `HASH8-ns/name/proto/port` and
 * `HASH8-ns/name/proto/port__IP/PORT` (IPv6 colons written as dots), where HASH8 is the first
 * 8 characters of base32(sha256(the rest)); cut to 240 bytes with "..." when longer.
 */

import type { Endpoint, ServicePort } from '../../ir/model.js';
import {
  AFFINITY_SET_PREFIX,
  ENDPOINT_CHAIN_PREFIX,
  EXTERNAL_CHAIN_PREFIX,
  FIREWALL_CHAIN_PREFIX,
  LOCAL_CHAIN_PREFIX,
  NAME_LENGTH_MAX,
  SERVICE_CHAIN_PREFIX,
} from '../../lang/nftables/index.js';
import { sha256Words } from '../common/sha256.js';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** chainNameBaseLengthMax: knftables.NameLengthMax minus the longest prefix (16). */
const BASE_LENGTH_MAX = NAME_LENGTH_MAX - 16;

/**
 * The first 8 characters of RFC 4648 base32 of SHA-256 of `head + tail` (40 bits: all of the
 * digest's first word, the top byte of its second). In two parts so that one service port's
 * endpoints hash their shared head once (common/sha256.ts keeps it between calls).
 */
function hash8(head: string, tail = ''): string {
  // The head as sha256Words' first part, the tail as its last: a call with the last call's
  // head copies only the tail into the message.
  const w = sha256Words(head, '', tail);
  const w0 = w[0]!;
  const w1 = w[1]!;
  return (
    BASE32[(w0 >>> 27) & 31]! +
    BASE32[(w0 >>> 22) & 31]! +
    BASE32[(w0 >>> 17) & 31]! +
    BASE32[(w0 >>> 12) & 31]! +
    BASE32[(w0 >>> 7) & 31]! +
    BASE32[(w0 >>> 2) & 31]! +
    BASE32[((w0 << 3) | (w1 >>> 29)) & 31]! +
    BASE32[(w1 >>> 24) & 31]!
  );
}

/** `HASH8-name`, cut to the base's longest with "..." (hashAndTruncate); `name` is `head + tail`. */
export function hashAndTruncate(head: string, tail = ''): string {
  const out = `${hash8(head, tail)}-${head}${tail}`;
  return out.length > BASE_LENGTH_MAX ? `${out.slice(0, BASE_LENGTH_MAX - 3)}...` : out;
}

export interface PortNames {
  service: string;
  local: string;
  external: string;
  firewall: string;
}

export function portNames(sp: ServicePort): PortNames {
  const base = hashAndTruncate(`${sp.namespace}/${sp.name}/${sp.protocol.toLowerCase()}/${sp.portName}`);
  return {
    service: SERVICE_CHAIN_PREFIX + base,
    local: LOCAL_CHAIN_PREFIX + base,
    external: EXTERNAL_CHAIN_PREFIX + base,
    firewall: FIREWALL_CHAIN_PREFIX + base,
  };
}

export interface EndpointNames {
  chain: string;
  affinitySet: string;
}

export function endpointNames(sp: ServicePort, ep: Endpoint): EndpointNames {
  const ip = ep.ip.includes(':') ? ep.ip.replaceAll(':', '.') : ep.ip;
  const base = hashAndTruncate(`${sp.namespace}/${sp.name}/${sp.protocol.toLowerCase()}/${sp.portName}__`, `${ip}/${ep.port}`);
  return { chain: ENDPOINT_CHAIN_PREFIX + base, affinitySet: AFFINITY_SET_PREFIX + base };
}

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
import { BASE32, base32Digit, sha256Words } from '../common/sha256.js';

/** chainNameBaseLengthMax: knftables.NameLengthMax minus the longest prefix (16). */
const BASE_LENGTH_MAX = NAME_LENGTH_MAX - 16;

/**
 * The first 8 characters of RFC 4648 base32 of SHA-256 of `head + tail` (its first 40 bits).
 * The head is sha256Words' first part and the tail its last: one service port's endpoints
 * share the head, and a call with the last call's head copies only the tail into the message.
 */
function hash8(head: string, tail = ''): string {
  const words = sha256Words(head, '', tail);
  const digit = (k: number) => BASE32.charCodeAt(base32Digit(words, k));
  return String.fromCharCode(digit(0), digit(1), digit(2), digit(3), digit(4), digit(5), digit(6), digit(7));
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

/**
 * kube-proxy's nftables chain and set names for service ports and endpoints
 * (pkg/proxy/nftables/proxier.go hashAndTruncate, servicePortChainNameBase,
 * servicePortEndpointChainNameBase): `HASH8-ns/name/proto/port` and
 * `HASH8-ns/name/proto/port__IP/PORT` (IPv6 colons written as dots), where HASH8 is the first
 * 8 characters of base32(sha256(the rest)); cut to 240 bytes with "..." when longer.
 */

import { createHash } from 'node:crypto';
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

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** chainNameBaseLengthMax: knftables.NameLengthMax minus the longest prefix (16). */
const BASE_LENGTH_MAX = NAME_LENGTH_MAX - 16;

/** The first 8 characters of RFC 4648 base32 of SHA-256 (40 bits: the digest's first 5 bytes). */
function hash8(text: string): string {
  const d = createHash('sha256').update(text, 'utf8').digest();
  let bits = 0n;
  for (let i = 0; i < 5; i++) bits = (bits << 8n) | BigInt(d[i]!);
  let out = '';
  for (let k = 7; k >= 0; k--) out += BASE32[Number((bits >> BigInt(k * 5)) & 31n)];
  return out;
}

export function hashAndTruncate(name: string): string {
  const out = `${hash8(name)}-${name}`;
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
  const base = hashAndTruncate(`${sp.namespace}/${sp.name}/${sp.protocol.toLowerCase()}/${sp.portName}__${ip}/${ep.port}`);
  return { chain: ENDPOINT_CHAIN_PREFIX + base, affinitySet: AFFINITY_SET_PREFIX + base };
}

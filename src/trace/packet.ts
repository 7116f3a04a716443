/**
 * Where a traced connection starts, the same for every tracer (iptables, nftables; IPVS
 * through the iptables one): the destination and the node's addresses parsed, the port
 * checked, the source (the node's own first address of the family when none is given), and
 * the origin (from the node when the source is one of its addresses or a loopback one).
 */

import { formatIP, isLoopback, parseIP, type IP } from '../net/ip.js';
import { compareIP } from '../lang/iptables/address.js';
import { traceError, type NodeSpec, type Origin, type PacketSpec, type Protocol } from './result.js';

export interface PacketStart {
  src: IP;
  dst: IP;
  protocol: Protocol;
  origin: Origin;
  /** The node's addresses, then `moreLocal`: what addrtype LOCAL (fib … type local) is, besides loopback. */
  nodeIPs: IP[];
  /** A note for the result (the node has no address of the family), or none. */
  notes: string[];
}

function parseAddress(text: string, what: string): IP {
  const p = parseIP(text);
  if (!p) throw traceError(`${what} "${text}" is not an IP address`);
  return p.ip;
}

/** Is `ip` the node's own: loopback, or one of `nodeIPs`. */
export function isLocalAddress(nodeIPs: readonly IP[], ip: IP): boolean {
  if (isLoopback(ip)) return true;
  return nodeIPs.some((n) => n.family === ip.family && compareIP(n, ip) === 0);
}

/** `moreLocal`: addresses that are the node's own but never picked as the source (IPVS's kube-ipvs0). */
export function startPacket(packet: PacketSpec, node: NodeSpec, moreLocal: readonly string[] = []): PacketStart {
  const dst = parseAddress(packet.destination, 'destination');
  const nodeIPs = node.ips.map((t) => parseAddress(t, 'node address'));
  if (!Number.isInteger(packet.port) || packet.port < 1 || packet.port > 65535) throw traceError(`port ${packet.port} is not between 1 and 65535`);
  const protocol: Protocol = packet.protocol ?? 'tcp';
  const notes: string[] = [];
  let src: IP;
  if (packet.source !== undefined) {
    src = parseAddress(packet.source, 'source');
    if (src.family !== dst.family) throw traceError(`source ${packet.source} and destination ${packet.destination} are of different families`);
  } else if (isLoopback(dst)) {
    src = dst;
  } else {
    const own = nodeIPs.find((ip) => ip.family === dst.family && !isLoopback(ip));
    if (own) src = own;
    else {
      src = parseIP(dst.family === 'IPv4' ? '127.0.0.1' : '::1')!.ip;
      notes.push(`the node has no ${dst.family} address (give --node-ip); the connection is traced from ${formatIP(src)}`);
    }
  }
  for (const t of moreLocal) nodeIPs.push(parseAddress(t, 'node address'));
  const origin: Origin = packet.origin ?? (packet.source === undefined || isLocalAddress(nodeIPs, src) ? 'node' : 'network');
  return { src, dst, protocol, origin, nodeIPs, notes };
}

/**
 * The masquerade mark every proxy mode sets and matches (the same value in iptables, IPVS and
 * nftables modes).
 */

/** Go's fmt.Sprintf("%#08x", 1<<bit): `0x00004000` for bit 14. */
export function masqueradeMark(bit: number): string {
  return `0x${(2 ** bit).toString(16).padStart(8, '0')}`;
}

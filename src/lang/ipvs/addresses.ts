/**
 * The addresses on kube-ipvs0, read from any of:
 *
 *   10.96.0.10/32                                    kpc's kube-ipvs0.addrs (address/prefix)
 *   10.96.0.10                                       a bare address (host prefix implied)
 *   ip addr add 10.96.0.10/32 dev kube-ipvs0         `ip` commands, with or without `ip`
 *   4: kube-ipvs0    inet 10.96.0.10/32 scope ...    `ip -o addr show dev kube-ipvs0`
 *   inet 10.96.0.10/32 scope global kube-ipvs0       `ip addr show dev kube-ipvs0`
 *
 * Lines that hold no address (link lines of `ip addr show`, `valid_lft …`, comments) are
 * skipped. Only the proxier's family is kept: the other family's addresses belong to the
 * other proxier of a dual-stack node.
 */

import { formatIP, parseCIDR, parseIP, type IPFamily } from '../../net/ip.js';
import { lineError } from '../line-error.js';


/** Canonical address → `address/prefix` as it should be given to `ip address`. */
export type AddressSet = Map<string, string>;

/** The word of a line that must be an address; undefined for lines that hold none. */
function addressWord(words: string[]): string | undefined {
  const inet = words.findIndex((w) => w === 'inet' || w === 'inet6');
  if (inet >= 0) return words[inet + 1] ?? '';
  if (words[0] === 'ip') words = words.slice(1);
  if ((words[0] === 'addr' || words[0] === 'address' || words[0] === 'a') && words.length > 2) return words[2]!;
  // One word: kube-ipvs0.addrs. (`5: kube-ipvs0: <…>` link lines have more words.)
  if (words.length === 1) return words[0]!;
  return undefined;
}

export function readAddresses(text: string, family: IPFamily): AddressSet {
  const out: AddressSet = new Map();
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const word = addressWord(line.split(/\s+/));
    if (word === undefined) continue;
    const slash = word.indexOf('/');
    const ip = slash >= 0 ? parseCIDR(word)?.cidr.ip : parseIP(word)?.ip;
    // parseCIDR masks to the network: take the address itself from the part before the slash.
    const addr = slash >= 0 ? parseIP(word.slice(0, slash))?.ip : ip;
    if (!ip || !addr) throw lineError(k + 1, `${JSON.stringify(word)} is not an address`);
    if (addr.family !== family) continue;
    const prefix = slash >= 0 ? word.slice(slash + 1) : String(family === 'IPv4' ? 32 : 128);
    out.set(formatIP(addr), `${formatIP(addr)}/${prefix}`);
  }
  return out;
}

/**
 * What the nftables readers (read.ts) accept from a previous state, beyond its syntax.
 *
 * A delta deletes the previous state's elements by the key text it read and adds the new
 * state's in kpc's own words (`172.30.0.41 . tcp . 80`). If the previous text wrote the same
 * element otherwise, the two keys differ as text but not in the kernel: the delta adds
 * `… tcp . 80` and then deletes `… 6 . 80`, which is the element it just added, and the map
 * ends up empty while `nft -f` succeeds. nft writes elements otherwise when it lists with
 * options that change how values print:
 *
 *   -n / -nn / -nnn   protocols as numbers (`6`), ct states and statuses as bits (`0x8`,
 *                     `0x20`), fib types as numbers (`type 2`), ICMP codes as numbers;
 *   -S                ports as service names from the node's /etc/services (`"http"`);
 *   -N                addresses as host names (reverse DNS);
 *   -j -n / -j -S     the same in the JSON (`6`, `8`, `"http"`).
 *
 * Normalising them back is not exact (service and host names depend on the node's files and
 * resolver), so such a listing is refused as `previous.unreadable`, at its line, with the
 * command to list it kpc's way. Options that change nothing kpc reads are accepted: -a
 * (handles, stripped by the reader), -y (numeric priorities), -T (timeouts in seconds), -s.
 *
 * Names read from a previous state (chains, sets, maps, counters, the chains a map element
 * goes to) are written back into a delta (`delete chain ip kube-proxy NAME`); a name nft's
 * grammar would not take back, or one that could end the command early, is refused here too,
 * rather than reaching the printer's own guard (safe-text.ts, an internal error).
 */

import { lineError } from '../line-error.js';
import { ruleTokens } from './canonical.js';
import { NAME_LENGTH_MAX, NFT_NAME } from './safe-text.js';

/** The hint every refusal of a numeric or named listing ends with. */
export function listingHint(family: string, table: string): string {
  return `listed with nft -n, -S or -N (or -j -n, -j -S), whose values kpc cannot match exactly; list it without them: nft list table ${family} ${table} (or nft -j list table ${family} ${table})`;
}


/** A chain, set, map or counter name from a previous state; throws previous.unreadable at `line`. */
export function checkName(what: string, name: string, line: number): string {
  if (!NFT_NAME.test(name) || name.length > NAME_LENGTH_MAX) {
    throw lineError(line, `${what} name ${JSON.stringify(name)} is not an nftables name kpc can write back (letters, digits and _./-, at most ${NAME_LENGTH_MAX} characters)`);
  }
  return name;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?$/;
const IPV6 = /^[0-9a-fA-F]*:[0-9a-fA-F:.]*(?:\/\d{1,3})?$/;
const PORT = /^\d{1,5}$/;
/** The protocol names kube-proxy and kpc write (nft -n writes 6, 17, 132). */
const PROTOCOLS = new Set(['tcp', 'udp', 'sctp']);
// One bare word of an element key or value (safe-text.ts WORD).
const WORD = /^[A-Za-z0-9_.:/@*\[\]-]+$/;

function range(re: RegExp, w: string): boolean {
  if (re.test(w)) return true;
  const dash = w.indexOf('-');
  return dash > 0 && re.test(w.slice(0, dash)) && re.test(w.slice(dash + 1));
}

/** Why one field of an element does not have the form kpc writes for its type, or undefined. */
function fieldProblem(type: string, w: string): string | undefined {
  switch (type) {
    case 'ipv4_addr':
      return range(IPV4, w) ? undefined : `${JSON.stringify(w)} is not an IPv4 address (ipv4_addr)`;
    case 'ipv6_addr':
      return range(IPV6, w) ? undefined : `${JSON.stringify(w)} is not an IPv6 address (ipv6_addr)`;
    case 'inet_proto':
      return PROTOCOLS.has(w) ? undefined : `${JSON.stringify(w)} is not tcp, udp or sctp (inet_proto)`;
    case 'inet_service':
      return range(PORT, w) ? undefined : `${JSON.stringify(w)} is not a port number (inet_service)`;
    default:
      return undefined;
  }
}

/** `goto CHAIN`, `jump CHAIN`, `drop`, ... */
function verdictProblem(v: string, line: number): string | undefined {
  const m = /^(goto|jump)\s+(\S+)$/.exec(v);
  if (m) {
    checkName('chain', m[2]!, line);
    return undefined;
  }
  return /^(drop|accept|return|continue)$/.test(v) ? undefined : `${JSON.stringify(v)} is not a verdict`;
}

/**
 * An element of a set or map of declared type `setType` (`ipv4_addr . inet_proto . inet_service
 * : verdict`): every key field in the form kpc writes for its type, a verdict value naming a
 * chain kpc can write. Throws previous.unreadable at `line`.
 */
export function checkElement(setName: string, setType: string, key: string, value: string, line: number, hint: string): void {
  const [keyType = '', valueType] = setType.split(/\s+:\s+/);
  const types = keyType.trim().split(/\s+\.\s+/);
  const fields = key.split(' . ');
  const where = `element ${JSON.stringify(key)} of ${setName}`;
  const typed = types.length === fields.length;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const p = (typed ? fieldProblem(types[i]!, f) : undefined) ?? (WORD.test(f) ? undefined : `${JSON.stringify(f)} is not a value kpc can write back`);
    if (p) throw lineError(line, `${where}: ${p}; ${hint}`);
  }
  if (valueType?.trim() === 'verdict' && value !== '') {
    const p = verdictProblem(value, line);
    if (p) throw lineError(line, `${where}: ${p}`);
  }
}

const ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]*:[0-9a-fA-F:.]*)(?:\/\d{1,3})?(?:-\S+)?$/;

/** `10.0.0.1:80`, `[fd00::1]:80`, `10.0.0.1`, `fd00::1` → why its address or port is not numeric, or undefined. */
function natTargetProblem(t: string): string | undefined {
  let addr = t;
  let port: string | undefined;
  const v6 = /^\[([^\]]+)\]:(.*)$/.exec(t);
  if (v6) {
    addr = v6[1]!;
    port = v6[2]!;
  } else if (!ADDRESS.test(t)) {
    const c = t.lastIndexOf(':');
    if (c > 0 && !t.slice(0, c).includes(':')) {
      addr = t.slice(0, c);
      port = t.slice(c + 1);
    }
  }
  if (!ADDRESS.test(addr)) return `address ${JSON.stringify(addr)}`;
  if (port !== undefined && !PORT.test(port)) return `port ${JSON.stringify(port)}`;
  return undefined;
}

/**
 * Why a rule body, as nft listed it (or as read.ts renders nft's JSON), was listed with -n, -S
 * or -N (see the file's comment), or undefined. Only the forms kube-proxy's rules can take are
 * looked at: `ct state`/`ct status` values, `meta l4proto`/`ip protocol`/`ip6 nexthdr`, fib
 * types, reject codes, dnat/snat targets and their maps' ports, addresses after saddr/daddr.
 */
export function listedRuleProblem(body: string): string | undefined {
  const t = ruleTokens(body);
  let natFrom = -1;
  let inNatMap = false;
  for (let i = 0; i < t.length; i++) {
    const w = t[i]!;
    const next = t[i + 1] ?? '';
    if ((w === 'state' || w === 'status') && t[i - 1] === 'ct' && /^\d/.test(next)) return `ct ${w} ${next} (nft -n)`;
    if ((w === 'l4proto' || w === 'protocol' || w === 'nexthdr') && /^\d/.test(next)) return `${w} ${next} (nft -n)`;
    if (w === 'type' && t.slice(0, i).includes('fib') && /^\d/.test(next)) return `fib type ${next} (nft -n)`;
    if (w === 'with' && t[i - 1] === 'reject' && /^\d/.test(t[i + 2] ?? '')) return `reject with ${next} ${t[i + 2]} (nft -n)`;
    if (w.includes('"') && !w.startsWith('"')) return `${w} (nft -S)`;
    if (w.startsWith('"') && (t[i - 1] === '.' || t[i - 1] === ':')) return `${w} (nft -S)`;
    if ((w === 'dnat' || w === 'snat') && natFrom < 0) natFrom = i;
    if (natFrom >= 0 && w === 'to' && next !== '' && next !== 'numgen' && next !== 'ip' && next !== 'ip6' && !next.startsWith('@')) {
      const p = natTargetProblem(next);
      if (p) return `${t[natFrom]} to ${next}: not a numeric ${p} (nft -S or -N)`;
    }
    if (natFrom >= 0 && w === 'map' && next === '{') inNatMap = true;
    if (inNatMap && w === '}') inNatMap = false;
    if (inNatMap && t[i - 1] === '.' && !PORT.test(w)) return `${w} in ${t[natFrom]}'s map: not a port number (nft -S)`;
    if ((w === 'saddr' || w === 'daddr') && (t[i - 1] === 'ip' || t[i - 1] === 'ip6')) {
      let j = i + 1;
      if (t[j] === '!=') j++;
      const list = t[j] === '{';
      if (list) j++;
      for (; j < t.length; j++) {
        const a = t[j]!;
        if (a === ',') continue;
        if (a === '}' || a === '.' || a.startsWith('@')) break;
        if (!ADDRESS.test(a)) return `${t[i - 1]} ${w} ${a}: not an address (nft -N)`;
        if (!list) break;
      }
    }
  }
  return undefined;
}

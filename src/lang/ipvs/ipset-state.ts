/**
 * The ipsets kpc compares, read from `ipset restore` text — kpc's own ipset.rules, or a node's
 * `ipset save` (`-sorted` or not). The commands are replayed (create, add, del, flush, destroy,
 * swap, rename; `-exist` anywhere, `#` comments).
 *
 * An entry is compared by a canonical key, because `ipset save` prints entries differently from
 * how kube-proxy (and kpc) write them: a host-length CIDR loses its prefix
 * (`…,198.51.100.7/32` lists as `…,198.51.100.7`), IPv6 is printed in canonical form, an
 * `IP,PORT` entry gains its implied `tcp:`. The text an entry was written with is kept too:
 * a `del` line uses it. `bucketsize`/`initval` (ipset save) and per-entry options (timeout,
 * counters, comment) do not take part in the comparison.
 */

import { formatIP, parseCIDR, parseIP } from '../../net/ip.js';
import { lineError } from '../line-error.js';

export interface IpsetSet {
  name: string;
  type: string;
  /** `inet` / `inet6` for hash types; undefined for bitmap and list types. */
  family?: string;
  /** The create options other than family, bucketsize and initval, as written. */
  options: string;
  /** canonical entry → the entry as written. */
  entries: Map<string, string>;
}

export type IpsetState = Map<string, IpsetSet>;


const IGNORED_CREATE_OPTIONS = new Set(['bucketsize', 'initval']);
/** Create options that take no value. */
const CREATE_FLAGS = new Set(['counters', 'comment', 'skbinfo', 'forceadd', 'nomatch']);

function canonicalPart(part: string): string {
  if (/^\d+$/.test(part)) return String(Number(part));
  const slash = part.indexOf('/');
  if (slash >= 0) {
    const c = parseCIDR(part)?.cidr;
    if (c) {
      const full = c.ip.family === 'IPv4' ? 32 : 128;
      return c.prefix === full ? formatIP(c.ip) : `${formatIP(c.ip)}/${c.prefix}`;
    }
    return part;
  }
  const ip = parseIP(part)?.ip;
  if (ip) return formatIP(ip);
  const pp = /^([a-zA-Z]+):(\d+)$/.exec(part);
  if (pp) return `${pp[1]!.toLowerCase()}:${Number(pp[2])}`;
  return part;
}

/** The comparison key of an entry of a set of `type`. */
export function canonicalEntry(type: string, entry: string): string {
  const parts = entry.split(',').map(canonicalPart);
  // hash:ip,port and friends: a bare port means TCP.
  if (type.startsWith('hash:ip,port') && parts.length >= 2 && /^\d+$/.test(parts[1]!)) parts[1] = `tcp:${parts[1]}`;
  return parts.join(',');
}

function stripExist(words: string[]): { words: string[]; exist: boolean } {
  const kept = words.filter((w) => w !== '-exist' && w !== '-!');
  return { words: kept, exist: kept.length !== words.length };
}

function parseCreate(words: string[], lineNo: number): IpsetSet {
  const [, name, type, ...rest] = words;
  if (!name || !type) throw lineError(lineNo, 'create needs a name and a type');
  const options: string[] = [];
  let family: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (CREATE_FLAGS.has(w)) {
      options.push(w);
      continue;
    }
    const v = rest[++i];
    if (v === undefined) throw lineError(lineNo, `create option ${w} needs a value`);
    if (w === 'family') family = v;
    else if (!IGNORED_CREATE_OPTIONS.has(w)) options.push(`${w} ${v}`);
  }
  if (family === undefined && type.startsWith('hash:') && type !== 'hash:mac') family = 'inet';
  return { name, type, ...(family !== undefined ? { family } : {}), options: options.join(' '), entries: new Map() };
}

/** Read `ipset restore` / `ipset save` text. */
export function readIpsetState(text: string): IpsetState {
  const sets: IpsetState = new Map();
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    const lineNo = k + 1;
    const raw = lines[k]!.trim();
    if (raw === '' || raw.startsWith('#') || raw === 'COMMIT' || raw === 'quit') continue;
    const { words, exist } = stripExist(raw.split(/\s+/));
    const [cmd, name] = words;
    const need = (): IpsetSet => {
      const s = name !== undefined ? sets.get(name) : undefined;
      if (!s) throw lineError(lineNo, `${cmd}: no set ${JSON.stringify(name)}`);
      return s;
    };
    switch (cmd) {
      case 'create':
      case '-N':
      case 'n': {
        const set = parseCreate(['create', ...words.slice(1)], lineNo);
        const old = sets.get(set.name);
        if (old) {
          if (!exist || old.type !== set.type || old.family !== set.family) throw lineError(lineNo, `set ${set.name} is created twice`);
          break;
        }
        sets.set(set.name, set);
        break;
      }
      case 'add':
      case '-A':
      case 'a':
      case 'del':
      case '-D':
      case 'd': {
        const set = need();
        const entry = words[2];
        if (entry === undefined) throw lineError(lineNo, `${cmd} needs an entry`);
        const key = canonicalEntry(set.type, entry);
        if (cmd === 'add' || cmd === '-A' || cmd === 'a') {
          if (set.entries.has(key) && !exist) throw lineError(lineNo, `entry ${entry} is added to ${set.name} twice`);
          if (!set.entries.has(key)) set.entries.set(key, entry);
        } else {
          if (!set.entries.delete(key) && !exist) throw lineError(lineNo, `entry ${entry} of ${set.name} does not exist`);
        }
        break;
      }
      case 'flush':
      case '-F':
      case 'f':
        if (name === undefined) for (const s of sets.values()) s.entries.clear();
        else need().entries.clear();
        break;
      case 'destroy':
      case 'x':
      case '-X':
        if (name === undefined) sets.clear();
        else if (!sets.delete(name)) throw lineError(lineNo, `destroy: no set ${JSON.stringify(name)}`);
        break;
      case 'swap':
      case 'w':
      case '-W': {
        const a = need();
        const b = sets.get(words[2] ?? '');
        if (!b) throw lineError(lineNo, `swap: no set ${JSON.stringify(words[2])}`);
        sets.set(a.name, { ...b, name: a.name });
        sets.set(b.name, { ...a, name: b.name });
        break;
      }
      case 'rename':
      case 'e':
      case '-E': {
        const a = need();
        const to = words[2];
        if (to === undefined || sets.has(to)) throw lineError(lineNo, `rename: bad target ${JSON.stringify(to)}`);
        sets.delete(a.name);
        sets.set(to, { ...a, name: to });
        break;
      }
      default:
        throw lineError(lineNo, `unknown ipset command ${JSON.stringify(cmd)}`);
    }
  }
  return sets;
}

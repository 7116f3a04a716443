/**
 * One rule's arguments (everything after `-A CHAIN`) → typed matches and a target.
 *
 * The same rule can be spelled in several ways, and this reads them all alike:
 *   kpc / kube-proxy:  -m comment --comment "x" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-SVC-…
 *   iptables-save:     -d 1.2.3.4/32 -p tcp -m comment --comment "x" -m tcp --dport 80 -j KUBE-SVC-…
 *   old iptables:      -s ! 10.0.0.0/8   (negation after the option)   vs   ! -s 10.0.0.0/8
 *   iptables-save:     -j MARK --set-xmark 0x4000/0x4000   (= --or-mark 0x4000)
 *                      -j REJECT --reject-with icmp-port-unreachable
 *                      -m statistic --mode random --probability 0.50000000000
 *                      -m recent --rcheck --seconds 10800 --reap --name X --mask 255.255.255.255 --rsource
 *
 * Grammar: core options (-s -d -p -i -o -f), `-m NAME` followed by that module's `--options`,
 * `-j NAME` / `-g NAME` followed by the target's `--options`; `!` negates the next option,
 * or (old form) the option before it. An option's values are the following arguments up to
 * the next one that starts with `-` (quoted arguments are always values), except for the
 * options known to take none. A module option seen before any `-m` belongs to the protocol's
 * implicit module (`-p tcp --dport 80`).
 */

import { parseAddressSpec } from './address.js';
import type { Match, PortRange, Target } from './model.js';
import type { Token } from './tokenize.js';
import { KpcError } from '../../errors.js';

/** A rule text iptables-restore would refuse; the reader that knows the line adds it (KpcError.atLine). */
function syntaxError(message: string): KpcError {
  return new KpcError('input', 'previous.unreadable', message);
}



interface OptionOcc {
  name: string;
  negated: boolean;
  values: string[];
}

interface Block {
  /** '' = core options; else the module name. */
  module: string;
  options: OptionOcc[];
}

/** Options that take no value. */
const FLAG_OPTIONS = new Set([
  'set', 'rcheck', 'update', 'remove', 'reap', 'rsource', 'rdest', 'rttl',
  'syn', 'random', 'random-fully', 'persistent', 'fragment',
  'limit-iface-in', 'limit-iface-out',
  'log-tcp-sequence', 'log-tcp-options', 'log-ip-options', 'log-uid', 'log-macdecode',
  'save-mark', 'restore-mark', 'return-nomatch', 'exist', 'notrack', 'checksum-fill',
  'clamp-mss-to-pmtu', 'ctreverse',
]);

const CORE_SHORT: Record<string, string> = {
  '-s': 'source', '-d': 'destination', '-p': 'protocol', '-i': 'in-interface', '-o': 'out-interface',
  '-f': 'fragment', '-m': 'match', '-j': 'jump', '-g': 'goto', '-c': 'set-counters', '-4': 'ipv4', '-6': 'ipv6',
};
const CORE_LONG: Record<string, string> = {
  source: 'source', src: 'source', destination: 'destination', dst: 'destination', protocol: 'protocol',
  'in-interface': 'in-interface', 'out-interface': 'out-interface', fragment: 'fragment', match: 'match',
  jump: 'jump', goto: 'goto', 'set-counters': 'set-counters', ipv4: 'ipv4', ipv6: 'ipv6',
};

/** Targets that are extensions, not chains. */
export const TARGET_EXTENSIONS = new Set([
  'ACCEPT', 'DROP', 'RETURN', 'REJECT', 'DNAT', 'SNAT', 'MASQUERADE', 'MARK', 'CONNMARK', 'LOG', 'NFLOG', 'ULOG',
  'CT', 'NOTRACK', 'TRACE', 'REDIRECT', 'TPROXY', 'NFQUEUE', 'QUEUE', 'CLASSIFY', 'DSCP', 'TOS', 'TTL', 'HL',
  'TCPMSS', 'CHECKSUM', 'SET', 'AUDIT', 'NETMAP', 'CONNSECMARK', 'SECMARK', 'IDLETIMER', 'LED', 'RATEEST', 'TEE',
  'HMARK', 'CLUSTERIP', 'SYNPROXY', 'TCPOPTSTRIP', 'ECN', 'NFACCT',
]);

const PROTOCOL_NUMBERS: Record<string, string> = { '0': 'all', '1': 'icmp', '6': 'tcp', '17': 'udp', '58': 'ipv6-icmp', '132': 'sctp', '136': 'udplite' };

export interface ParsedRule {
  matches: Match[];
  target?: Target;
  comment?: string;
}

/**
 * @param isChain whether a `-j NAME` refers to a chain of this table (declared so far).
 */
export function parseRuleArgs(tokens: readonly Token[], isChain: (name: string) => boolean): ParsedRule {
  const blocks: Block[] = [{ module: '', options: [] }];
  let targetName: string | undefined;
  let goto = false;
  const targetOptions: OptionOcc[] = [];
  let current: Block | 'target' = blocks[0]!;
  let pendingNegation = false;
  let protocolModule: string | undefined;

  const isOptionToken = (t: Token | undefined): boolean => t !== undefined && !t.quoted && t.text.startsWith('-') && t.text.length > 1;

  let i = 0;
  while (i < tokens.length) {
    const tok = tokens[i]!;
    if (!tok.quoted && tok.text === '!') {
      if (pendingNegation) throw syntaxError('"!" twice in a row');
      pendingNegation = true;
      i++;
      continue;
    }
    if (!isOptionToken(tok)) throw syntaxError(`unexpected argument "${tok.text}"`);
    let core: string | undefined;
    let longName: string | undefined;
    if (tok.text.startsWith('--')) {
      longName = tok.text.slice(2);
      core = CORE_LONG[longName];
    } else {
      core = CORE_SHORT[tok.text];
      if (core === undefined) throw syntaxError(`unknown option "${tok.text}"`);
    }
    i++;
    const negated = pendingNegation;
    pendingNegation = false;

    if (core === 'match') {
      const name = tokens[i]?.text;
      if (name === undefined) throw syntaxError('-m needs a module name');
      i++;
      const block: Block = { module: name.toLowerCase(), options: [] };
      blocks.push(block);
      current = block;
      continue;
    }
    if (core === 'jump' || core === 'goto') {
      const name = tokens[i]?.text;
      if (name === undefined) throw syntaxError(`${tok.text} needs a target`);
      if (targetName !== undefined) throw syntaxError('more than one target');
      i++;
      targetName = name;
      goto = core === 'goto';
      current = 'target';
      continue;
    }
    if (core === 'set-counters') {
      i += 2;
      continue;
    }
    if (core === 'ipv4' || core === 'ipv6') continue;

    const optionName = core ?? longName!;
    const occ: OptionOcc = { name: optionName, negated, values: [] };
    if (!FLAG_OPTIONS.has(optionName)) {
      // Old style: `-s ! 1.2.3.4`, `--dport ! 80`.
      if (tokens[i] && !tokens[i]!.quoted && tokens[i]!.text === '!' && tokens[i + 1] && !isOptionToken(tokens[i + 1])) {
        occ.negated = !occ.negated;
        i++;
      }
      while (i < tokens.length && !isOptionToken(tokens[i]) && !(tokens[i]!.text === '!' && !tokens[i]!.quoted)) {
        occ.values.push(tokens[i]!.text);
        i++;
      }
    }
    if (core !== undefined) {
      blocks[0]!.options.push(occ);
      if (core === 'protocol' && occ.values[0] !== undefined) protocolModule = protocolName(occ.values[0]);
      continue;
    }
    if (current === 'target') {
      targetOptions.push(occ);
      continue;
    }
    if (current.module === '') {
      // `-p tcp --dport 80` without `-m tcp`: iptables loads the protocol's module implicitly.
      if (protocolModule === undefined) throw syntaxError(`option "--${optionName}" outside any module`);
      const block: Block = { module: protocolModule, options: [] };
      blocks.push(block);
      current = block;
    }
    current.options.push(occ);
  }
  if (pendingNegation) throw syntaxError('"!" at the end of the rule');

  const matches: Match[] = [];
  let comment: string | undefined;
  for (const block of blocks) {
    if (block.module === '') {
      for (const occ of block.options) matches.push(...coreMatch(occ));
    } else {
      for (const m of moduleMatches(block)) {
        if (m.kind === 'comment') comment = comment === undefined ? m.text : `${comment} ${m.text}`;
        matches.push(m);
      }
    }
  }
  const target = targetName === undefined ? undefined : parseTarget(targetName, goto, targetOptions, isChain);
  return { matches, ...(target ? { target } : {}), ...(comment !== undefined ? { comment } : {}) };
}

function protocolName(text: string): string {
  const lower = text.toLowerCase();
  return PROTOCOL_NUMBERS[lower] ?? lower;
}

function one(occ: OptionOcc): string {
  const v = occ.values[0];
  if (v === undefined || occ.values.length !== 1) throw syntaxError(`--${occ.name} needs exactly one value`);
  return v;
}

function coreMatch(occ: OptionOcc): Match[] {
  switch (occ.name) {
    case 'source':
    case 'destination': {
      const text = one(occ);
      const parts = text.split(',');
      if (parts.length > 1 && occ.negated) throw syntaxError('"!" is not allowed with several addresses');
      const addresses = parts.map((p) => {
        const a = parseAddressSpec(p);
        if (!a) throw syntaxError(`"${p}" is not an address or network`);
        return a;
      });
      return [{ kind: 'address', which: occ.name, negated: occ.negated, addresses }];
    }
    case 'protocol':
      return [{ kind: 'protocol', negated: occ.negated, protocol: protocolName(one(occ)) }];
    case 'in-interface':
    case 'out-interface':
      return [{ kind: 'interface', which: occ.name === 'in-interface' ? 'in' : 'out', negated: occ.negated, name: one(occ) }];
    case 'fragment':
      return [{ kind: 'fragment', negated: occ.negated }];
    default:
      throw syntaxError(`unknown option "--${occ.name}"`);
  }
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text)) throw syntaxError(`"${text}" is not a port number`);
  const n = Number(text);
  if (n > 65535) throw syntaxError(`port ${n} is out of range`);
  return n;
}

/** `80`, `80:90`, `:90`, `80:` (the tcp/udp/sctp form). */
function parsePortRange(text: string): PortRange {
  const colon = text.indexOf(':');
  if (colon < 0) {
    const p = parsePort(text);
    return [p, p];
  }
  const lo = colon === 0 ? 0 : parsePort(text.slice(0, colon));
  const hi = colon === text.length - 1 ? 65535 : parsePort(text.slice(colon + 1));
  return [lo, hi];
}

function parseNumber(text: string): number {
  const n = /^0x[0-9a-f]+$/i.test(text) ? parseInt(text, 16) : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n) || n > 0xffffffff) throw syntaxError(`"${text}" is not a 32-bit number`);
  return n >>> 0;
}

/** `value[/mask]`; a missing mask is all ones. */
function parseValueMask(text: string): { value: number; mask: number } {
  const slash = text.indexOf('/');
  if (slash < 0) return { value: parseNumber(text), mask: 0xffffffff };
  return { value: parseNumber(text.slice(0, slash)), mask: parseNumber(text.slice(slash + 1)) };
}

function unsupported(block: Block): Match {
  return { kind: 'unsupported', module: block.module, text: blockText(block) };
}

function blockText(block: Block): string {
  const parts = [`-m ${block.module}`];
  for (const o of block.options) parts.push(`${o.negated ? '! ' : ''}--${o.name}${o.values.length ? ' ' + o.values.join(' ') : ''}`);
  return parts.join(' ');
}

function moduleMatches(block: Block): Match[] {
  const opts = block.options;
  const out: Match[] = [];
  switch (block.module) {
    case 'comment': {
      for (const o of opts) {
        if (o.name !== 'comment') return [unsupported(block)];
        out.push({ kind: 'comment', text: o.values.join(' ') });
      }
      return out;
    }
    case 'tcp':
    case 'udp':
    case 'sctp':
    case 'udplite': {
      for (const o of opts) {
        if (o.name === 'dport' || o.name === 'destination-port' || o.name === 'sport' || o.name === 'source-port') {
          const which = o.name === 'dport' || o.name === 'destination-port' ? 'destination' : 'source';
          out.push({ kind: 'port', which, negated: o.negated, ranges: [parsePortRange(one(o))], module: block.module });
        } else if (block.module === 'tcp' && o.name === 'syn') {
          out.push({ kind: 'tcp-flags', negated: o.negated, mask: ['SYN', 'RST', 'ACK', 'FIN'], comp: ['SYN'] });
        } else if (block.module === 'tcp' && o.name === 'tcp-flags') {
          if (o.values.length !== 2) throw syntaxError('--tcp-flags needs MASK and COMP');
          const flags = (s: string) => (s.toUpperCase() === 'NONE' ? [] : s.toUpperCase() === 'ALL' ? ['SYN', 'ACK', 'FIN', 'RST', 'URG', 'PSH'] : s.toUpperCase().split(','));
          out.push({ kind: 'tcp-flags', negated: o.negated, mask: flags(o.values[0]!), comp: flags(o.values[1]!) });
        } else {
          return [unsupported(block)];
        }
      }
      return out;
    }
    case 'multiport': {
      for (const o of opts) {
        const which = ['dports', 'destination-ports'].includes(o.name) ? 'destination' : ['sports', 'source-ports'].includes(o.name) ? 'source' : o.name === 'ports' ? 'either' : undefined;
        if (!which) return [unsupported(block)];
        const ranges = one(o).split(',').map((p) => parsePortRange(p));
        out.push({ kind: 'port', which, negated: o.negated, ranges, module: 'multiport' });
      }
      return out;
    }
    case 'addrtype': {
      for (const o of opts) {
        if (o.name === 'src-type' || o.name === 'dst-type') {
          out.push({ kind: 'addrtype', which: o.name === 'src-type' ? 'source' : 'destination', negated: o.negated, types: one(o).toUpperCase().split(',') });
        } else {
          return [unsupported(block)];
        }
      }
      return out;
    }
    case 'conntrack':
    case 'state': {
      for (const o of opts) {
        if ((block.module === 'conntrack' && o.name === 'ctstate') || (block.module === 'state' && o.name === 'state')) {
          out.push({ kind: 'ctstate', negated: o.negated, states: one(o).toUpperCase().split(',') });
        } else {
          return [unsupported(block)];
        }
      }
      return out;
    }
    case 'mark':
    case 'connmark': {
      for (const o of opts) {
        if (o.name !== 'mark') return [unsupported(block)];
        const { value, mask } = parseValueMask(one(o));
        out.push({ kind: 'mark', on: block.module === 'mark' ? 'packet' : 'connection', negated: o.negated, value, mask });
      }
      return out;
    }
    case 'statistic': {
      const mode = opts.find((o) => o.name === 'mode');
      const prob = opts.find((o) => o.name === 'probability');
      if (!mode || one(mode) !== 'random' || !prob || opts.length !== 2) return [unsupported(block)];
      const text = one(prob);
      const p = Number(text);
      if (!/^\d*\.?\d+$/.test(text) || !(p >= 0 && p <= 1)) throw syntaxError(`"${text}" is not a probability`);
      return [{ kind: 'random', negated: prob.negated || mode.negated, probability: p, text }];
    }
    case 'recent': {
      let name = 'DEFAULT';
      let action: 'set' | 'rcheck' | 'update' | 'remove' | undefined;
      let negated = false;
      let seconds: number | undefined;
      let reap = false;
      for (const o of opts) {
        switch (o.name) {
          case 'name':
            name = one(o);
            break;
          case 'set':
          case 'rcheck':
          case 'update':
          case 'remove':
            action = o.name;
            negated = o.negated;
            break;
          case 'seconds':
            seconds = Number(one(o));
            break;
          case 'reap':
            reap = true;
            break;
          case 'rsource':
          case 'rdest':
          case 'mask':
          case 'hitcount':
          case 'rttl':
            break;
          default:
            return [unsupported(block)];
        }
      }
      if (!action) return [unsupported(block)];
      return [{ kind: 'recent', negated, name, action, ...(seconds !== undefined ? { seconds } : {}), reap }];
    }
    case 'nfacct': {
      const o = opts.find((x) => x.name === 'nfacct-name');
      if (!o || opts.length !== 1) return [unsupported(block)];
      return [{ kind: 'nfacct', name: one(o) }];
    }
    case 'iprange': {
      for (const o of opts) {
        if (o.name !== 'src-range' && o.name !== 'dst-range') return [unsupported(block)];
        const [a, b] = one(o).split('-');
        const from = a !== undefined ? parseAddressSpec(a) : undefined;
        const to = b !== undefined ? parseAddressSpec(b) : from;
        if (!from || !to) throw syntaxError(`"${one(o)}" is not an address range`);
        out.push({ kind: 'iprange', which: o.name === 'src-range' ? 'source' : 'destination', negated: o.negated, from, to });
      }
      return out;
    }
    case 'limit':
    case 'hashlimit':
    case 'icmp':
    case 'icmp6':
    case 'icmpv6':
      return [{ kind: 'neutral', module: block.module, text: blockText(block) }];
    case 'pkttype': {
      const o = opts.find((x) => x.name === 'pkt-type');
      if (o && opts.length === 1 && one(o).toLowerCase() === 'unicast' && !o.negated) return [{ kind: 'neutral', module: block.module, text: blockText(block) }];
      return [unsupported(block)];
    }
    default:
      return [unsupported(block)];
  }
}

/** `10.0.0.1:80`, `10.0.0.1`, `10.0.0.1-10.0.0.9:80-90`, `[fd00::1]:80`, `fd00::1`. */
function parseNatTo(text: string): { ip?: string; port?: number } {
  let host = text;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  if (bracket) {
    host = bracket[1]!;
    portText = bracket[2];
  } else if (!text.includes('::') && (text.match(/:/g) ?? []).length === 1) {
    [host, portText] = text.split(':') as [string, string];
  }
  const firstHost = host.split('-')[0]!;
  const addr = firstHost === '' ? undefined : parseAddressSpec(firstHost);
  const port = portText === undefined ? undefined : parsePort(portText.split('-')[0]!);
  return { ...(addr ? { ip: firstHost } : {}), ...(port !== undefined ? { port } : {}) };
}

function parseTarget(name: string, goto: boolean, opts: OptionOcc[], isChain: (name: string) => boolean): Target {
  // A name that is no target extension is a chain whether declared or not: only an extension's
  // name needs the table's chains asked.
  if (goto || !TARGET_EXTENSIONS.has(name) || isChain(name)) {
    if (opts.length > 0) throw syntaxError(`options after a jump to chain ${name}`);
    return { kind: 'chain', chain: name, goto };
  }
  const get = (n: string) => opts.find((o) => o.name === n);
  switch (name) {
    case 'ACCEPT':
    case 'DROP':
    case 'RETURN':
      if (opts.length > 0) throw syntaxError(`${name} takes no options`);
      return { kind: name };
    case 'REJECT': {
      const w = get('reject-with');
      return w ? { kind: 'REJECT', rejectWith: one(w) } : { kind: 'REJECT' };
    }
    case 'DNAT': {
      const to = get('to-destination');
      if (!to) return { kind: 'other', name, options: optionTexts(opts) };
      return { kind: 'DNAT', to: one(to), ...parseNatTo(one(to)) };
    }
    case 'SNAT': {
      const to = get('to-source');
      return { kind: 'SNAT', to: to ? one(to) : '' };
    }
    case 'MASQUERADE':
      return { kind: 'MASQUERADE', options: optionTexts(opts) };
    case 'MARK': {
      const mark = markOperation(opts);
      if (!mark) throw syntaxError(`MARK ${optionTexts(opts).join(' ')} is not understood`);
      return { kind: 'MARK', ...mark, text: optionTexts(opts).join(' ') };
    }
    case 'CONNMARK': {
      const mark = markOperation(opts);
      return mark ? { kind: 'CONNMARK', ...mark, text: optionTexts(opts).join(' ') } : { kind: 'CONNMARK', text: optionTexts(opts).join(' ') };
    }
    default:
      return { kind: 'other', name, options: optionTexts(opts) };
  }
}

/** xt_MARK's operations as one `--set-xmark value/mask`: mark = (mark & ~mask) ^ value. */
function markOperation(opts: OptionOcc[]): { value: number; mask: number } | undefined {
  if (opts.length !== 1) return undefined;
  const o = opts[0]!;
  switch (o.name) {
    case 'set-xmark':
      return parseValueMask(one(o));
    case 'set-mark': {
      const { value, mask } = parseValueMask(one(o));
      return { value, mask: (mask | value) >>> 0 };
    }
    case 'or-mark': {
      const v = parseNumber(one(o));
      return { value: v, mask: v };
    }
    case 'xor-mark':
      return { value: parseNumber(one(o)), mask: 0 };
    case 'and-mark':
      return { value: 0, mask: ~parseNumber(one(o)) >>> 0 };
    default:
      return undefined;
  }
}

function optionTexts(opts: OptionOcc[]): string[] {
  return opts.map((o) => `${o.negated ? '! ' : ''}--${o.name}${o.values.length ? ' ' + o.values.join(' ') : ''}`);
}

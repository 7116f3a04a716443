/**
 * Readers of an nftables table, into a state (state.ts):
 *
 *   - readTransaction: knftables' form, one command a line, as kpc and kube-proxy write it
 *     (`add chain ip kube-proxy X`, `add element … { K : V }`, `flush chain …`, `delete …`);
 *     the state is what `nft -f` of the text leaves on an empty table.
 *   - readListing: nft's own text (`nft list table ip kube-proxy`, or `nft list ruleset`, of
 *     which only that table is read): blocks of `set`, `map`, `counter` and `chain`, elements
 *     over several lines, priorities by name (`dstnat - 10`), timeouts as `3h`.
 *   - readJSON: `nft -j list table` / `nft -j list ruleset` (libnftables' JSON schema 1, as
 *     knftables reads it); rule expressions are rendered as nft's listing would print them.
 *
 * readNftState picks the reader by the text's form. Errors are `previous.unreadable` at a line
 * (the caller names the file).
 */

import { isKpcError } from '../../errors.js';
import { lineError } from '../line-error.js';
import type { TextSource } from '../text-source.js';
import { NftTransaction, type NftBaseChainSpec, type NftFamily, type NftObject, type NftOperation, type NftVerb } from './model.js';
import { applyTransaction, emptyState, stateRule, type NftState, type StateChain, type StateElement, type StateSet } from './state.js';
import { checkElement, checkName, listedRuleProblem, listingHint } from './read-checks.js';

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

/** Named priorities of the ip/ip6/inet families (nft's `nft_chain_prio`). */
const PRIORITY_NAMES: Record<string, number> = { raw: -300, mangle: -150, dstnat: -100, filter: 0, security: 50, srcnat: 100 };

/** `-110`, `dstnat`, `dstnat - 10`, `srcnat + 5` → a number; undefined if not a priority. */
export function parsePriority(text: string): number | undefined {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return Number(t);
  const m = /^([a-z]+)(?:\s*([+-])\s*(\d+))?$/.exec(t);
  if (!m || PRIORITY_NAMES[m[1]!] === undefined) return undefined;
  const base = PRIORITY_NAMES[m[1]!]!;
  return m[2] === undefined ? base : m[2] === '+' ? base + Number(m[3]) : base - Number(m[3]);
}

/** `10800s`, `3h`, `1d2h`, `90m`, `500ms` → seconds (rounded down); undefined if not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const re = /(\d+)(ms|d|h|m|s)/g;
  let total = 0;
  let seen = '';
  for (const m of t.matchAll(re)) {
    seen += m[0];
    const n = Number(m[1]);
    total += m[2] === 'd' ? n * 86400 : m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
  }
  return seen === t && seen !== '' ? Math.floor(total) : undefined;
}

/** Splits on `sep` outside double quotes, braces, brackets and parentheses. */
export function splitTopLevel(s: string, sep = ','): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let cur = '';
  for (const ch of s) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && (ch === '{' || ch === '(' || ch === '[')) depth++;
    if (!quoted && (ch === '}' || ch === ')' || ch === ']')) depth--;
    if (!quoted && depth === 0 && ch === sep) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '') out.push(cur.trim());
  return out;
}

const TRAILING_COMMENT = /\s*comment\s+"((?:[^"\\]|\\.)*)"\s*$/;

/** A rule (or element) text and its trailing `comment "…"`. */
function splitComment(text: string): { body: string; comment?: string } {
  const m = TRAILING_COMMENT.exec(text);
  if (!m) return { body: text.trim() };
  return { body: text.slice(0, m.index).trim(), comment: m[1]! };
}

/** `KEY [timeout T] [expires E] [comment "C"] [: VALUE]` (the element's parts, one string). */
function parseElement(text: string, line: number, isMap: boolean): StateElement {
  let rest = text.trim();
  let comment: string | undefined;
  const cm = /\s*comment\s+"((?:[^"\\]|\\.)*)"/.exec(rest);
  if (cm) {
    comment = cm[1]!;
    rest = rest.slice(0, cm.index) + rest.slice(cm.index + cm[0].length);
  }
  let value = '';
  const colon = rest.indexOf(' : ');
  if (colon >= 0) {
    value = rest.slice(colon + 3).trim();
    rest = rest.slice(0, colon);
  } else if (isMap) throw lineError(line, `map element without a value: ${text}`);
  // A dynamic element's own timeout and expiry are the data plane's, not part of the key.
  rest = rest.replace(/\s+(timeout|expires)\s+\S+/g, '');
  const key = rest.trim().split(/\s+/).join(' ');
  if (key === '') throw lineError(line, `element without a key: ${text}`);
  return { key, value: value.split(/\s+/).join(' '), ...(comment !== undefined ? { comment } : {}) };
}

// ---------------------------------------------------------------------------------------------
// knftables' form
// ---------------------------------------------------------------------------------------------

const VERBS = new Set<NftVerb>(['add', 'flush', 'delete']);

/** `{ a ; b ; }` → ['a', 'b'] (the declaration's fields). */
function declarationFields(text: string, line: number): string[] {
  const t = text.trim();
  if (t === '') return [];
  if (!t.startsWith('{') || !t.endsWith('}')) throw lineError(line, `expected { … } after the name, got ${JSON.stringify(t)}`);
  return splitTopLevel(t.slice(1, -1), ';').filter((f) => f !== '');
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s;
}

/** One line of knftables' form as an operation (undefined for another table's line). */
function parseCommand(raw: string, line: number, family: NftFamily, table: string): { verb: NftVerb; object: NftObject } | undefined {
  const m = /^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(raw.trim());
  if (!m) throw lineError(line, `not an nft command: ${raw}`);
  const [, verbWord, kind, fam, tbl, rest] = m as unknown as [string, string, string, string, string, string];
  if (!VERBS.has(verbWord as NftVerb)) throw lineError(line, `unsupported nft command ${JSON.stringify(verbWord)} (kpc reads add, flush and delete)`);
  const verb = verbWord as NftVerb;
  if (fam !== 'ip' && fam !== 'ip6' && fam !== 'inet' && fam !== 'arp' && fam !== 'bridge' && fam !== 'netdev') {
    throw lineError(line, `unknown family ${JSON.stringify(fam)}`);
  }
  if (fam !== family || tbl !== table) return undefined;
  switch (kind) {
    case 'table': {
      const fields = declarationFields(rest, line);
      const c = fields.find((f) => f.startsWith('comment '));
      return { verb, object: { kind: 'table', ...(c ? { comment: unquote(c.slice(8).trim()) } : {}) } };
    }
    case 'chain': {
      const nm = /^(\S+)\s*(.*)$/.exec(rest);
      if (!nm) throw lineError(line, 'chain without a name');
      let base: NftBaseChainSpec | undefined;
      let comment: string | undefined;
      for (const f of declarationFields(nm[2]!, line)) {
        const bm = /^type\s+(\S+)\s+hook\s+(\S+)(?:\s+device\s+\S+)?\s+priority\s+(.+)$/.exec(f);
        if (bm) {
          const priority = parsePriority(bm[3]!);
          if (priority === undefined) throw lineError(line, `unknown priority ${bm[3]}`);
          base = { type: bm[1] as NftBaseChainSpec['type'], hook: bm[2] as NftBaseChainSpec['hook'], priority };
        } else if (f.startsWith('comment ')) comment = unquote(f.slice(8).trim());
        else if (!f.startsWith('policy ')) throw lineError(line, `unsupported chain property ${JSON.stringify(f)}`);
      }
      return { verb, object: { kind: 'chain', name: nm[1]!, ...(base ? { base } : {}), ...(comment !== undefined ? { comment } : {}) } };
    }
    case 'set':
    case 'map': {
      const nm = /^(\S+)\s*(.*)$/.exec(rest);
      if (!nm) throw lineError(line, `${kind} without a name`);
      let type = '';
      let flags: string[] | undefined;
      let timeout: number | undefined;
      let comment: string | undefined;
      for (const f of declarationFields(nm[2]!, line)) {
        const [k, ...v] = f.split(/\s+/);
        const val = v.join(' ');
        if (k === 'type') type = val;
        else if (k === 'flags') flags = val.split(/\s*,\s*/);
        else if (k === 'timeout') {
          timeout = parseDuration(val);
          if (timeout === undefined) throw lineError(line, `bad timeout ${val}`);
        } else if (k === 'comment') comment = unquote(val);
        else if (k !== 'size' && k !== 'policy' && k !== 'gc-interval') throw lineError(line, `unsupported ${kind} property ${JSON.stringify(f)}`);
      }
      return {
        verb,
        object: { kind, name: nm[1]!, type, ...(flags ? { flags } : {}), ...(timeout !== undefined ? { timeout } : {}), ...(comment !== undefined ? { comment } : {}) },
      };
    }
    case 'counter': {
      const name = rest.split(/\s+/)[0];
      if (!name) throw lineError(line, 'counter without a name');
      return { verb, object: { kind: 'counter', name } };
    }
    case 'element': {
      const em = /^(\S+)\s*\{(.*)\}\s*$/.exec(rest);
      if (!em) throw lineError(line, `element command without { … }: ${raw}`);
      const parts = splitTopLevel(em[2]!);
      if (parts.length !== 1) throw lineError(line, 'kpc reads one element per command');
      const el = parseElement(parts[0]!, line, false);
      return {
        verb,
        object: { kind: 'element', container: em[1]!, key: el.key.split(' . '), ...(el.value !== '' ? { value: el.value.split(' . ') } : {}), ...(el.comment !== undefined ? { comment: el.comment } : {}) },
      };
    }
    case 'rule': {
      const rm = /^(\S+)\s*(.*)$/.exec(rest);
      if (!rm) throw lineError(line, 'rule without a chain');
      if (verb !== 'add') throw lineError(line, `kpc cannot read "${verb} rule" (rules are deleted by handle, which a previous state cannot name)`);
      const { body, comment } = splitComment(rm[2]!);
      if (body === '') throw lineError(line, 'empty rule');
      return { verb, object: { kind: 'rule', chain: rm[1]!, rule: body, ...(comment !== undefined ? { comment } : {}) } };
    }
    default:
      throw lineError(line, `unsupported nft object ${JSON.stringify(kind)}`);
  }
}

const ELEMENT_HINT = 'write elements as kpc and kube-proxy do (tcp, not 6; ports as numbers)';

/**
 * One line of knftables' form, trimmed, as readTransaction reads it: the operation (undefined
 * for a blank line, a comment or another table's line), its names and elements checked.
 * `types` holds each set's type as declared by the lines read so far (an element is checked
 * against the type its set had when the element came).
 */
export function readCommandLine(l: string, line: number, family: NftFamily, table: string, types: Map<string, string>): NftOperation | undefined {
  if (l === '' || l.startsWith('#')) return undefined;
  const op = parseCommand(l, line, family, table);
  if (!op) return undefined;
  const o = op.object;
  if (o.kind === 'chain' || o.kind === 'set' || o.kind === 'map' || o.kind === 'counter') checkName(o.kind, o.name, line);
  if (o.kind === 'rule') checkName('chain', o.chain, line);
  if ((o.kind === 'set' || o.kind === 'map') && op.verb === 'add') types.set(o.name, o.type);
  if (o.kind === 'element') {
    checkName('set', o.container, line);
    checkElement(o.container, types.get(o.container) ?? '', o.key.join(' . '), (o.value ?? []).join(' . '), line, ELEMENT_HINT);
  }
  return op;
}

/** knftables' form (kpc's output, a kube-proxy transaction or dump) → the state `nft -f` leaves on an empty table. */
export function readTransaction(text: string, family: NftFamily, table: string): NftState {
  const tx = new NftTransaction(family, table);
  const types = new Map<string, string>();
  text.split('\n').forEach((raw, i) => {
    const op = readCommandLine(raw.trim(), i + 1, family, table, types);
    if (op) tx.ops.push(op);
  });
  return applyTransaction(emptyState(family, table), tx);
}

// ---------------------------------------------------------------------------------------------
// nft's listing
// ---------------------------------------------------------------------------------------------

interface BlockLine {
  text: string;
  line: number;
  /** A statement over several lines (`elements = { a,` … `b }`): where each line starts in `text`. */
  starts?: Array<{ offset: number; line: number }>;
}

interface Block {
  kind: string;
  name: string;
  line: number;
  lines: BlockLine[];
}

/** A line of `nft -a list …` without its trailing `# handle N` (outside quotes). */
function stripHandle(l: string): string {
  const i = l.lastIndexOf('# handle ');
  if (i < 0 || !/^# handle \d+$/.test(l.slice(i))) return l;
  let quoted = false;
  for (let k = 0; k < i; k++) if (l[k] === '"' && l[k - 1] !== '\\') quoted = !quoted;
  return quoted ? l : l.slice(0, i).trimEnd();
}

/** `nft list table` / `nft list ruleset` text → the state of table FAMILY NAME (exists: false if absent). */
export function readListing(text: string, family: NftFamily, table: string): NftState {
  const state = emptyState(family, table);
  const lines = text.split('\n');
  let inTable = false;
  let tableDepth = 0;
  let block: Block | undefined;
  const blocks: Block[] = [];
  // A statement over several lines, and its running brace depth (each line is scanned once).
  let pending: { parts: string[]; starts: Array<{ offset: number; line: number }>; length: number; line: number; depth: number } | undefined;
  let depth = 0;
  const braces = (s: string) => {
    let d = 0;
    let q = false;
    for (const ch of s) {
      if (ch === '"') q = !q;
      else if (!q && ch === '{') d++;
      else if (!q && ch === '}') d--;
    }
    return d;
  };
  for (let i = 0; i < lines.length; i++) {
    const l = stripHandle(lines[i]!.trim());
    const ln = i + 1;
    if (l === '' || l.startsWith('#')) continue;
    if (!inTable) {
      const tm = /^table\s+(\S+)\s+(\S+)\s*\{$/.exec(l);
      if (tm) {
        if (tm[1] === family && tm[2] === table) {
          inTable = true;
          state.exists = true;
          depth = 1;
        } else tableDepth = 1;
        continue;
      }
      if (tableDepth > 0) {
        tableDepth += braces(l);
        continue;
      }
      throw lineError(ln, `expected "table FAMILY NAME {", got ${JSON.stringify(l)}`);
    }
    // Inside our table.
    if (pending) {
      pending.starts.push({ offset: pending.length + 1, line: ln });
      pending.parts.push(l);
      pending.length += 1 + l.length;
      pending.depth += braces(l);
      if (pending.depth <= 0) {
        block!.lines.push({ text: pending.parts.join(' '), line: pending.line, starts: pending.starts });
        pending = undefined;
      }
      continue;
    }
    if (depth === 1) {
      if (l === '}') {
        inTable = false;
        depth = 0;
        continue;
      }
      const bm = /^(chain|set|map|counter|flowtable|quota|limit|ct\s+\S+|secmark|synproxy)\s+(\S+)\s*\{$/.exec(l);
      if (bm) {
        if (bm[1] === 'chain' || bm[1] === 'set' || bm[1] === 'map' || bm[1] === 'counter') checkName(bm[1], bm[2]!, ln);
        block = { kind: bm[1]!, name: bm[2]!, line: ln, lines: [] };
        blocks.push(block);
        depth = 2;
        continue;
      }
      const cm = /^comment\s+"((?:[^"\\]|\\.)*)"$/.exec(l);
      if (cm) {
        state.comment = cm[1]!;
        continue;
      }
      if (/^flags\s/.test(l)) continue;
      throw lineError(ln, `unexpected line in table ${family} ${table}: ${JSON.stringify(l)}`);
    }
    // depth 2: inside a block
    if (l === '}') {
      depth = 1;
      block = undefined;
      continue;
    }
    const d = braces(l);
    if (d > 0) {
      pending = { parts: [l], starts: [{ offset: 0, line: ln }], length: l.length, line: ln, depth: d };
      continue;
    }
    block!.lines.push({ text: l, line: ln });
  }
  if (inTable || pending) throw lineError(lines.length, `table ${family} ${table} is not closed (truncated listing?)`);

  const hint = listingHint(family, table);
  for (const b of blocks) {
    if (b.kind === 'chain') readChainBlock(state, b, hint);
    else if (b.kind === 'set' || b.kind === 'map') readSetBlock(state, b, hint);
    else if (b.kind === 'counter') state.counters.add(b.name);
    else throw lineError(b.line, `kpc does not read nft ${b.kind} objects (not kube-proxy's)`);
  }
  return state;
}

function readChainBlock(state: NftState, b: Block, hint: string): void {
  const chain: StateChain = { name: b.name, rules: [] };
  for (const { text, line } of b.lines) {
    const hm = /^type\s+(\S+)\s+hook\s+(\S+)(?:\s+device\s+\S+)?\s+priority\s+([^;]+);(?:\s*policy\s+\S+;)?$/.exec(text);
    if (hm && chain.rules.length === 0 && !chain.base) {
      const priority = parsePriority(hm[3]!);
      if (priority === undefined) throw lineError(line, `unknown priority ${hm[3]}`);
      chain.base = { type: hm[1] as NftBaseChainSpec['type'], hook: hm[2] as NftBaseChainSpec['hook'], priority };
      continue;
    }
    const cm = /^comment\s+"((?:[^"\\]|\\.)*)"$/.exec(text);
    if (cm && chain.rules.length === 0) {
      chain.comment = cm[1]!;
      continue;
    }
    const { body, comment } = splitComment(text);
    const problem = listedRuleProblem(body);
    if (problem) throw lineError(line, `rule of chain ${b.name}: ${problem}; ${hint}`);
    chain.rules.push(stateRule(body, comment));
  }
  state.chains.set(b.name, chain);
}

function readSetBlock(state: NftState, b: Block, hint: string): void {
  const set: StateSet = { kind: b.kind as 'set' | 'map', name: b.name, type: '', flags: [], elements: new Map() };
  const elementTexts: Array<{ text: string; line: number; offset: number; starts?: BlockLine['starts'] }> = [];
  for (const { text, line, starts } of b.lines) {
    const [k, ...v] = text.split(/\s+/);
    const val = v.join(' ');
    if (k === 'type') set.type = val;
    else if (k === 'flags') set.flags = val.split(/\s*,\s*/).filter((f) => f !== 'dynamic');
    else if (k === 'timeout') {
      const t = parseDuration(val);
      if (t === undefined) throw lineError(line, `bad timeout ${val}`);
      set.timeout = t;
    } else if (k === 'comment') set.comment = unquote(val);
    else if (k === 'elements') {
      const em = /^elements\s*=\s*\{(.*)\}$/.exec(text);
      if (!em) throw lineError(line, `bad elements: ${text}`);
      elementTexts.push({ text: em[1]!, line, offset: text.indexOf('{') + 1, ...(starts ? { starts } : {}) });
    } else if (k === 'size' || k === 'policy' || k === 'gc-interval' || k === 'auto-merge' || k === 'counter') continue;
    else throw lineError(line, `unsupported ${b.kind} property ${JSON.stringify(text)}`);
  }
  if (set.type === '') throw lineError(b.line, `${b.kind} ${b.name} without a type`);
  for (const { text, line, offset, starts } of elementTexts) {
    // Each element's own line: the last line that starts at or before it.
    let cursor = 0;
    let s = 0;
    for (const part of splitTopLevel(text)) {
      let at = line;
      if (starts) {
        const pos = text.indexOf(part, cursor);
        if (pos >= 0) {
          cursor = pos + part.length;
          while (s + 1 < starts.length && starts[s + 1]!.offset <= offset + pos) s++;
        }
        at = starts[s]!.line;
      }
      const el = parseElement(part, at, set.kind === 'map');
      checkElement(set.name, set.type, el.key, el.value, at, hint);
      set.elements.set(el.key, el);
    }
  }
  state.sets.set(b.name, set);
}

// ---------------------------------------------------------------------------------------------
// nft's JSON
// ---------------------------------------------------------------------------------------------

type J = unknown;
type JObject = Record<string, J>;

function isObject(v: J): v is JObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class JsonShapeError extends Error {}

function only(v: J): [string, J] {
  if (!isObject(v)) throw new JsonShapeError(`expected an object, got ${JSON.stringify(v)}`);
  const keys = Object.keys(v);
  if (keys.length !== 1) throw new JsonShapeError(`expected one key, got ${JSON.stringify(keys)}`);
  return [keys[0]!, v[keys[0]!]];
}

const BARE_META = new Set(['iifname', 'oifname', 'iif', 'oif', 'iiftype', 'oiftype', 'skuid', 'skgid', 'rtclassid']);

function hasMark(v: J): boolean {
  return JSON.stringify(v).includes('"mark"');
}

function hex8(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

/** One expression of libnftables' JSON as nft's listing prints it. */
function expr(v: J, markContext = false): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return markContext ? hex8(v) : String(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map((x) => expr(x, markContext)).join(' . ');
  const [k, a] = only(v);
  const o = (a ?? {}) as JObject;
  switch (k) {
    case 'payload':
      return `${o['protocol']} ${o['field']}`;
    case 'meta':
      return BARE_META.has(String(o['key'])) ? String(o['key']) : `meta ${o['key']}`;
    case 'ct':
      return `ct ${o['key']}`;
    case 'fib':
      return `fib ${(Array.isArray(o['flags']) ? o['flags'] : [o['flags']]).join(' . ')} ${o['result']}`;
    case 'concat':
      return (a as J[]).map((x) => expr(x, markContext)).join(' . ');
    case 'prefix':
      return `${o['addr']}/${o['len']}`;
    case 'range':
      return `${expr((a as J[])[0])}-${expr((a as J[])[1])}`;
    case 'set':
      return `{ ${(Array.isArray(a) ? a : [a]).map((x) => (Array.isArray(x) ? `${expr(x[0], markContext)} : ${verdictOrExpr(x[1])}` : expr(x, markContext))).join(', ')} }`;
    case '&':
    case '|':
    case '^':
    case '<<':
    case '>>': {
      const [l, r] = a as [J, J];
      const mc = markContext || hasMark(l);
      return `${expr(l, mc)} ${k} ${expr(r, mc)}`;
    }
    case 'numgen':
      return `numgen ${o['mode']} mod ${o['mod']}${o['offset'] ? ` offset ${o['offset']}` : ''}`;
    case 'map':
      return `${expr(o['key'])} map ${expr(o['data'])}`;
    case 'elem':
      return expr(o['val'], markContext);
    default:
      throw new JsonShapeError(`unsupported expression ${JSON.stringify(k)}`);
  }
}

function verdictOrExpr(v: J): string {
  if (isObject(v)) {
    const [k, a] = only(v);
    if (k === 'goto' || k === 'jump') return `${k} ${(a as JObject)['target']}`;
    if (['drop', 'accept', 'return', 'continue'].includes(k)) return k;
  }
  return expr(v);
}

/** One statement of a rule. */
function statement(v: J): string {
  const [k, a] = only(v);
  const o = (a ?? {}) as JObject;
  switch (k) {
    case 'match': {
      const left = o['left'];
      const mc = hasMark(left);
      const l = expr(left, mc);
      const r = expr(o['right'], mc);
      const op = String(o['op']);
      // nft prints `==` only after a bitwise expression (`meta mark & 0x4000 == 0x0`).
      const bitwise = isObject(left) && ['&', '|', '^'].some((b) => b in left);
      return (op === '==' && !bitwise) || op === 'in' ? `${l} ${r}` : `${l} ${op} ${r}`;
    }
    case 'jump':
    case 'goto':
      return `${k} ${o['target']}`;
    case 'drop':
    case 'accept':
    case 'return':
    case 'continue':
      return k;
    case 'reject': {
      if (a === null || a === undefined) return 'reject';
      const type = o['type'];
      const ex = o['expr'];
      if (ex === undefined || ex === 'port-unreachable') return 'reject';
      return `reject with ${type} ${ex}`;
    }
    case 'counter':
      if (typeof a === 'string') return `counter name "${a}"`;
      return 'counter';
    case 'mangle': {
      const key = o['key'];
      return `${expr(key)} set ${expr(o['value'], hasMark(key))}`;
    }
    case 'masquerade':
    case 'snat':
    case 'dnat': {
      if (k === 'masquerade') {
        const flags = o['flags'];
        return flags === undefined ? 'masquerade' : `masquerade ${Array.isArray(flags) ? flags.join(',') : flags}`;
      }
      const fam = o['family'] !== undefined ? `${o['family']} ` : '';
      const addr = o['addr'];
      let target = expr(addr);
      if (o['port'] !== undefined) target = `${typeof addr === 'string' && addr.includes(':') ? `[${addr}]` : target}:${expr(o['port'])}`;
      return `${k} ${fam}to ${target}`;
    }
    case 'vmap':
      return `${expr(o['key'])} vmap ${expr(o['data'])}`;
    case 'set':
      return `${o['op']} ${o['set']} { ${expr(o['elem'])} }`;
    case 'xt':
      throw new JsonShapeError('an xtables (iptables-nft) statement');
    default:
      throw new JsonShapeError(`unsupported statement ${JSON.stringify(k)}`);
  }
}

/** A rule's expressions, as nft's listing prints them. */
export function jsonRuleText(exprs: readonly J[]): string {
  return exprs.map(statement).join(' ');
}

function jsonType(t: J): string {
  return Array.isArray(t) ? t.join(' . ') : String(t);
}

function jsonElement(e: J, isMap: boolean, set: StateSet, hint: string): StateElement {
  let keyPart: J = e;
  let value = '';
  if (isMap) {
    if (!Array.isArray(e) || e.length !== 2) throw new JsonShapeError('a map element is [key, value]');
    keyPart = e[0];
    value = verdictOrExpr(e[1]);
  }
  let comment: string | undefined;
  if (isObject(keyPart) && 'elem' in keyPart) {
    const el = keyPart['elem'] as JObject;
    if (typeof el['comment'] === 'string') comment = el['comment'];
    keyPart = el['val'];
  }
  const key = expr(keyPart);
  checkElement(set.name, set.type, key, value, 1, hint);
  return { key, value, ...(comment !== undefined ? { comment } : {}) };
}

/** `nft -j list table` / `nft -j list ruleset` → the state of table FAMILY NAME. */
export function readJSON(text: string, family: NftFamily, table: string): NftState {
  let doc: J;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw lineError(1, `not JSON: ${(e as Error).message}`);
  }
  if (!isObject(doc) || !Array.isArray(doc['nftables'])) throw lineError(1, 'not nft JSON (no "nftables" array)');
  const state = emptyState(family, table);
  state.commentsKnown = false;
  const items = doc['nftables'] as J[];
  const hint = listingHint(family, table);
  items.forEach((item, i) => {
    try {
      if (!isObject(item)) return;
      const [kind, body] = only(item);
      const o = body as JObject;
      if (kind === 'metainfo') return;
      if (kind === 'table') {
        if (o['family'] === family && o['name'] === table) {
          state.exists = true;
          if (typeof o['comment'] === 'string') state.comment = o['comment'];
        }
        return;
      }
      if (o['family'] !== family || o['table'] !== table) return;
      const name = String(o['name']);
      if (kind === 'chain' || kind === 'set' || kind === 'map' || kind === 'counter') checkName(kind, name, 1);
      switch (kind) {
        case 'chain':
          state.chains.set(name, {
            name,
            ...(o['hook'] !== undefined ? { base: { type: o['type'] as NftBaseChainSpec['type'], hook: o['hook'] as NftBaseChainSpec['hook'], priority: Number(o['prio']) } } : {}),
            ...(typeof o['comment'] === 'string' ? { comment: o['comment'] } : {}),
            rules: [],
          });
          break;
        case 'set':
        case 'map': {
          const isMap = kind === 'map';
          const flags = (Array.isArray(o['flags']) ? o['flags'] : o['flags'] !== undefined ? [o['flags']] : []).map(String).filter((f) => f !== 'dynamic');
          const set: StateSet = {
            kind,
            name,
            type: isMap ? `${jsonType(o['type'])} : ${jsonType(o['map'])}` : jsonType(o['type']),
            flags,
            ...(typeof o['timeout'] === 'number' ? { timeout: o['timeout'] } : {}),
            ...(typeof o['comment'] === 'string' ? { comment: o['comment'] } : {}),
            elements: new Map(),
          };
          for (const e of (o['elem'] as J[] | undefined) ?? []) {
            const el = jsonElement(e, isMap, set, hint);
            set.elements.set(el.key, el);
          }
          state.sets.set(name, set);
          break;
        }
        case 'counter':
          state.counters.add(name);
          break;
        case 'rule': {
          const chain = state.chains.get(String(o['chain']));
          if (!chain) throw new JsonShapeError(`rule of an unlisted chain ${JSON.stringify(o['chain'])}`);
          const body = jsonRuleText(o['expr'] as J[]);
          const problem = listedRuleProblem(body);
          if (problem) throw lineError(1, `rule of chain ${chain.name}: ${problem}; ${hint}`);
          chain.rules.push(stateRule(body, typeof o['comment'] === 'string' ? o['comment'] : undefined));
          break;
        }
        default:
          throw new JsonShapeError(`kpc does not read nft ${kind} objects (not kube-proxy's)`);
      }
    } catch (e) {
      if (e instanceof JsonShapeError) throw lineError(1, `nftables[${i}]: ${e.message}`);
      if (isKpcError(e, 'previous.unreadable')) throw lineError(1, `nftables[${i}]: ${e.message}`);
      throw e;
    }
  });
  return state;
}

// ---------------------------------------------------------------------------------------------

export type NftStateForm = 'transaction' | 'listing' | 'json';

/** The first line that is not blank or a comment, trimmed (found without splitting 143 MB). */
export function firstSignificantLine(text: TextSource): string | undefined {
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const l = text.slice(start, end).trim();
    start = end + 1;
    if (l !== '' && !l.startsWith('#')) return l;
  }
  return undefined;
}

export function nftStateForm(text: string): NftStateForm {
  if (text.trimStart().startsWith('{')) return 'json';
  return /^table\s/.test(firstSignificantLine(text) ?? '') ? 'listing' : 'transaction';
}

/** Any of the three forms → the state of table FAMILY NAME. */
export function readNftState(text: string, family: NftFamily, table: string): { state: NftState; form: NftStateForm } {
  const form = nftStateForm(text);
  const state = form === 'json' ? readJSON(text, family, table) : form === 'listing' ? readListing(text, family, table) : readTransaction(text, family, table);
  return { state, form };
}

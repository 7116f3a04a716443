/**
 * The iptables state kpc compares: per table (filter, nat), per chain, the rules in order.
 *
 * Read from kpc's own output or a node's `iptables-save` (which also holds other components'
 * chains: those are kept, never touched), or built straight from the emitter's ruleset.
 * A rule is kept as the text it was written with; its canonical key (canonical.ts) and the
 * facts the diff report needs are worked out only when asked, once per distinct text: two
 * outputs of kpc share almost all their rule texts, so comparing them parses almost nothing.
 */

import { duplicateChain, type Ruleset } from '../../lang/iptables/ruleset.js';
import { gatheredChain, type Gathered } from '../../lang/iptables/print.js';
import { parseRuleArgs, TARGET_EXTENSIONS } from '../../lang/iptables/parse-rule.js';
import { readRules } from '../../lang/iptables/read.js';
import { tokenize } from '../../lang/iptables/tokenize.js';
import { isKpcError } from '../../errors.js';
import { lineError } from '../../lang/line-error.js';
import { BUILTIN_CHAIN_NAMES, checkReadChainName } from '../../lang/iptables/chains.js';
import { canonicalRule } from '../../lang/iptables/canonical.js';
import { editScriptBy, type Edit } from '../sequence.js';

interface Facts {
  /** The `-m comment` text, if any. */
  comment?: string;
  /** The chain it jumps or goes to, if its target is a chain. */
  jump?: string;
  /** DNAT's `--to-destination`, if that is its target. */
  dnat?: string;
}

/**
 * What each distinct rule text means, parsed once and shared by the states compared. The
 * canonical key (equal keys = the same kernel rule) is worked out apart, when first asked for:
 * the diff report reads the comment and jump of every rule of a 20,000-Service state to find
 * which Service port owns which chain, but compares keys only where two texts differ.
 */
/**
 * A copy of `text` that holds its own characters. V8 makes a substring of 13 characters or
 * more (split, slice) a view that keeps the whole string it was cut from reachable, so a rule
 * text cut from a chain's text keeps that chain's text alive. kpc watch keeps rules and memo
 * entries across many events, and each kept one pinned the chain texts of its event: at
 * 5,000 Services, 64 MB of them after 40,000 events (heap snapshots), growing the old
 * generation that every full collection marks. Concatenating flattens into a fresh string.
 */
export function ownText(text: string): string {
  return (' ' + text).slice(1);
}

export class RuleFacts {
  private readonly cache = new Map<string, Facts>();
  private readonly keys = new Map<string, string>();

  /**
   * `maxEntries`: a long-lived user (kpc watch, which sees rule texts come and go for ever)
   * bounds the memo; it is emptied when full (a text is then parsed again when asked).
   */
  constructor(
    readonly family: 'IPv4' | 'IPv6',
    private readonly maxEntries = Infinity,
  ) {}

  private parse(spec: string) {
    // A name that is not a target extension is a chain (the reader's rule when a chain is unknown).
    return parseRuleArgs(tokenize(spec), (name) => !TARGET_EXTENSIONS.has(name));
  }

  /**
   * The memo's key for a text. A long-lived memo (a bound is given) keys by a copy owning its
   * characters (ownText): a rule text cut from a chain's text would keep that whole text alive
   * as long as the entry lives.
   */
  private memoKey(spec: string): string {
    return this.maxEntries === Infinity ? spec : ownText(spec);
  }

  of(spec: string): Facts {
    let facts = this.cache.get(spec);
    if (!facts) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      // The facts are cut from the key (their texts then pin nothing else).
      const key = this.memoKey(spec);
      const parsed = this.parse(key);
      facts = {};
      if (parsed.comment !== undefined) facts.comment = parsed.comment;
      if (parsed.target?.kind === 'chain') facts.jump = parsed.target.chain;
      if (parsed.target?.kind === 'DNAT') facts.dnat = parsed.target.to;
      this.cache.set(key, facts);
    }
    return facts;
  }

  /** Canonical form: equal keys = the same kernel rule. */
  keyOf(spec: string): string {
    let key = this.keys.get(spec);
    if (key === undefined) {
      if (this.keys.size >= this.maxEntries) this.keys.clear();
      const own = this.memoKey(spec);
      key = canonicalRule(this.parse(own), this.family);
      this.keys.set(own, key);
    }
    return key;
  }
}

export class RuleState {
  constructor(
    /** The rule's arguments as the text had them (valid for -A, -I and -D). */
    readonly spec: string,
    private readonly facts: RuleFacts,
    /** Its line in the text it was read from (0 when built from kpc's own ruleset). */
    readonly line = 0,
  ) {}

  /** Parsed on first use; a rule that does not parse is reported with its line. */
  private placed<T>(work: () => T): T {
    try {
      return work();
    } catch (e) {
      if (isKpcError(e, 'previous.unreadable')) throw lineError(this.line, `${e.message} (in: -A ... ${this.spec})`);
      throw e;
    }
  }

  private get parsed(): Facts {
    return this.placed(() => this.facts.of(this.spec));
  }

  get key(): string {
    return this.placed(() => this.facts.keyOf(this.spec));
  }
  get comment(): string | undefined {
    return this.parsed.comment;
  }
  get jump(): string | undefined {
    return this.parsed.jump;
  }
  get dnat(): string | undefined {
    return this.parsed.dnat;
  }
}

export interface ChainState {
  name: string;
  builtin: boolean;
  rules: RuleState[];
  /**
   * The rules are a window of a longer chain: its rules from `offset` on, of `total` in all,
   * the rest being the same in both states compared (kpc watch compares only the part of
   * KUBE-SERVICES that one Service's rules are in). Only for a top-level chain whose change
   * is a few rule edits, never rewritten whole (renderDelta refuses to).
   */
  window?: { offset: number; total: number };
  /**
   * The rules as restore lines (`-A NAME ...\n` each), when known (kpc's layout, or built from
   * a ruleset): two chains with equal texts have the same rules, without making a RuleState
   * of either (sameRules). Whoever changes a chain's rules in place (kpc watch) must hold them
   * in a chain of its own, without a text.
   */
  text?: string;
}

/**
 * A chain whose rules are made from its text when first asked for: most of the 250,000 chains
 * of a 20,000-Service state are only compared by text, never rule by rule.
 */
export class TextChain implements ChainState {
  private made: RuleState[] | undefined;

  constructor(
    readonly name: string,
    readonly builtin: boolean,
    readonly text: string,
    private readonly facts: RuleFacts,
    /** The line of the first rule in the text it was read from (0: built, not read). */
    private readonly firstLine: number,
    /** Built from the emitter's per-service chain of this service port (Table.declareNew). */
    readonly port?: string,
  ) {}

  /** Made from kpc's own ruleset (its text is kpc's output), not read from a file. */
  get built(): boolean {
    return this.firstLine === 0;
  }

  get rules(): RuleState[] {
    if (this.made === undefined) {
      const prefix = `-A ${this.name} `.length;
      const lines = this.text === '' ? [] : this.text.slice(0, -1).split('\n');
      this.made = lines.map((l, k) => new RuleState(l.slice(prefix), this.facts, this.firstLine === 0 ? 0 : this.firstLine + k));
    }
    return this.made;
  }
}

export type TableState = Map<string, ChainState>;

/** A table's chains by name, as the diff report looks them up: a TableState, or BuiltChains. */
export interface ChainLookup {
  get(name: string): ChainState | undefined;
  has(name: string): boolean;
}

/** Tables by name; only the tables kube-proxy writes are kept. */
export type IptablesState = Map<'filter' | 'nat', TableState>;

const TABLES = ['filter', 'nat'] as const;

function emptyState(): IptablesState {
  return new Map(TABLES.map((t) => [t, new Map()]));
}

/**
 * Read restore text or iptables-save output. The common lines (`*table`, `:CHAIN`, `-A`,
 * counters, COMMIT) are read here directly; any other command (-I, -D, -F, -X, -N, -P) makes
 * the full reader of src/trace replay the text as iptables-restore would.
 */
export function readState(text: string, factsOrFamily: RuleFacts | 'IPv4' | 'IPv6'): IptablesState {
  const facts = typeof factsOrFamily === 'string' ? new RuleFacts(factsOrFamily) : factsOrFamily;
  return readKpcLayout(text, facts) ?? readStateByLines(text, facts);
}

/** readState line by line, a RuleState per rule (exported for the test of readKpcLayout). */
export function readStateByLines(text: string, facts: RuleFacts): IptablesState {
  const state = emptyState();
  let table: TableState | undefined;
  let open: string | undefined;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('*')) {
      if (open !== undefined) throw lineError(n + 1, `table ${line.slice(1)} starts before COMMIT of table ${open}`);
      open = line.slice(1);
      table = state.get(open as 'filter' | 'nat');
      continue;
    }
    if (line === 'COMMIT') {
      table = undefined;
      open = undefined;
      continue;
    }
    if (line.startsWith(':')) {
      if (table) {
        const name = checkReadChainName(line.slice(1).split(/\s/)[0]!, n + 1);
        table.set(name, { name, builtin: BUILTIN_CHAIN_NAMES.has(name), rules: [] });
      }
      continue;
    }
    if (line.startsWith('[')) line = line.replace(/^\[\d+:\d+\]\s+/, '');
    const m = /^-A (\S+) (.*)$/.exec(line);
    if (!m) return readStateFully(text, facts);
    if (!table) continue; // a table kube-proxy does not write (mangle, raw, ...)
    const chain = table.get(m[1]!);
    if (!chain) return readStateFully(text, facts);
    chain.rules.push(new RuleState(m[2]!, facts, n + 1));
  }
  // A capture cut short would make the delta re-add rules the node already has.
  if (open !== undefined) throw lineError(lines.length, `table ${open} has no COMMIT (a truncated file?)`);
  return state;
}

/** Characters that make trim(), \\s, \\S or `.` of readState's reading differ from plain ASCII splitting. */
const NOT_PLAIN = /[^\n\x20-\x7e]/;

/**
 * readState for text in kpc's own layout (and iptables-save's, for the filter and nat
 * tables), without a RuleState per rule: per table, the chain lines, then each chain's `-A`
 * lines together, once; blank and `#` lines only between chains; COMMIT closing each table;
 * printable ASCII only. Each chain keeps its lines as one slice of the text (TextChain). The
 * state is the one readState's line-by-line reading gives (the same chains, rules and lines);
 * any other text gives undefined, and that reading (with its errors) is used instead.
 */
export function readKpcLayout(text: string, facts: RuleFacts): IptablesState | undefined {
  if (NOT_PLAIN.test(text)) return undefined;
  const state = emptyState();
  let table: TableState | undefined;
  /** The table is not one kpc keeps: its lines are checked as readState checks them, and dropped. */
  let skipping = false;
  /** The chains of the open table whose rules have been read, and whether rules have begun. */
  let done: Set<string> = new Set();
  let rulesBegun = false;
  /** The chain whose `-A` lines are being read: its name, first offset and line. */
  let run: string | undefined;
  let runStart = 0;
  let runLine = 0;
  const names = new Map<string, { builtin: boolean; first: number; start: number; end: number }>();
  const endRun = (end: number): void => {
    if (run === undefined) return;
    const c = names.get(run)!;
    c.start = runStart;
    c.end = end;
    c.first = runLine;
    done.add(run);
    run = undefined;
  };
  const closeTable = (): void => {
    if (table !== undefined) {
      for (const [name, c] of names) table.set(name, new TextChain(name, c.builtin, text.slice(c.start, c.end), facts, c.first));
    }
    names.clear();
    done = new Set();
  };
  let open = false;
  let at = 0;
  let lineNo = 0;
  while (at < text.length) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    lineNo++;
    const first = text.charCodeAt(at);
    const empty = end === at;
    if (!empty && (first === 0x20 || text.charCodeAt(end - 1) === 0x20)) return undefined; // trimmed by readState
    if (first === 0x2d /* - */ && text.startsWith('-A ', at)) {
      // The next rule of the chain being read (most lines): no more to check.
      if (run !== undefined && text.charCodeAt(at + 3 + run.length) === 0x20 && text.startsWith(run, at + 3)) {
        at = end + 1;
        continue;
      }
      const nameEnd = text.indexOf(' ', at + 3);
      if (!open || nameEnd < 0 || nameEnd >= end || nameEnd === at + 3) return undefined;
      rulesBegun = true;
      if (skipping) {
        at = end + 1;
        continue;
      }
      endRun(at);
      const name = text.slice(at + 3, nameEnd);
      if (!names.has(name) || done.has(name)) return undefined; // undeclared, or a second run of its rules
      run = name;
      runStart = at;
      runLine = lineNo;
    } else if (empty || first === 0x23 /* # */) {
      endRun(at);
    } else if (first === 0x3a /* : */) {
      if (!open || rulesBegun) return undefined;
      if (!skipping) {
        const sp = text.indexOf(' ', at);
        const name = text.slice(at + 1, sp < 0 || sp > end ? end : sp);
        if (name === '' || names.has(name)) return undefined;
        checkReadChainName(name, lineNo);
        names.set(name, { builtin: BUILTIN_CHAIN_NAMES.has(name), first: 0, start: 0, end: 0 });
      }
    } else if (first === 0x2a /* * */) {
      if (open) return undefined;
      open = true;
      rulesBegun = false;
      const name = text.slice(at + 1, end);
      table = state.get(name as 'filter' | 'nat');
      skipping = table === undefined;
    } else if (end - at === 6 && text.startsWith('COMMIT', at)) {
      if (!open) return undefined;
      endRun(at);
      closeTable();
      open = false;
      table = undefined;
      skipping = false;
    } else {
      return undefined;
    }
    at = end + 1;
  }
  if (open) return undefined;
  return state;
}

function readStateFully(text: string, facts: RuleFacts): IptablesState {
  const ruleset = readRules(text);
  const state = emptyState();
  for (const name of TABLES) {
    const chains = state.get(name)!;
    for (const chain of ruleset.tables.get(name)?.chains.values() ?? []) {
      chains.set(chain.name, { name: chain.name, builtin: chain.builtin, rules: chain.rules.filter((r) => !r.implicit).map((r) => new RuleState(r.spec, facts, r.line)) });
    }
  }
  return state;
}

/** The tables made by stateOfRuleset: every chain is the emitter's, each per-service one tagged with its port. */
const builtTables = new WeakSet<TableState>();

/** Whether `table` is made whole from the emitter's ruleset (stateOfRuleset), unchanged since. */
export function isBuiltTable(table: TableState): boolean {
  return builtTables.has(table);
}

/** The state of the emitter's ruleset, without printing and re-reading it (rules made when asked for). */
export function stateOfRuleset(rs: Ruleset, facts: RuleFacts): IptablesState {
  const state = emptyState();
  for (const name of TABLES) {
    const chains = state.get(name)!;
    // The declared chains as a list (Table.chains would build a map of them first); a name
    // declared twice is the same internal error as there.
    for (const chain of rs[name].allChains()) {
      const size = chains.size;
      chains.set(chain.name, new TextChain(chain.name, BUILTIN_CHAIN_NAMES.has(chain.name), chain.text(), facts, 0, chain.port));
      if (chains.size === size) throw duplicateChain(name, chain.name);
    }
    builtTables.add(chains);
  }
  return state;
}

/**
 * The chains of a table the emitter built, each made into its state when first asked for: the
 * chain stateOfRuleset would give (the same text and port; the same object on every ask), with
 * no state made for the 260,000 chains of 20,000 Services that nobody asks about. A report
 * that follows the jumps of a few ports looks up a few hundred.
 */
export class BuiltChains implements ChainLookup {
  private readonly made = new Map<string, ChainState | null>();

  constructor(
    private readonly table: Gathered,
    private readonly facts: RuleFacts,
  ) {}

  get(name: string): ChainState | undefined {
    let chain = this.made.get(name);
    if (chain === undefined) {
      const rules = gatheredChain(this.table, name);
      chain = rules === undefined ? null : new TextChain(name, BUILTIN_CHAIN_NAMES.has(name), rules.text(), this.facts, 0, rules.port);
      this.made.set(name, chain);
    }
    return chain ?? undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/**
 * How many Service rules a state's KUBE-SERVICES chains hold (nat: a jump per service port
 * with endpoints; filter: a REJECT per one without), the node-ports jump left out.
 */
export function countServiceRules(state: IptablesState): number {
  let n = 0;
  for (const table of ['nat', 'filter'] as const) {
    for (const rule of state.get(table)?.get('KUBE-SERVICES')?.rules ?? []) if (!rule.spec.includes('-j KUBE-NODEPORTS')) n++;
  }
  return n;
}

/** kube-proxy's per-service chains in nat (proxier.go isServiceChainName): the ones it deletes when stale. */
export function isServiceChain(name: string): boolean {
  return /^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(name);
}

/** The long top-level chains that hold one or more rules per service port: diffed rule by rule. */
export const TOP_LEVEL_CHAINS: ReadonlySet<string> = new Set(['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL']);

/** Same rules in the same order: by text first (cheap), by canonical key where texts differ. */
export function sameRules(a: ChainState | undefined, b: ChainState | undefined): boolean {
  if (!a || !b) return false;
  if (a.text !== undefined && a.text === b.text) return true;
  if (a.rules.length !== b.rules.length) return false;
  if (a.rules === b.rules) return true;
  return a.rules.every((r, k) => r.spec === b.rules[k]!.spec || r.key === b.rules[k]!.key);
}

/** kube-proxy's fixed chains: rewritten whole when they differ, never deleted. */
const FIXED_CHAINS: Readonly<Record<string, ReadonlySet<string>>> = {
  filter: new Set(['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL', 'KUBE-FIREWALL']),
  nat: new Set(['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']),
};

/** The chains kpc compares and changes: kube-proxy's fixed chains and its per-service chains. */
export function isKubeProxyChain(table: string, name: string): boolean {
  return (FIXED_CHAINS[table]?.has(name) ?? false) || (table === 'nat' && isServiceChain(name));
}

/** The edit script between two rule lists: by text where it is equal (cheap), else by canonical key. */
export function ruleEditScript(before: readonly RuleState[], after: readonly RuleState[], maxEdits = Infinity): Edit[] | undefined {
  return editScriptBy(before, after, (x, y) => x.spec === y.spec, (r) => r.key, maxEdits);
}

/**
 * The iptables state kpc compares: per table (filter, nat), per chain, the rules in order.
 *
 * Read from kpc's own output or a node's `iptables-save` (which also holds other components'
 * chains: those are kept, never touched), or built straight from the emitter's ruleset.
 * A rule is kept as the text it was written with; its canonical key (canonical.ts) and the
 * facts the diff report needs are worked out only when asked, once per distinct text: two
 * outputs of kpc share almost all their rule texts, so comparing them parses almost nothing.
 */

import type { Ruleset } from '../../lang/iptables/ruleset.js';
import { parseRuleArgs, TARGET_EXTENSIONS } from '../../lang/iptables/parse-rule.js';
import { readRules } from '../../lang/iptables/read.js';
import { tokenize } from '../../lang/iptables/tokenize.js';
import { isKpcError } from '../../errors.js';
import { lineError } from '../../lang/line-error.js';
import { BUILTIN_CHAIN_NAMES, checkReadChainName } from '../../lang/iptables/chains.js';
import { canonicalRule } from '../../lang/iptables/canonical.js';
import { editScriptBy, type Edit } from '../sequence.js';

interface Facts {
  /** Canonical form: equal keys = the same kernel rule. */
  key: string;
  /** The `-m comment` text, if any. */
  comment?: string;
  /** The chain it jumps or goes to, if its target is a chain. */
  jump?: string;
  /** DNAT's `--to-destination`, if that is its target. */
  dnat?: string;
}

/** What each distinct rule text means, parsed once and shared by the states compared. */
export class RuleFacts {
  private readonly cache = new Map<string, Facts>();

  /**
   * `maxEntries`: a long-lived user (kpc watch, which sees rule texts come and go for ever)
   * bounds the memo; it is emptied when full (a text is then parsed again when asked).
   */
  constructor(
    readonly family: 'IPv4' | 'IPv6',
    private readonly maxEntries = Infinity,
  ) {}

  of(spec: string): Facts {
    let facts = this.cache.get(spec);
    if (!facts) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      // A name that is not a target extension is a chain (the reader's rule when a chain is unknown).
      const parsed = parseRuleArgs(tokenize(spec), (name) => !TARGET_EXTENSIONS.has(name));
      facts = { key: canonicalRule(parsed, this.family) };
      if (parsed.comment !== undefined) facts.comment = parsed.comment;
      if (parsed.target?.kind === 'chain') facts.jump = parsed.target.chain;
      if (parsed.target?.kind === 'DNAT') facts.dnat = parsed.target.to;
      this.cache.set(spec, facts);
    }
    return facts;
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
  private get parsed(): Facts {
    try {
      return this.facts.of(this.spec);
    } catch (e) {
      if (isKpcError(e, 'previous.unreadable')) throw lineError(this.line, `${e.message} (in: -A ... ${this.spec})`);
      throw e;
    }
  }

  get key(): string {
    return this.parsed.key;
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
}

export type TableState = Map<string, ChainState>;

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

/** The state of the emitter's ruleset, without printing and re-reading it. */
export function stateOfRuleset(rs: Ruleset, facts: RuleFacts): IptablesState {
  const state = emptyState();
  for (const name of TABLES) {
    const chains = state.get(name)!;
    for (const chain of rs[name].chains.values()) {
      const prefix = `-A ${chain.name} `.length;
      chains.set(chain.name, { name: chain.name, builtin: BUILTIN_CHAIN_NAMES.has(chain.name), rules: chain.lines().map((l) => new RuleState(l.slice(prefix), facts)) });
    }
  }
  return state;
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
  if (!a || !b || a.rules.length !== b.rules.length) return false;
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

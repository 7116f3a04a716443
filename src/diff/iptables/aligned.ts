/**
 * A previous output in kpc's own printed form, read against the new ruleset chain by chain:
 * only the chains whose text differs are made into states.
 *
 * Why: `compile --previous` with one Service changed at 20,000 Services reads a 78 MB file of
 * 263,000 chains to write a few dozen lines. Both texts are printed in kpc's canonical order
 * (print.ts: tables filter then nat, the chain lines, then each chain's rules in the same
 * order), so the new ruleset can be walked alongside the previous text: a chain whose rules
 * are byte-equal in both (almost all) is skipped by one comparison, without a slice, a chain
 * object or a line split. The chains that differ, or are in one text only, come out as the two
 * states readState and stateOfRuleset would give for them (same names, rules, line numbers);
 * the built-in chains are always given on both sides (the delta reads their rules whole).
 *
 * What is left out is what both states hold alike, so a consumer that only looks at chains
 * that differ (renderDelta without --full) gives the same result on these states as on the
 * whole ones. The diff report is not such a consumer (it follows jumps through unchanged
 * chains): diffChangedStates looks the unchanged ones up in the new ruleset, and where it
 * needs every chain it is given the whole states, the previous one made of the new one's
 * unchanged chains and the previous differing ones (wholeStates).
 *
 * The reader takes only text that readKpcLayout would read the same way and is stricter
 * than it: exactly `*filter` then `*nat`, no comment or blank lines, each table's chain lines
 * and rule runs in canonical order. Any other text, and any line readKpcLayout would refuse
 * or read otherwise (a non-ASCII character, a leading or trailing blank, a bad chain name, a
 * rule of an undeclared chain, a second run), gives undefined: the caller then reads the file
 * whole (readState), errors included. It never throws for the file's content. The parts it
 * skips are byte-equal to kpc's own output, which is printable ASCII in that layout
 * (lang/iptables/safe-text.ts), so they are what readKpcLayout accepts.
 */

import { chainLines, chainRank, type Gathered, type GatheredRuleset } from '../../lang/iptables/print.js';
import { BUILTIN_CHAIN_NAMES, checkReadChainName } from '../../lang/iptables/chains.js';
import type { ByteWindow } from '../byte-window.js';
import { TextChain, type ChainState, type IptablesState, type RuleFacts, type TableState } from './state.js';

/** The differing chains of each side (see the file comment). */
export interface ChangedChains {
  before: IptablesState;
  after: IptablesState;
}

/**
 * The whole previous state from the whole new one and the chains that differ (readChangedChains):
 * every other chain's text is the same in both, so the previous state shares those chains
 * with the new one (the same objects: what is worked out of a chain once serves both).
 */
export function wholeStates(changed: ChangedChains, after: IptablesState): { before: IptablesState; after: IptablesState } {
  const before: IptablesState = new Map();
  for (const [table, chains] of after) {
    const differing = changed.before.get(table) ?? new Map();
    const mine = new Map(chains);
    for (const name of changed.after.get(table)?.keys() ?? []) if (!differing.has(name)) mine.delete(name);
    for (const [name, chain] of differing) mine.set(name, chain);
    before.set(table, mine);
  }
  return { before, after };
}

/** The printer's order of chain names: rank, then by name. */
function compareChains(a: string, b: string): number {
  return chainRank(a) - chainRank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Thrown inside the reader for text it leaves to readState; never escapes readChangedChains. */
class NotAligned {}
const NOT_ALIGNED = new NotAligned();

/** How many characters of equal chain lines are compared at once (then line by line). */
const STRETCH = 4096;
/** How many characters of equal per-service chains' rules are compared at once (then chain by chain). */
const STRETCH_RULES = 1 << 16;
/** At most this many chains in one stretch (then one by one after a stretch that differs). */
const STRETCH_CHAINS = 64;

function refuse(): never {
  throw NOT_ALIGNED;
}

/**
 * The chains of the previous text (its bytes, read as the reader moves on: no 78 MB copy held)
 * and of the new ruleset (as printed: gathered) that differ, or undefined when the previous
 * text is not read here (see the file comment).
 */
export function readChangedChains(previous: ByteWindow, rs: GatheredRuleset, facts: RuleFacts): ChangedChains | undefined {
  const before: IptablesState = new Map([['filter', new Map()], ['nat', new Map()]]);
  const after: IptablesState = new Map([['filter', new Map()], ['nat', new Map()]]);
  try {
    const reader = new Reader(previous, facts);
    reader.table(rs.filter, before.get('filter')!, after.get('filter')!);
    reader.table(rs.nat, before.get('nat')!, after.get('nat')!);
    if (reader.at !== previous.length) refuse();
  } catch (e) {
    if (e === NOT_ALIGNED) return undefined;
    throw e;
  }
  return { before, after };
}

const NL = 0x0a;
const SPACE = 0x20;

class Reader {
  /** Where the next line starts, and its number (1-based). */
  at = 0;
  line = 1;
  /** A string's bytes, to compare with the text's (one memory compare; no string made). */
  private scratch = Buffer.allocUnsafe(1 << 16);

  constructor(
    private readonly text: ByteWindow,
    private readonly facts: RuleFacts,
  ) {}

  /** Whether the text has `part` (ASCII) at `at`. */
  private has(part: string, at: number): boolean {
    const n = part.length;
    if (this.text.length - at < n) return false;
    if (n <= 32) {
      for (let k = 0; k < n; k++) if (this.text.at(at + k) !== part.charCodeAt(k)) return false;
      return true;
    }
    if (this.scratch.length < n) this.scratch = Buffer.allocUnsafe(Math.max(n, this.scratch.length * 2));
    this.scratch.write(part, 0, n, 'latin1');
    return this.text.equals(this.scratch, n, at);
  }

  /** Whether the line at `at` is a rule of chain `name` (`-A name `). */
  private ruleOf(name: string, at: number): boolean {
    const t = this.text;
    return t.at(at) === 0x2d && t.at(at + 1) === 0x41 && t.at(at + 2) === SPACE && t.at(at + 3 + name.length) === SPACE && this.has(name, at + 3);
  }

  private isRule(at: number): boolean {
    const t = this.text;
    return t.at(at) === 0x2d && t.at(at + 1) === 0x41 && t.at(at + 2) === SPACE;
  }

  /** The end of the line at `at` (the index of its '\n'), refusing a last line without one. */
  private lineEnd(at: number): number {
    const end = this.text.indexOf(NL, at);
    if (end < 0) refuse();
    return end;
  }

  /** One line that is read here (not skipped as equal): readKpcLayout's per-line checks (printable ASCII, no blank at either end). */
  private checkLine(at: number, end: number): void {
    const t = this.text;
    if (end === at || t.at(at) === SPACE || t.at(end - 1) === SPACE) refuse();
    for (let k = at; k < end; k++) {
      const c = t.at(k);
      if (c < 0x20 || c > 0x7e) refuse();
    }
  }

  private string(start: number, end: number): string {
    return this.text.latin1(start, end);
  }

  table(g: Gathered, before: TableState, after: TableState): void {
    // The chains in printed order (declaration indexes), and each one's rank (print.ts chainRank).
    const order: number[] = [];
    const ranks: number[] = [];
    g.order.forEach((bucket, rank) => {
      for (const i of bucket) {
        order.push(i);
        ranks.push(rank);
      }
    });
    const head = `*${g.table.name}\n`;
    if (!this.has(head, this.at)) refuse();
    this.at += head.length;
    this.line++;
    const onlyPrevious = new Set<string>();
    const onlyNew = this.declarations(g, order, onlyPrevious);
    this.rules(g, order, ranks, onlyNew, onlyPrevious, before, after);
    if (!this.has('COMMIT', this.at)) refuse();
    this.at += 6;
    if (this.at < this.text.length) {
      if (this.text.at(this.at) !== NL) refuse();
      this.at++;
      this.line++;
    }
  }

  /**
   * The chain lines: equal to the new ones (one comparison), or merged with them in canonical
   * order. Fills `onlyPrevious` with the names only the previous text declares; returns, per
   * chain of the new table (its declaration index), whether only the new one declares it.
   */
  private declarations(g: Gathered, order: readonly number[], onlyPrevious: Set<string>): Uint8Array {
    const text = this.text;
    const lines = chainLines(g);
    const onlyNew = new Uint8Array(g.chains.length);
    if (this.has(lines, this.at) && text.at(this.at + lines.length) !== 0x3a) {
      this.at += lines.length;
      this.line += g.chains.length;
      return onlyNew;
    }
    const names = g.keys.names;
    let k = 0;
    let q = 0;
    /** The last chain line read of the previous text: its name is in canonical order. */
    let last: string | undefined;
    for (;;) {
      const previousHas = text.at(this.at) === 0x3a;
      const newHas = k < order.length;
      if (!previousHas && !newHas) break;
      const newEnd = newHas ? lines.indexOf('\n', q) : -1;
      if (previousHas && newHas) {
        // Most lines are equal: try a few thousand characters of them at once.
        const stretchEnd = lines.indexOf('\n', q + STRETCH);
        if (stretchEnd > newEnd && this.has(lines.slice(q, stretchEnd + 1), this.at)) {
          let n = 0;
          for (let e = q - 1; e < stretchEnd; e = lines.indexOf('\n', e + 1)) n++;
          k += n;
          last = names[order[k - 1]!]!;
          this.at += stretchEnd + 1 - q;
          this.line += n;
          q = stretchEnd + 1;
          continue;
        }
        const prevEnd = this.lineEnd(this.at);
        if (prevEnd - this.at === newEnd - q && this.has(lines.slice(q, newEnd), this.at)) {
          last = names[order[k]!]!;
          this.at = prevEnd + 1;
          this.line++;
          q = newEnd + 1;
          k++;
          continue;
        }
      }
      let name: string | undefined;
      if (previousHas) {
        const end = this.lineEnd(this.at);
        this.checkLine(this.at, end);
        const sp = text.indexOf(SPACE, this.at);
        name = this.string(this.at + 1, sp < 0 || sp > end ? end : sp);
        if (name === '') refuse();
        try {
          checkReadChainName(name, this.line);
        } catch {
          refuse();
        }
        if (last !== undefined && compareChains(last, name) >= 0) refuse(); // out of order, or declared twice
      }
      const c = name === undefined ? 1 : !newHas ? -1 : compareChains(name, names[order[k]!]!);
      if (c <= 0) {
        // In the previous text only, or in both (its line differs: a policy or counters).
        if (c < 0) onlyPrevious.add(name!);
        last = name;
        this.at = this.lineEnd(this.at) + 1;
        this.line++;
      }
      if (c >= 0) {
        if (c > 0) onlyNew[order[k]!] = 1;
        q = newEnd + 1;
        k++;
      }
    }
    return onlyNew;
  }

  /**
   * The rule runs, merged with the new table's chains in canonical order. Equal runs are
   * skipped; the others, and the chains in one text only, go into the states, the new side
   * in the new table's declaration order (as stateOfRuleset has them), the previous side in
   * canonical order.
   */
  private rules(g: Gathered, order: readonly number[], ranks: readonly number[], onlyNew: Uint8Array, onlyPrevious: Set<string>, before: TableState, after: TableState): void {
    const names = g.keys.names;
    /** New chains for `after`, by declaration index. */
    const changed: number[] = [];
    const made = new Set<string>();
    /**
     * The previous text's last rule run read here, and the last new chain with its rank. The
     * runs skipped as equal to a new chain are in order because the new chains are (checked
     * here, rank by rank: the merge relies on it), so only the others are checked.
     */
    let lastRun: string | undefined;
    let lastNew: string | undefined;
    let lastRank = -1;
    const addBefore = (chain: ChainState): void => {
      before.set(chain.name, chain);
      made.add(chain.name);
    };
    /** A run of a chain the new table does not have (or not at this place): in order, and declared. */
    const previousOnly = (): void => {
      const name = this.runName();
      if (!onlyPrevious.has(name)) refuse(); // undeclared (a declared one would be a new chain, met before in this order)
      if (lastRun !== undefined && compareChains(lastRun, name) >= 0) refuse(); // a second run, or out of order
      lastRun = name;
      addBefore(this.run(name));
    };
    let k = 0;
    /** Below this, chains are compared one by one (a stretch from before it differed). */
    let oneByOne = 0;
    for (;;) {
      const previousHas = this.isRule(this.at);
      if (k >= order.length) {
        if (!previousHas) break;
        previousOnly();
        continue;
      }
      const i = order[k]!;
      const chain = g.chains[i]!;
      const name = names[i]!;
      const rank = ranks[k]!;
      if (lastNew !== name) {
        if (rank < lastRank || (rank === lastRank && lastNew! >= name)) refuse(); // not the printer's order (cannot happen)
        lastNew = name;
        lastRank = rank;
      }
      if (rank === 2 && previousHas && chain.count > 0 && k >= oneByOne) {
        const skipped = this.equalStretch(g, order, ranks, k, onlyNew, changed);
        if (skipped > 0) {
          k += skipped;
          lastNew = lastRun = names[order[k - 1]!]!;
          continue;
        }
        // Something in the next stretch differs: its chains one by one (not one stretch after another).
        oneByOne = k + STRETCH_CHAINS;
      }
      // Built-in chains are not KUBE-* (the last rank).
      const builtin = rank === 3 && BUILTIN_CHAIN_NAMES.has(name);
      if (chain.count > 0 && previousHas) {
        const rules = chain.text();
        const end = this.at + rules.length;
        if (this.has(rules, this.at) && !this.ruleOf(name, end)) {
          if (onlyNew[i] === 1) refuse(); // rules of a chain the previous text does not declare
          lastRun = name;
          if (builtin) {
            addBefore(new TextChain(name, true, rules, this.facts, this.line));
            changed.push(i);
          }
          this.at = end;
          this.line += chain.count;
          k++;
          continue;
        }
      }
      const c = previousHas ? compareChains(this.runName(), name) : 1;
      if (c === 0) {
        if (onlyNew[i] === 1) refuse();
        lastRun = name;
        addBefore(this.run(name));
        changed.push(i);
        k++;
      } else if (c < 0) {
        previousOnly();
      } else {
        // No rules in the previous text (and none later: runs are in order).
        if (chain.count > 0 || onlyNew[i] === 1 || builtin) {
          if (onlyNew[i] !== 1) addBefore(new TextChain(name, builtin, '', this.facts, 0));
          changed.push(i);
        }
        k++;
      }
    }
    // Chains only the previous text declares and has no rules for.
    for (const name of onlyPrevious) if (!made.has(name)) addBefore(new TextChain(name, BUILTIN_CHAIN_NAMES.has(name), '', this.facts, 0));
    changed.sort((x, y) => x - y);
    for (const i of changed) {
      const name = names[i]!;
      after.set(name, new TextChain(name, BUILTIN_CHAIN_NAMES.has(name), g.chains[i]!.text(), this.facts, 0));
    }
  }

  /**
   * Most per-service chains (rank 2) are equal, one after the other: their rules are compared
   * a stretch of chains at a time (one compare instead of one per chain). How many chains from
   * `k` on were skipped as equal (0: compare them one by one). Their names are not compared
   * here: the printer's order within a rank is byte order (print.ts, kube-proxy's normaliser;
   * checked one by one in rules(), and by test/diff/iptables/read-aligned.test.ts). Only a stretch of rank-2 chains
   * (no built-in ones), in printed order, none with rules that the previous text does not
   * declare (those are refused one by one); their empty chains declared only in the new text
   * go to `changed`, as one by one.
   */
  private equalStretch(g: Gathered, order: readonly number[], ranks: readonly number[], k: number, onlyNew: Uint8Array, changed: number[]): number {
    const names = g.keys.names;
    const pieces: string[] = [];
    let length = 0;
    let lines = 0;
    let m = k;
    let last = '';
    for (; m < order.length && ranks[m] === 2 && length < STRETCH_RULES && m - k < STRETCH_CHAINS; m++) {
      const i = order[m]!;
      const chain = g.chains[i]!;
      const name = names[i]!;
      last = name;
      if (chain.count === 0) continue;
      if (onlyNew[i] === 1) return 0;
      chain.collectTexts(pieces);
      length += chain.bytes;
      lines += chain.count;
    }
    const end = this.at + length;
    if (m - k < 2 || !this.has(pieces.join(''), this.at) || this.ruleOf(last, end)) return 0;
    // The stretch's last chain must have rules (else the next chain's run could be it).
    if (g.chains[order[m - 1]!]!.count === 0) return 0;
    for (let j = k; j < m; j++) if (onlyNew[order[j]!] === 1) changed.push(order[j]!);
    this.at = end;
    this.line += lines;
    return m - k;
  }

  /** The chain name of the `-A` line at `at` (checked as readKpcLayout checks it). */
  private runName(): string {
    const end = this.lineEnd(this.at);
    const nameEnd = this.text.indexOf(SPACE, this.at + 3);
    if (nameEnd < 0 || nameEnd >= end || nameEnd === this.at + 3) refuse();
    return this.string(this.at + 3, nameEnd);
  }

  /** The run of `-A name ` lines at `at`, as a chain (its lines checked), moving past it. */
  private run(name: string): ChainState {
    const start = this.at;
    const first = this.line;
    while (this.ruleOf(name, this.at)) {
      const end = this.lineEnd(this.at);
      this.checkLine(this.at, end);
      this.at = end + 1;
      this.line++;
    }
    return new TextChain(name, BUILTIN_CHAIN_NAMES.has(name), this.string(start, this.at), this.facts, first);
  }
}

/**
 * The rules of one iptables-restore input, held per table and chain before printing.
 *
 * Chains are kept in declaration order and rules in append order; the printer puts them in
 * kpc's canonical order. A rule is its full restore line (`-A CHAIN ...`): the unit
 * kube-proxy writes and the unit later compared.
 *
 * Why blocks: a 20,000-Service ruleset has a million rules in over 250,000 chains. Kept as
 * a million small strings (each a tree of the pieces it was built from) until printing,
 * they would be copied into the old generation piece by piece and cost seconds of garbage
 * collection. Instead consecutive appends to one chain (a "run": kube-proxy writes a
 * service's own chains one after the other) are joined, runs are joined into blocks of
 * about 128 KB, each one flat string, and a chain remembers the character ranges of its
 * rules; printing copies ranges. Blocks are strings rather than Buffers on purpose: 66 MB
 * of Buffers would count as external memory and make V8 run extra full collections. Rules
 * are ASCII (safe-text.ts guarantees it), so a character is a byte.
 *
 * Why handles: the per-service chains (KUBE-SVC/SVL/EXT/FW/SEP-hash) are declared with
 * declareNew, which returns the chain to append to, without a Map of every name (a Map of
 * 250,000 names costs more than all their rules); their names are hashes of distinct
 * service ports and endpoints, and the printer checks that no name was declared twice.
 * kube-proxy's fixed chains are declared and found by name.
 */

export type TableName = 'filter' | 'nat';


/** Runs are joined into blocks of about this many characters. */
const BLOCK_CHARS = 1 << 17;
/** A run is written out once it is this long, so a pending run never gets big. */
const MAX_RUN = 1 << 15;

/**
 * Rule text: the runs written since the last block, joined into one flat string once there
 * are enough of them. One big string is one object for the garbage collector, allocated
 * straight in the old generation, where the pieces it was built from were thousands.
 */
class Block {
  text = '';
}

/**
 * Where one chain's rules are: character ranges of the table's blocks, each a whole number
 * of lines ending with '\n'. Most chains are written in one run and have one range, kept in
 * `block`/`start`/`end`; chains written in several runs (the top-level chains, which get
 * a rule per service) keep the others in `more`.
 */
export class ChainRules {
  block: Block | undefined = undefined;
  start = 0;
  end = 0;
  /** Further ranges as (block, start, end) triples, in order. */
  more: Array<Block | number> | undefined = undefined;
  /** Total length of the rules (characters = bytes: ASCII). */
  bytes = 0;
  /** How many rules (lines) the chain has. */
  count = 0;
  /** Only `count` is kept, not the rules (Table.withNewChainsCounted). */
  countOnly = false;
  /**
   * The service port ("ns/svc:port") whose own chain this is, for the per-service chains
   * (declareNew): the diff report's walk over a built table checks itself against it.
   */
  port: string | undefined = undefined;

  constructor(readonly name: string) {}

  /** Record `block[start, end)` as the next range. */
  addRange(block: Block, start: number, end: number): void {
    this.bytes += end - start;
    if (this.block === undefined) {
      this.block = block;
      this.start = start;
      this.end = end;
    } else if (this.more === undefined && this.block === block && this.end === start) {
      this.end = end; // continues the single range
    } else {
      (this.more ??= []).push(block, start, end);
    }
  }

  /** Add the rule text to `pieces`, range by range. */
  collectTexts(pieces: string[]): void {
    if (this.block === undefined) return;
    pieces.push(this.block.text.substring(this.start, this.end));
    this.collectMoreTexts(pieces);
  }

  /** Add the text of the ranges after the first to `pieces`. */
  collectMoreTexts(pieces: string[]): void {
    const more = this.more;
    if (more !== undefined) {
      for (let k = 0; k < more.length; k += 3) pieces.push((more[k] as Block).text.substring(more[k + 1] as number, more[k + 2] as number));
    }
  }

  /** The rules as restore text, `-A CHAIN ...\n` each (a slice of a block when written in one run). */
  text(): string {
    if (this.block === undefined) return '';
    if (this.more === undefined) return this.block.text.substring(this.start, this.end);
    const pieces: string[] = [];
    this.collectTexts(pieces);
    return pieces.join('');
  }

  /** The rules as `-A CHAIN ...` strings (for comparisons; printing does not need them). */
  lines(): string[] {
    const text = this.text();
    return text === '' ? [] : text.slice(0, -1).split('\n');
  }
}

export class Table {
  /** Every chain, in declaration order. */
  private readonly declared: ChainRules[] = [];
  /** The chains declared by name (the fixed ones), to find them again by name. */
  private readonly named = new Map<string, ChainRules>();
  /** The block being filled: its runs so far, and their total length. */
  private block = new Block();
  private parts: string[] = [];
  private used = 0;
  /** The chain of the pending run, its `-A CHAIN ` (made once per run), and the run's lines not yet added to the block. */
  private runChain: ChainRules | undefined = undefined;
  private runHead = '';
  private run = '';
  /** Chains declared now keep only their rule count (withNewChainsCounted). */
  private countingNew = false;

  constructor(readonly name: TableName) {}

  /**
   * `write`, with the chains it declares anew (declareNew) keeping only how many rules they
   * get, not the rules: kpc trace and explain print the own chains of a few service ports and
   * need only the others' line counts (lang/iptables/print.ts renderFocusedText). Rules
   * appended to chains declared before (the shared ones) are kept as always.
   */
  withNewChainsCounted(write: () => void): void {
    this.countingNew = true;
    try {
      write();
    } finally {
      this.countingNew = false;
    }
  }

  /** Declare a chain by name (declaring it again is fine) and return it. */
  declare(chain: string): ChainRules {
    let rules = this.named.get(chain);
    if (rules === undefined) {
      rules = this.declareNew(chain);
      this.named.set(chain, rules);
    }
    return rules;
  }

  /**
   * Declare a chain that is new to this table and return it; rules go to it through the
   * returned object, not by name. For the per-service chains: their names are hashes of
   * distinct service ports and endpoints, and there are hundreds of thousands of them, so
   * keeping them out of a Map saves real time. A name declared twice is an internal error,
   * caught when the table is printed or read. `port`: the service port the chain belongs to.
   */
  declareNew(chain: string, port?: string): ChainRules {
    const rules = new ChainRules(chain);
    rules.port = port;
    if (this.countingNew) rules.countOnly = true;
    this.declared.push(rules);
    return rules;
  }

  /** Append `-A chain args`; the chain must have been declared (by name, or be the object declareNew gave). */
  append(chain: string | ChainRules, args: string): void {
    const rules = typeof chain === 'string' ? this.find(chain) : chain;
    if (rules.countOnly) {
      rules.count++;
      return;
    }
    if (rules !== this.runChain) {
      this.flush();
      this.runChain = rules;
      this.runHead = `-A ${rules.name} `;
    }
    this.run += `${this.runHead}${args}\n`;
    rules.count++;
    if (this.run.length >= MAX_RUN) this.flush();
  }

  private find(chain: string): ChainRules {
    // Same chain as the last append (a string identity check, mostly): no lookup.
    if (this.runChain !== undefined && this.runChain.name === chain) return this.runChain;
    const rules = this.named.get(chain);
    if (!rules) throw new Error(`internal error: rule for undeclared chain ${chain} in table ${this.name}`);
    return rules;
  }

  /** Add the pending run to the block and record its range. */
  private flush(): void {
    const run = this.run;
    if (run.length === 0) return;
    this.parts.push(run);
    this.runChain!.addRange(this.block, this.used, this.used + run.length);
    this.used += run.length;
    this.run = '';
    if (this.used >= BLOCK_CHARS) this.seal();
  }

  /** Join the block's runs into its text and start a new block. */
  private seal(): void {
    if (this.parts.length === 0) return;
    this.block.text = this.parts.join('');
    this.block = new Block();
    this.parts = [];
    this.used = 0;
  }

  /** How many chains have been declared so far (see declaredSince). */
  declaredCount(): number {
    return this.declared.length;
  }

  /** The chains declared after the first `n`, in declaration order. */
  declaredSince(n: number): readonly ChainRules[] {
    return this.declared.slice(n);
  }

  /** Whether `rules` is a chain declared by name (the fixed, shared chains). */
  isNamed(rules: ChainRules): boolean {
    return this.named.get(rules.name) === rules;
  }

  /** Every chain in declaration order, with all rules written (call after the last append). */
  allChains(): readonly ChainRules[] {
    this.flush();
    this.seal();
    return this.declared;
  }

  /** Chain name → its rules, in declaration order (built on each call: for reading, not for writing). */
  get chains(): ReadonlyMap<string, ChainRules> {
    const byName = new Map<string, ChainRules>();
    for (const rules of this.allChains()) {
      if (byName.has(rules.name)) throw duplicateChain(this.name, rules.name);
      byName.set(rules.name, rules);
    }
    return byName;
  }
}

export function duplicateChain(table: TableName, chain: string): Error {
  return new Error(`internal error: chain ${chain} declared twice in table ${table}`);
}

export interface Ruleset {
  filter: Table;
  nat: Table;
}

export function newRuleset(): Ruleset {
  return { filter: new Table('filter'), nat: new Table('nat') };
}

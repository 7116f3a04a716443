/**
 * The lazy reading (read.ts ReadOptions.lazy) of the shape iptables-save and kpc print: per
 * table its declarations, then appends to the declared chains, then COMMIT. A node at 20,000
 * Services declares 264,000 chains and `kpc trace` follows a dozen of them, so this reading
 * makes no chain object, name string or map entry per declaration. One pass notes where each
 * declared name and each run of appends to one chain lie in the text; a table's chains are a
 * map that finds a name by a hash of those characters and makes the chain (a LazyChain, its
 * rules parsed when first asked for) only then.
 *
 * Any other line (an insert, a flush, counters, a declaration after an append, an append to an
 * undeclared chain, a CR, a table given twice, a malformed line) gives undefined, and read.ts
 * reads the text its general way, whose model this one equals (test/lang/iptables/read-lazy).
 */

import type { Chain, RuleSet, Table } from './model.js';
import { waitingLines, type WaitingLines } from './append-rule.js';
import { isBuiltinChain } from './chains.js';
import { LazyChain } from './lazy-chain.js';
import { HASH_START, hashWith, LineRuns, sameRange, TextNames } from '../text-names.js';
import { AsciiBytes } from '../ascii-bytes.js';
import type { TextSource } from '../text-source.js';

const CR = 13;
const SPACE = 32;
const HASH = 35;
const STAR = 42;
const DASH = 45;
const COLON = 58;
const LETTER_A = 65;
/** iptables' longest chain name (chains.ts checkReadChainName). */
const MAX_NAME = 28;
/** What follows a user chain's name on its declaration line. */
const USER_CHAIN_TAIL = ' - [0:0]';
/** Any other declaration's tail after the name: ` POLICY` or ` POLICY [packets:bytes]`. */
const DECLARATION_TAIL = /^ ([!-~]+)(?: \[\d+:\d+\])?$/;

/**
 * The model of `text`, or undefined when the text is not of the shape read here. A node's file
 * comes as its bytes (AsciiBytes): names are compared where they lie, and the pass makes a
 * string only of a table's name and of a declaration that is not kube-proxy's.
 */
export function readIndexed(text: TextSource): RuleSet | undefined {
  const tables = new Map<string, Table>();
  const warnings: string[] = [];
  const lines = waitingLines(text, warnings);
  let index: TableIndex | undefined;
  /** The chain the previous line appended to, while its run goes on, and where its name lies. */
  let run = -1;
  let runAt = 0;
  let runLength = 0;
  /** The chain of the last run begun in this table. */
  let last = -1;
  let lineNo = 0;
  for (let start = 0; start <= text.length; ) {
    lineNo++;
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const from = start;
    start = end + 1;
    if (end === from) {
      run = -1;
      continue;
    }
    if (text.charCodeAt(end - 1) === CR) return undefined;
    const c = text.charCodeAt(from);
    if (c === DASH) {
      if (!index || text.charCodeAt(from + 1) !== LETTER_A || text.charCodeAt(from + 2) !== SPACE) return undefined;
      const nameEnd = from + 3 + runLength;
      if (run >= 0 && nameEnd < end && text.charCodeAt(nameEnd) === SPACE && sameRange(text, runAt, from + 3, runLength)) {
        index.extendRun(end);
        continue;
      }
      runAt = from + 3;
      // Runs come in the order of the declarations (iptables-save, kpc): try the next one first.
      run = last + 1 < index.count ? index.declaredAt(last + 1, runAt, end) : -1;
      if (run < 0) {
        const blank = text.indexOf(' ', runAt);
        if (blank <= runAt || blank >= end) return undefined;
        run = index.find(text.slice(runAt, blank));
        if (run < 0) return undefined;
      }
      runLength = index.nameLength(run);
      last = run;
      index.startRun(run, lineNo, from, end);
      continue;
    }
    run = -1;
    if (c === COLON) {
      if (!index || !index.declare(from, end, lineNo)) return undefined;
    } else if (c === STAR) {
      const name = text.slice(from + 1, end);
      if (index || !/^[a-z]+$/.test(name) || tables.has(name)) return undefined;
      const table: Table = { name, chains: new Map() };
      index = new TableIndex(text, table, lines);
      last = -1;
      table.chains = new IndexedChains(index);
      tables.set(name, table);
    } else if (end - from === 6 && text.startsWith('COMMIT', from)) {
      if (!index) return undefined;
      index = undefined;
    } else if (c !== HASH) {
      return undefined;
    }
  }
  return index ? undefined : { tables, warnings };
}

/** Where one table's declared names and runs of appends lie in the text. */
class TableIndex {
  private readonly names: TextNames;
  private readonly runs: LineRuns;
  private declLine = new Int32Array(1024) as Int32Array<ArrayBuffer>;
  /** The names that are not kube-proxy's (KUBE-...), and the built-in chains' policies. */
  private otherNames = new Map<number, { name: string; builtin: boolean; policy: string }>();
  /** Once any append: a declaration now would flush a chain (read.ts reads that). */
  private appended = false;
  private made = new Map<number, LazyChain>();

  constructor(
    private readonly text: TextSource,
    private readonly table: Table,
    private readonly lines: WaitingLines,
  ) {
    // kpc's output at 20,000 Services: 264,000 chains in 81 MB.
    this.names = new TextNames(text, text.length >> 8);
    this.runs = new LineRuns(text, text.length >> 8);
  }

  /** How many chains are declared. */
  get count(): number {
    return this.names.count;
  }

  /** `:NAME POLICY [packets:bytes]` at from..end; false for any other form or a second one. */
  declare(from: number, end: number, lineNo: number): boolean {
    const text = this.text;
    const nameEnd = text.indexOf(' ', from + 1);
    if (this.appended || nameEnd <= from + 1 || nameEnd >= end) return false;
    const length = nameEnd - from - 1;
    const hash = length <= MAX_NAME ? readableNameHash(text, from + 1, nameEnd) : undefined;
    if (hash === undefined) return false;
    // A user chain's line as iptables-save and kpc print it, or another form checked in full.
    let policyEnd = nameEnd + 2;
    if (end !== nameEnd + USER_CHAIN_TAIL.length || !text.startsWith(USER_CHAIN_TAIL, nameEnd)) {
      const tail = DECLARATION_TAIL.exec(text.slice(nameEnd, end));
      if (tail === null) return false;
      policyEnd = nameEnd + 1 + tail[1]!.length;
    }
    const k = this.names.count;
    if (this.names.addAt(from + 1, length, hash) !== k) return false;
    if (this.declLine.length <= k) this.declLine = grownLines(this.declLine);
    this.declLine[k] = lineNo;
    if (!text.startsWith('KUBE-', from + 1)) {
      const name = text.slice(from + 1, nameEnd);
      const builtin = isBuiltinChain(this.table.name, name);
      this.otherNames.set(k, { name, builtin, policy: builtin ? text.slice(nameEnd + 1, policyEnd) : '-' });
    }
    return true;
  }

  /** k when declaration k's name is the one at `at`, followed by a blank before `end`; else -1. */
  declaredAt(k: number, at: number, end: number): number {
    const length = this.names.lengthOf(k);
    return at + length < end && this.text.charCodeAt(at + length) === SPACE && this.names.isAt(k, at) ? k : -1;
  }

  /** How long declaration k's name is. */
  nameLength(k: number): number {
    return this.names.lengthOf(k);
  }

  /** The declaration of `name`, or -1. */
  find(name: string): number {
    return name.length === 0 || name.length > MAX_NAME ? -1 : this.names.find(name);
  }

  startRun(k: number, lineNo: number, start: number, end: number): void {
    this.appended = true;
    this.runs.begin(k, start, end, lineNo);
  }

  /** The last run started takes the next line, which ends at `end`. */
  extendRun(end: number): void {
    this.runs.extend(end);
  }

  /** Declaration k as a chain whose appends wait unparsed, made once. */
  chainAt(k: number): LazyChain {
    let chain = this.made.get(k);
    if (chain) return chain;
    const other = this.otherNames.get(k);
    chain = new LazyChain(this.table, other?.name ?? this.names.name(k), other?.builtin ?? false, other?.policy ?? '-', this.declLine[k]!, this.lines);
    const waiting = chain.waiting;
    this.runs.eachLine(k, (start, end, lineNo) => waiting.push(lineNo, start, end));
    this.made.set(k, chain);
    return chain;
  }
}

/**
 * A table's chains as a Map: a name is looked up in the index and its chain made on first use;
 * anything that needs them all (iteration, size after a change, set, delete) makes every chain
 * once, in declaration order, and is the Map's own from then on.
 */
class IndexedChains extends Map<string, Chain> {
  private whole = false;

  constructor(private readonly index: TableIndex) {
    super();
  }

  override get(name: string): Chain | undefined {
    if (this.whole) return super.get(name);
    const k = this.index.find(name);
    return k < 0 ? undefined : this.index.chainAt(k);
  }

  override has(name: string): boolean {
    return this.whole ? super.has(name) : this.index.find(name) >= 0;
  }

  override get size(): number {
    return this.whole ? super.size : this.index.count;
  }

  override set(name: string, chain: Chain): this {
    this.all();
    return super.set(name, chain);
  }

  override delete(name: string): boolean {
    this.all();
    return super.delete(name);
  }

  override clear(): void {
    this.all();
    super.clear();
  }

  override forEach(fn: (chain: Chain, name: string, map: Map<string, Chain>) => void, thisArg?: unknown): void {
    this.all();
    super.forEach(fn, thisArg);
  }

  override keys(): MapIterator<string> {
    this.all();
    return super.keys();
  }

  override values(): MapIterator<Chain> {
    this.all();
    return super.values();
  }

  override entries(): MapIterator<[string, Chain]> {
    this.all();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, Chain]> {
    return this.entries();
  }

  private all(): void {
    if (this.whole) return;
    this.whole = true;
    for (let k = 0; k < this.index.count; k++) {
      const chain = this.index.chainAt(k);
      super.set(chain.name, chain);
    }
  }
}

/** Per ASCII character: may it be in a kube-proxy chain's name (1: [A-Z0-9-]), in another's (2)? */
const NAME_CHARS = (() => {
  const chars = new Uint8Array(128);
  for (let c = 33; c < 127; c++) if (c !== 0x22 && c !== 0x27 && c !== 0x5c) chars[c] = 2;
  for (let c = 65; c <= 90; c++) chars[c] = 3;
  for (let c = 48; c <= 57; c++) chars[c] = 3;
  chars[DASH] = 3;
  return chars;
})();

/**
 * The hash of a name checkReadChainName accepts, of printable ASCII: kube-proxy's [A-Z0-9-],
 * another's without quotes or backslashes; undefined for any other (read.ts reports it).
 */
function readableNameHash(text: TextSource, start: number, end: number): number | undefined {
  const want = text.startsWith('KUBE-', start) ? 1 : 2;
  // A node's 264,000 names: a file's bytes are read as bytes, not through charCodeAt.
  const bytes = text instanceof AsciiBytes ? text.bytes : undefined;
  let hash = HASH_START;
  for (let i = start; i < end; i++) {
    const c = bytes ? bytes[i]! : text.charCodeAt(i);
    if (c >= 128 || (NAME_CHARS[c]! & want) === 0) return undefined;
    hash = hashWith(hash, c);
  }
  return hash;
}

/** `array` copied into one twice as long. */
function grownLines(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const next = new Int32Array(array.length * 2);
  next.set(array);
  return next;
}

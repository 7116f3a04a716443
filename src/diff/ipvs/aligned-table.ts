/**
 * A previous ipvs.rules read beside the new one, virtual server by virtual server: a block (an
 * `-A` line and the `-a` lines of the same service after it) whose text is the new text's
 * block of that service is the new table's virtual server (the same object), so only the
 * blocks that differ are read.
 *
 * Why: `compile --previous` and `kpc diff` with one Service changed at 20,000 Services read two
 * tables of 300,000 lines to find a few changed real servers. kpc's ipvs.rules (and a node's
 * ipvsadm-save -n, which kpc's text copies) is a run of such blocks, so a block equal to the
 * new one means an equal virtual server, and consumers can skip a virtual server that is the
 * same object on both sides.
 *
 * The result is what readIpvsTable(previous) gives: the same keys in the same (text) order,
 * equal virtual servers, the same timeouts. That holds only when each block stands alone (no
 * line elsewhere edits or deletes its server), so the reader takes only text that is blocks of
 * `-A` then `-a` of the same service: any other line in a block that differs, a preamble other
 * than the new text's, a service in two blocks, or a block the general reader refuses gives
 * undefined, and the caller reads the text whole (errors included). It never throws.
 */

import { readIpvsTable, type IpvsTable, type IpvsVirtualServer } from '../../lang/ipvs/ipvs-table.js';

interface Block {
  /** The service words of the `-A` line: `-t 10.96.0.1:443`. */
  service: string;
  /** The block's text, its last newline included. */
  text: string;
  /** Where it starts in its text. */
  start: number;
}

interface Blocks {
  /** The text before the first `-A` line (`--set …` in kpc's output). */
  preamble: string;
  blocks: Block[];
}

/** The text split at each line that starts with `-A `; undefined for an `-A` line without service words. */
function blocksOf(text: string): Blocks | undefined {
  const starts: number[] = [];
  if (text.startsWith('-A ')) starts.push(0);
  for (let at = text.indexOf('\n-A '); at >= 0; at = text.indexOf('\n-A ', at + 1)) starts.push(at + 1);
  const blocks: Block[] = [];
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    const end = i + 1 < starts.length ? starts[i + 1]! : text.length;
    // `-A <flag> <address>`: the second space after `-A `.
    const flagEnd = text.indexOf(' ', start + 3);
    const serviceEnd = flagEnd < 0 ? -1 : text.indexOf(' ', flagEnd + 1);
    const eol = text.indexOf('\n', start);
    if (serviceEnd < 0 || (eol >= 0 && serviceEnd > eol)) return undefined;
    blocks.push({ service: text.slice(start + 3, serviceEnd), text: text.slice(start, end), start });
  }
  return { preamble: text.slice(0, starts[0] ?? text.length), blocks };
}

/** Whether every line after the first is `-a <service> …` (the block adds one server and its real servers). */
function standsAlone(block: Block): boolean {
  const prefix = `-a ${block.service} `;
  const text = block.text;
  for (let nl = text.indexOf('\n'); nl >= 0 && nl + 1 < text.length; nl = text.indexOf('\n', nl + 1)) {
    if (!text.startsWith(prefix, nl + 1)) return false;
  }
  return true;
}

/** Line numbers of positions in a text, asked in increasing order. */
class LineCounter {
  private at = 0;
  private line = 1;
  constructor(private readonly text: string) {}
  lineOf(position: number): number {
    for (let nl = this.text.indexOf('\n', this.at); nl >= 0 && nl < position; nl = this.text.indexOf('\n', nl + 1)) {
      this.line++;
      this.at = nl + 1;
    }
    return this.line;
  }
}

/** The preamble's table (comments, `--set`): its timeouts, or undefined when it is anything else. */
function preambleOf(text: string): { timeouts?: string } | undefined {
  try {
    const t = readIpvsTable(text);
    return t.virtualServers.size === 0 ? t : undefined;
  } catch {
    return undefined;
  }
}

/** One block read alone: its virtual server, or undefined when the block is more (or less) than one server. */
function readBlock(block: Block, lines: LineCounter): IpvsVirtualServer | undefined {
  try {
    const one = readIpvsTable(block.text, { firstLine: lines.lineOf(block.start) });
    return one.virtualServers.size === 1 && one.timeouts === undefined ? one.virtualServers.values().next().value : undefined;
  } catch {
    return undefined;
  }
}

/** The two texts' blocks, and which of the previous ones are the new text's block of their service. */
interface Matched {
  before: Blocks;
  after: Blocks;
  /** Per previous block: whether it is byte-equal to the new text's block of its service. */
  same: boolean[];
  /** The new blocks' services that a previous block is equal to. */
  matched: Set<string>;
  timeouts: { before?: string; after?: string };
}

/**
 * The blocks of both texts matched by service and text, or undefined when the previous text
 * is not such blocks: a block the reader would not take alone (checked for the equal ones
 * here, by reading for the others), a service in two blocks, a preamble with servers.
 */
function matchBlocks(previous: string, nextText: string): Matched | undefined {
  const before = blocksOf(previous);
  const after = blocksOf(nextText);
  if (!before || !after) return undefined;
  const pre = preambleOf(before.preamble);
  const post = preambleOf(after.preamble);
  if (!pre || !post) return undefined;
  const nextBlocks = new Map<string, Block>();
  for (const b of after.blocks) nextBlocks.set(b.service, b);
  const same: boolean[] = [];
  const matched = new Set<string>();
  for (const block of before.blocks) {
    const equal = nextBlocks.get(block.service)?.text === block.text;
    if (equal && (matched.has(block.service) || !standsAlone(block))) return undefined;
    if (equal) matched.add(block.service);
    same.push(equal);
  }
  return { before, after, same, matched, timeouts: { before: pre.timeouts, after: post.timeouts } };
}

function tableOf(timeouts: string | undefined): IpvsTable {
  const table: IpvsTable = { virtualServers: new Map() };
  if (timeouts !== undefined) table.timeouts = timeouts;
  return table;
}

/**
 * The previous table read whole, beside the new one (see the file comment), or undefined when
 * the text is left to readIpvsTable. `nextText` is the new ipvs.rules as kpc printed it,
 * `next` its table: a previous block equal to the new one of its service is `next`'s server.
 */
export function readPreviousTable(previous: string, nextText: string, next: IpvsTable): IpvsTable | undefined {
  const m = matchBlocks(previous, nextText);
  // The new text's servers are its blocks' only if each of its blocks stands alone too.
  if (!m || !m.after.blocks.every(standsAlone)) return undefined;
  const byArgs = new Map<string, IpvsVirtualServer>();
  for (const vs of next.virtualServers.values()) byArgs.set(vs.args, vs);
  const table = tableOf(m.timeouts.before);
  const lines = new LineCounter(previous);
  for (let i = 0; i < m.before.blocks.length; i++) {
    const block = m.before.blocks[i]!;
    const vs = (m.same[i] ? byArgs.get(block.service) : undefined) ?? readBlock(block, lines);
    // A service in two blocks (or two spellings of one): the whole reader's "added twice".
    if (!vs || table.virtualServers.has(vs.key)) return undefined;
    table.virtualServers.set(vs.key, vs);
  }
  return table;
}

/**
 * Only the virtual servers whose blocks differ: the previous text's and the new text's, each
 * read alone (with each side's timeouts), or undefined when the previous text is left to
 * readIpvsTable. What both texts hold alike is left out of both, so a consumer that only
 * looks at what differs (computeIpvsDelta without --full) gives the same result on these
 * tables as on the whole ones. `nextText` is kpc's own ipvs.rules: its blocks stand alone, one
 * service each, in ipvsadm's spelling (ipvsadm.ts), which the matching of equal blocks to
 * services relies on.
 */
export function readChangedTables(previous: string, nextText: string): { before: IpvsTable; after: IpvsTable } | undefined {
  const m = matchBlocks(previous, nextText);
  if (!m) return undefined;
  const before = tableOf(m.timeouts.before);
  const after = tableOf(m.timeouts.after);
  const lines = new LineCounter(previous);
  for (let i = 0; i < m.before.blocks.length; i++) {
    if (m.same[i]) continue;
    const vs = readBlock(m.before.blocks[i]!, lines);
    // Also a server an equal block adds (spelt otherwise here): the whole reader's "added twice".
    if (!vs || before.virtualServers.has(vs.key) || m.matched.has(vs.args)) return undefined;
    before.virtualServers.set(vs.key, vs);
  }
  const nextLines = new LineCounter(nextText);
  for (const block of m.after.blocks) {
    if (m.matched.has(block.service)) continue;
    const vs = readBlock(block, nextLines);
    if (!vs || after.virtualServers.has(vs.key)) return undefined;
    after.virtualServers.set(vs.key, vs);
  }
  return { before, after };
}

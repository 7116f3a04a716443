/**
 * The jumps to kube-proxy's per-service chains that a chain's rules make: what `kpc diff`
 * follows to learn which Service port owns which chain (report.ts ownership).
 *
 * Why not just parse every rule: at 20,000 Services the two states hold 780,000 rules each, and
 * tokenising and parsing all of them (and memoising the facts by rule text) was most of a
 * 14-second `kpc diff` with one endpoint changed. Chains built from kpc's own ruleset (a
 * TextChain not read from a file, which is most of both states: a previous output read against
 * the new ruleset shares its unchanged chains with it) are scanned instead: each rule's target
 * is found with a few string searches, and only a rule the scan cannot be sure of is parsed.
 * Chains read from a file are parsed as always, so their errors stay where they were.
 */

import { TARGET_EXTENSIONS } from '../../lang/iptables/parse-rule.js';
import { isServiceChain, TextChain, type ChainState } from './state.js';

/** The scan's answer for a rule it leaves to the parser. */
export const UNSURE = Symbol('unsure');

/** Words before the target that would make the scan's reading of `-j` wrong: left to the parser. */
const UNUSUAL = [' -g ', ' --goto ', ' --jump ', ' -c ', ' --set-counters ', ' -m -j ', ' --match -j ', '  '];

/**
 * The per-service chain a rule's arguments (`spec`, without `-A CHAIN`) jump to, as
 * parseRuleArgs would read it: undefined when it jumps to no such chain, UNSURE when the scan
 * cannot tell (quotes next to other characters, a backslash, a tab, goto, several targets,
 * options after a chain, ...). Exported for its test against the parser.
 */
export function scanServiceJump(spec: string): string | undefined | typeof UNSURE {
  if (spec.includes('\\') || spec.includes('\t')) return UNSURE;
  // Quoted runs are values, never options: each becomes one lone quote character here.
  let bare = spec.includes('"') ? spec.replace(/"[^"]*"/g, '"') : spec;
  if (bare !== spec && /[^ ]"|"[^ ]/.test(bare)) return UNSURE; // a quote inside a word: joined by the tokenizer
  if (bare.includes('""')) return UNSURE;
  bare = ` ${bare} `;
  for (const word of UNUSUAL) if (bare.includes(word)) return UNSURE;
  const at = bare.indexOf(' -j ');
  if (at < 0) return undefined; // no target: no jump
  if (bare.indexOf(' -j ', at + 1) >= 0) return UNSURE; // two targets: the parser's error
  const nameStart = at + 4;
  const nameEnd = bare.indexOf(' ', nameStart);
  const name = bare.slice(nameStart, nameEnd);
  if (name === '' || name.includes('"')) return UNSURE;
  const last = nameEnd === bare.length - 1;
  if (TARGET_EXTENSIONS.has(name)) return undefined; // ACCEPT, DNAT ..., with or without options: not a chain
  if (!last) return UNSURE; // options after a jump to a chain: the parser's error
  return isServiceChain(name) ? name : undefined;
}

const cache = new WeakMap<ChainState, readonly string[]>();

/** The per-service chains `chain`'s rules jump to, in rule order (one entry per jumping rule). */
export function serviceJumps(chain: ChainState): readonly string[] {
  let jumps = cache.get(chain);
  if (jumps === undefined) {
    jumps = chain instanceof TextChain && chain.built ? builtJumps(chain) : parsedJumps(chain);
    cache.set(chain, jumps);
  }
  return jumps;
}

function parsedJumps(chain: ChainState): string[] {
  const out: string[] = [];
  for (const r of chain.rules) if (r.jump !== undefined && isServiceChain(r.jump)) out.push(r.jump);
  return out;
}

/** A built chain's jumps: from its whole text at once when it is plain, else line by line. */
function builtJumps(chain: TextChain): string[] {
  const whole = chain.name.startsWith('-') ? UNSURE : scanChainText(chain.text);
  return whole === UNSURE ? scanText(chain) : whole;
}

/**
 * The UNUSUAL words as a whole chain's text shows them, in one pattern (one pass): a line's
 * words end at its newline where scanServiceJump's padded line ends them with a blank, so a
 * line ending in a blank shows as " \n".
 */
const UNUSUAL_IN_TEXT = new RegExp(UNUSUAL.map((w) => `${w.slice(0, -1)}[ \n]`).join('|'));

/** Whether some quote of `bare` (quoted runs made one quote) is glued to a word. */
function gluedQuote(bare: string): boolean {
  for (let q = bare.indexOf('"'); q >= 0; q = bare.indexOf('"', q + 1)) {
    const before = q === 0 ? 32 : bare.charCodeAt(q - 1);
    const after = q === bare.length - 1 ? 32 : bare.charCodeAt(q + 1);
    if ((before !== 32 && before !== 10) || (after !== 32 && after !== 10)) return true;
  }
  return false;
}

/**
 * scanServiceJump's answers for every line of a chain's text (`-A NAME ...\n` lines), read
 * from the whole text in a few searches instead of line by line, or UNSURE when some line
 * could make any of them so (then the caller goes line by line). Each line's quoted runs
 * collapse to one quote, as the line scan's do; a text without the unusual words, glued
 * quotes, backslashes and tabs has a line's target wherever " -j" is followed by a blank,
 * and the line scan's answer follows from that target alone. Exported for its test against
 * the line scan.
 */
export function scanChainText(text: string): string[] | typeof UNSURE {
  if (text === '') return [];
  // The checks are searches of the whole text: a pass of a pattern costs less than a call per line.
  if (!text.endsWith('\n') || text.includes('\\') || text.includes('\t')) return UNSURE;
  const bare = text.includes('"') ? text.replace(/"[^"\n]*"/g, '"') : text;
  if (bare !== text && (bare.includes('""') || gluedQuote(bare))) return UNSURE;
  if (UNUSUAL_IN_TEXT.test(bare)) return UNSURE;
  const out: string[] = [];
  let lineEnd = -1; // the end of the line of the last target found
  for (let at = bare.indexOf(' -j'); at >= 0; at = bare.indexOf(' -j', at + 3)) {
    const after = bare.charCodeAt(at + 3);
    if (after !== 32 /* ' ' */ && after !== 10 /* '\n' */) continue; // a longer word ("-jx"), not the option
    if (at < lineEnd) return UNSURE; // two targets on one line
    lineEnd = bare.indexOf('\n', at + 3);
    if (after === 10) return UNSURE; // "-j" ends its line: no target
    const nameStart = at + 4;
    // No quote is glued to a word here, so a target with a quote is a lone quoted run.
    if (bare.charCodeAt(nameStart) === 34 /* '"' */) return UNSURE;
    const blank = bare.indexOf(' ', nameStart);
    const nameEnd = blank >= 0 && blank < lineEnd ? blank : lineEnd;
    if (nameEnd === nameStart) return UNSURE;
    if (nameEnd === lineEnd) {
      // The line's last word: a jump when it names a per-service chain (never an extension).
      if (bare.startsWith('KUBE-', nameStart)) {
        const name = bare.slice(nameStart, nameEnd);
        if (isServiceChain(name)) out.push(name);
      }
    } else if (!TARGET_EXTENSIONS.has(bare.slice(nameStart, nameEnd))) {
      return UNSURE; // options after a jump to a chain
    }
  }
  return out;
}

/** A built chain's jumps from its text, line by line; a line the scan is unsure of is parsed. */
function scanText(chain: TextChain): string[] {
  const text = chain.text;
  const prefix = `-A ${chain.name} `.length;
  const out: string[] = [];
  let rule = 0;
  for (let at = 0; at < text.length; rule++) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const spec = text.slice(at + prefix, end);
    const jump = lineJump(spec);
    if (jump === UNSURE) {
      const parsed = chain.rules[rule]!.jump;
      if (parsed !== undefined && isServiceChain(parsed)) out.push(parsed);
    } else if (jump !== undefined) {
      out.push(jump);
    }
    at = end + 1;
  }
  return out;
}

/**
 * scanServiceJump, with the shortcut for the many rules that cannot jump to a per-service
 * chain: without quotes and backslashes every argument is a run of the text's characters, so
 * a rule without "KUBE" has no per-service chain to jump to (most rules of SEP chains).
 */
function lineJump(spec: string): string | undefined | typeof UNSURE {
  return !spec.includes('KUBE') && !spec.includes('"') && !spec.includes('\\') ? undefined : scanServiceJump(spec);
}

/**
 * The `-m comment` text of a rule's arguments as parseRuleArgs would read it, for the one
 * spelling kpc and kube-proxy write (`-m comment --comment VALUE` once, VALUE one word or one
 * quoted run, no option of another module before the next `-m` or target), or UNSURE.
 * Exported for its test against the parser.
 */
export function scanComment(spec: string): string | undefined | typeof UNSURE {
  if (spec.includes('\\') || spec.includes('\t')) return UNSURE;
  const bare = spec.includes('"') ? spec.replace(/"[^"]*"/g, '"') : spec;
  if (bare !== spec && /[^ ]"|"[^ ]/.test(bare)) return UNSURE;
  // Options are read where quoted runs are one quote; the quoted value itself from the text.
  const words = ` ${bare} `;
  const at = words.indexOf(' --comment ');
  if (at < 0) return words.includes(' --comment') ? UNSURE : undefined;
  if (words.indexOf(' --comment', at + 1) >= 0 || words.slice(at - 11, at) !== ' -m comment' || words.includes(' -m -') || words.includes(' --match -')) return UNSURE;
  const valueAt = at + ' --comment '.length;
  let value: string;
  let rest: number; // the blank after the value
  if (words[valueAt] === '"') {
    const text = ` ${spec} `;
    const quote = text.indexOf(' --comment "');
    if (quote < 0 || text.indexOf(' --comment', quote + 1) >= 0) return UNSURE; // the text's only one is the option
    const start = quote + ' --comment "'.length;
    value = text.slice(start, text.indexOf('"', start));
    rest = valueAt + 1;
  } else {
    rest = words.indexOf(' ', valueAt);
    value = words.slice(valueAt, rest);
    if (value === '' || value === '!' || value.startsWith('-')) return UNSURE;
  }
  // The next word is an option, "!" or the end: no further value of the comment.
  const next = words.slice(rest + 1, rest + 3);
  if (!(rest === words.length - 1 || next === '! ' || (next[0] === '-' && next[1] !== ' '))) return UNSURE;
  return endsCommentModule(words.slice(rest)) ? value : UNSURE;
}

/** Words that end the comment module's options: another module's `-m`, or the target. */
const MODULE_ENDS = [' -m ', ' --match ', ' -j ', ' -g ', ' --jump ', ' --goto '];
/** The core options, which parseRuleArgs keeps apart from any module's options. */
const CORE_LONG = new Set(['source', 'src', 'destination', 'dst', 'protocol', 'in-interface', 'out-interface', 'fragment', 'ipv4', 'ipv6', 'set-counters']);

/**
 * Whether the words after a comment's value (from the blank after it) add no option to the
 * comment module: every long option before the next module or target is a core one (any
 * other would join the comment module, which the parser then does not read as a comment).
 */
function endsCommentModule(after: string): boolean {
  let end = after.length;
  for (const word of MODULE_ENDS) {
    const at = after.indexOf(word);
    if (at >= 0 && at < end) end = at;
  }
  const own = after.slice(0, end + 1);
  for (let at = own.indexOf(' --'); at >= 0; at = own.indexOf(' --', at + 1)) {
    const name = own.slice(at + 3, own.indexOf(' ', at + 1));
    if (!CORE_LONG.has(name)) return false;
  }
  return true;
}

/**
 * The commented rules of a chain that jump to a per-service chain, with their comments, in
 * rule order: what the diff report's walk starts from (the top-level chains, whose comment
 * names the Service port). A built chain is scanned; what the scan is unsure of is parsed.
 */
export function commentedServiceJumps(chain: ChainState): Array<[comment: string, jump: string]> {
  const out: Array<[string, string]> = [];
  if (!(chain instanceof TextChain && chain.built)) {
    for (const r of chain.rules) if (r.comment !== undefined && r.jump !== undefined && isServiceChain(r.jump)) out.push([r.comment, r.jump]);
    return out;
  }
  const text = chain.text;
  const prefix = `-A ${chain.name} `.length;
  let rule = 0;
  for (let at = 0; at < text.length; rule++) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const spec = text.slice(at + prefix, end);
    let jump = lineJump(spec);
    if (jump === UNSURE) jump = chain.rules[rule]!.jump;
    if (jump !== undefined && isServiceChain(jump)) {
      let comment = scanComment(spec);
      if (comment === UNSURE) comment = chain.rules[rule]!.comment;
      if (comment !== undefined) out.push([comment, jump]);
    }
    at = end + 1;
  }
  return out;
}

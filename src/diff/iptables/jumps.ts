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
    jumps = chain instanceof TextChain && chain.built ? scanText(chain) : parsedJumps(chain);
    cache.set(chain, jumps);
  }
  return jumps;
}

function parsedJumps(chain: ChainState): string[] {
  const out: string[] = [];
  for (const r of chain.rules) if (r.jump !== undefined && isServiceChain(r.jump)) out.push(r.jump);
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
    // Without quotes and backslashes every argument is a run of the text's characters, so a
    // rule without "KUBE" has no per-service chain to jump to (most rules of SEP chains).
    const jump = !spec.includes('KUBE') && !spec.includes('"') && !spec.includes('\\') ? undefined : scanServiceJump(spec);
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

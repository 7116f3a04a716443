/**
 * nftables mode in the differential runner: both sides are compared as the KERNEL holds them,
 * not as text. The oracle's table is read back (`nft list table ip|ip6 kube-proxy`) in the
 * namespace where kube-proxy's own proxier programmed it; kpc's `compile --proxy-mode nftables
 * --standalone` output is loaded with `nft -f` into a fresh network namespace and read back by
 * the same code (`kpc-oracle-vX nft-load`, src/nftables.go). Both listings then go through
 * canonicalNftListing(), and the results are compared line by line.
 *
 * canonicalNftListing: nft's own text (the same nft binary prints both), with exactly three
 * things made order-independent. Each is an order nft or the kernel chooses, never one that
 * changes what the table does:
 *
 *  1. Objects (chains, sets, maps, counters, …) sorted by kind, then name. `nft list table`
 *     prints each kind in creation order, which for kube-proxy follows its Go map iteration
 *     over Services (random from run to run). Names are unique per kind within a table, so
 *     sorting loses nothing; what is inside a chain is left in its order.
 *  2. The elements of a named set or map sorted (one per line, `element …`; nft wraps them
 *     over several lines at its own widths). The kernel prints them in its storage order: for
 *     hash sets the bucket order of a hash seeded at random per set (nft_set_hash), so two
 *     loads of one text can list differently. A set has no order and no duplicates; each
 *     element is kept whole (key, comment, `: verdict`), so a key cannot move to another
 *     verdict.
 *  3. The items of an anonymous set or map inside a rule (`{ a, b }`, `vmap { 0 : goto x, … }`)
 *     sorted, for the same reason (anonymous sets are kernel sets too). Items are split only at
 *     top-level commas (not inside quotes or nested braces) and kept whole, so `0 : goto x`
 *     stays one item: numgen's index → endpoint mapping is compared exactly.
 *
 * Not normalised, so compared exactly: the table and its comment; every chain's type, hook,
 * priority, policy, comment, and its rules in order, each rule's text; every set's and map's
 * type, flags, timeout, size, comment and (as a sorted list) elements; counters. Blank lines
 * between blocks and indentation are dropped (nft's layout only).
 */

/** Splits `a, b comment "x, y" : goto c, d` on the separators outside quotes and brackets. */
export function splitTopLevel(s: string, sep = ','): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '"' && s[i - 1] !== '\\') quoted = !quoted;
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

/** A rule with the items of every (outermost) `{ … }` outside quotes sorted (normalisation 3). */
export function sortAnonymousSets(rule: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < rule.length; i++) {
    const ch = rule[i]!;
    if (ch === '"' && rule[i - 1] !== '\\') quoted = !quoted;
    if (quoted || ch !== '{') {
      out += ch;
      continue;
    }
    // the matching close brace
    let depth = 0;
    let q = false;
    let j = i;
    for (; j < rule.length; j++) {
      const c = rule[j]!;
      if (c === '"' && rule[j - 1] !== '\\') q = !q;
      if (q) continue;
      if (c === '{') depth++;
      if (c === '}' && --depth === 0) break;
    }
    if (j >= rule.length) throw new Error(`unbalanced braces in rule: ${rule}`);
    const items = splitTopLevel(rule.slice(i + 1, j)).map(sortAnonymousSets).sort();
    out += `{ ${items.join(', ')} }`;
    i = j;
  }
  return out;
}

interface Block {
  kind: string;
  name: string;
  lines: string[];
}

const KIND_ORDER: Record<string, number> = { counter: 0, quota: 1, limit: 2, set: 3, map: 4, flowtable: 5, chain: 6 };

/** The canonical form of `nft list table` text (see the header). Throws on text it cannot parse. */
export function canonicalNftListing(listing: string): string {
  const lines = listing.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const head: string[] = [];
  const blocks: Block[] = [];
  let i = 0;
  if (!/^table (ip|ip6|inet) \S+ \{$/.test(lines[0] ?? '')) throw new Error(`not an nft table listing: ${JSON.stringify(lines[0])}`);
  head.push(lines[i++]!);
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    if (l === '}') {
      if (i !== lines.length - 1) throw new Error(`text after the table's end: ${lines[i + 1]}`);
      break;
    }
    const m = /^(chain|set|map|counter|quota|limit|flowtable|ct helper|ct timeout|ct expectation|secmark|synproxy) (\S+) \{$/.exec(l);
    if (!m) {
      head.push(l);
      continue;
    }
    const b: Block = { kind: m[1]!, name: m[2]!, lines: [] };
    for (i++; i < lines.length && lines[i] !== '}'; i++) {
      const bl = lines[i]!;
      if (bl.startsWith('elements = {')) {
        // fold the element list (it may span lines) up to its closing brace
        let text = bl;
        while (!balanced(text)) {
          i++;
          if (i >= lines.length) throw new Error(`unterminated elements of ${b.kind} ${b.name}`);
          text += ' ' + lines[i]!;
        }
        const body = text.replace(/^elements = \{\s*/, '').replace(/\s*\}$/, '');
        b.lines.push(...splitTopLevel(body).map((e) => `element ${e}`).sort());
      } else b.lines.push(b.kind === 'chain' ? sortAnonymousSets(bl) : bl);
    }
    if (i >= lines.length) throw new Error(`unterminated ${b.kind} ${b.name}`);
    blocks.push(b);
  }
  blocks.sort((a, b) => (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out = [...head];
  for (const b of blocks) out.push(`${b.kind} ${b.name} {`, ...b.lines.map((l) => `\t${l}`), '}');
  return out.join('\n') + '\n';
}

function balanced(s: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '"' && s[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (ch === '{') depth++;
    if (ch === '}') depth--;
  }
  return depth === 0;
}

/** The nft family of a compile's flags (`--ip-family ipv6` → ip6). */
export function nftFamilyOf(flags: readonly string[]): 'ip' | 'ip6' {
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === '--ip-family' && flags[i + 1] === 'ipv6') return 'ip6';
    if (flags[i] === '--ip-family=ipv6') return 'ip6';
  }
  return 'ip';
}

/** kpc's refusal of the mode itself (not of an input): "kpc unsupported". */
export function kpcRefusesNFTables(code: number, stderr: string): boolean {
  if (code === 0) return false;
  return /nftables/i.test(stderr) && /(is invalid|not supported|unsupported|not implemented|Allowed choices)/i.test(stderr);
}

/**
 * The canonical form of an nftables rule body: one text for a rule whether it comes from
 * knftables' form (kube-proxy's transactions, kpc's output), from nft's listing
 * (`nft list table`), or from nft's JSON rendered as text (read.ts). nft rewrites what it
 * prints (`mark set mark or 0x00004000` → `meta mark set meta mark | 0x00004000`,
 * `ip daddr { 172.30.0.0/16 }` → `ip daddr 172.30.0.0/16`, `dnat ip addr . port to` →
 * `dnat ip to`, `iifname eth0` → `iifname "eth0"`, `{ a , b }` → `{ a, b }`); this form
 * undoes each of those, so that two texts of the same rule compare equal:
 *
 *   - `mark` on its own is `meta mark`; `and`/`or`/`xor` are `&`/`|`/`^`;
 *   - hex numbers are decimal; quotes are dropped;
 *   - `dnat ip addr . port to` / `dnat ip6 addr . port to` is `dnat ip to` / `dnat ip6 to`;
 *   - a brace group after `map`/`vmap` keeps its order (`{ 0 : a, 1 : b }`); any other brace
 *     group (anonymous sets, `update @s { ip saddr }`) has its elements sorted, and one
 *     element stands without braces.
 *
 * Equality of canonical forms is what a delta uses to decide that a chain is unchanged; a
 * false "different" only costs a rewrite of that chain, never a wrong state.
 */

/** Splits on blanks outside double quotes; `{`, `}` and `,` are tokens of their own. */
export function ruleTokens(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  const push = () => {
    if (cur !== '') out.push(cur);
    cur = '';
  };
  for (const ch of text) {
    if (ch === '"') {
      quoted = !quoted;
      cur += ch;
    } else if (quoted) cur += ch;
    else if (ch === ' ' || ch === '\t' || ch === '\n') push();
    else if (ch === '{' || ch === '}' || ch === ',') {
      push();
      out.push(ch);
    } else cur += ch;
  }
  push();
  return out;
}

function word(t: string): string {
  let w = t;
  if (w.length >= 2 && w.startsWith('"') && w.endsWith('"')) w = w.slice(1, -1);
  if (/^0x[0-9a-fA-F]+$/.test(w)) return String(parseInt(w, 16));
  if (w === 'and') return '&';
  if (w === 'or') return '|';
  if (w === 'xor') return '^';
  return w;
}

export function canonicalRule(text: string): string {
  const toks = ruleTokens(text);
  const out: string[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t === '{') {
      const elements: string[][] = [[]];
      let j = i + 1;
      for (; j < toks.length && toks[j] !== '}'; j++) {
        if (toks[j] === ',') elements.push([]);
        else elements[elements.length - 1]!.push(word(toks[j]!));
      }
      const items = elements.filter((e) => e.length > 0).map((e) => e.join(' '));
      const ordered = out.at(-1) === 'map' || out.at(-1) === 'vmap';
      if (!ordered) items.sort();
      out.push(ordered || items.length !== 1 ? `{ ${items.join(', ')} }` : items[0]!);
      i = j;
      continue;
    }
    const w = word(t);
    if (w === 'mark' && out.at(-1) !== 'meta' && out.at(-1) !== 'ct') out.push('meta');
    if ((w === 'addr' && (out.at(-1) === 'ip' || out.at(-1) === 'ip6') && out.at(-2) === 'dnat' && toks[i + 1] === '.' && toks[i + 2] === 'port' && toks[i + 3] === 'to')) {
      out.push('to');
      i += 3;
      continue;
    }
    out.push(w);
  }
  return out.join(' ');
}

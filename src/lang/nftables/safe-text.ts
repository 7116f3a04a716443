/**
 * The nftables printer's own guard against injection (defence in depth behind validation).
 *
 * `nft -f` reads one command per line (also `;`-separated), splits on blanks, and treats
 * `{ } ; # "` and newlines as syntax. Everything kpc writes comes from validated objects
 * (DNS labels, canonical IPs) or from kube-proxy's fixed texts; these checks make sure that,
 * even with a hole in validation, nothing from a manifest can end a name, a comment or a
 * command early.
 */

import { KpcError } from '../../errors.js';

/** kpc's own guard tripped: a bug (a validation hole), never the user's input to fix. */
export function unsafeNft(what: string, value: string): KpcError {
  return new KpcError('internal', 'internal.unsafe-output', `refusing to write unsafe nftables ${what} ${JSON.stringify(value)} into the output`);
}

/** knftables NameLengthMax: the longest table, chain, set or map name nft accepts. */
export const NAME_LENGTH_MAX = 256;
/** knftables CommentLengthMax (NFT_USERDATA_MAXLEN): the longest comment. */
export const COMMENT_LENGTH_MAX = 128;

/**
 * nftables identifiers: a letter, underscore or dot, then [A-Za-z0-9_./-] (kube-proxy's chain
 * names use exactly these; `/` separates namespace, name, protocol and port). Also what the
 * readers take back from a previous state (read-checks.ts, diff/nftables/aligned.ts).
 */
export const NFT_NAME = /^[A-Za-z_.][A-Za-z0-9_./-]*$/;
// What kpc's comments hold: kube-proxy's fixed texts and service port names (ns/name:port).
const COMMENT = /^[A-Za-z0-9 ./:_@,()'+-]*$/;
// One bare word of a rule or element: addresses, ports, CIDRs, keywords, `@set`, `0x…`, `*`.
const WORD = /^[A-Za-z0-9_.:/@*\[\]-]+$/;

/**
 * The two names last found safe, the latest first: a transaction's every line names the table,
 * and a chain's lines come one after the other, so three names asked about in four are one of
 * the two (1.7 of 2.3 million at 20,000 Services) and need no second check.
 */
let safeName1: string | undefined;
let safeName2: string | undefined;

/** A table, chain, set, map or counter name. */
export function nftName(name: string): string {
  if (name === safeName1) return name;
  if (name !== safeName2) {
    if (!NFT_NAME.test(name) || name.length > NAME_LENGTH_MAX) throw unsafeNft('name', name);
  }
  safeName2 = safeName1;
  safeName1 = name;
  return name;
}

/** A comment, quoted as Go's %q does (which, for the characters allowed here, adds quotes only). */
export function nftComment(text: string): string {
  if (!COMMENT.test(text) || Buffer.byteLength(text, 'utf8') > COMMENT_LENGTH_MAX) throw unsafeNft('comment', text);
  return `"${text}"`;
}

/** A bare word (an address, a port, a verdict keyword) written into a rule or an element. */
export function nftWord(word: string): string {
  if (!WORD.test(word)) throw unsafeNft('word', word);
  return word;
}

/** An interface name or pattern of a local-traffic detector (`iifname eth0`, `iifname veth*`). */
export function nftInterface(name: string): string {
  if (!/^[A-Za-z0-9_.@:-]{1,15}\*?$/.test(name)) throw unsafeNft('interface name', name);
  return name;
}

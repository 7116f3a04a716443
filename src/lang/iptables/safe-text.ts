/**
 * The emitter's own guard against injection (defence in depth behind validation).
 *
 * iptables-restore reads one command per line and splits arguments on blanks outside
 * double quotes; a newline in any value would start a new command, a stray quote would
 * end a comment early. Validation already restricts names to DNS labels; these checks
 * make sure nothing else can reach the output even if validation had a hole.
 */

import { KpcError } from '../../errors.js';

/** kpc's own guard tripped: a bug (a validation hole), never the user's input to fix. */
export function unsafeOutput(what: string, value: string): KpcError {
  return new KpcError('internal', 'internal.unsafe-output', `refusing to write unsafe ${what} ${JSON.stringify(value)} into the output`);
}

// Characters that can appear in namespace/name/port names, addresses and kpc's fixed texts.
const COMMENT_TEXT = /^[A-Za-z0-9 ./:;_\[\]>,-]+$/;
const BARE_TOKEN = /^[A-Za-z0-9./:_\[\]-]+$/;
const CHAIN_NAME = /^[A-Z][A-Z0-9-]{0,27}$/;
const MAX_COMMENT_BYTES = 255; // XT_MAX_COMMENT_LEN 256 including the NUL

/** A comment that needs quotes (it has spaces): `"ns1/svc1:p80 cluster IP"`. */
export function quotedComment(text: string): string {
  if (!COMMENT_TEXT.test(text) || text.length > MAX_COMMENT_BYTES) throw unsafeOutput('comment', text);
  return `"${text}"`;
}

/** A comment kube-proxy writes without quotes (the bare service port name). */
export function bareComment(text: string): string {
  if (!BARE_TOKEN.test(text) || text.length > MAX_COMMENT_BYTES) throw unsafeOutput('comment', text);
  return text;
}

export function chainName(name: string): string {
  if (!CHAIN_NAME.test(name)) throw unsafeOutput('chain name', name);
  return name;
}

/** Interface names from configuration (`-i cbr0`, `-i veth+`). */
export function interfaceName(name: string): string {
  if (!/^[A-Za-z0-9_.@:-]{1,15}\+?$/.test(name)) throw unsafeOutput('interface name', name);
  return name;
}

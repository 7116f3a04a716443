/**
 * Whether a rule's text shows, without parsing it, that no packet to a given address can match
 * it: kube-proxy's KUBE-SERVICES holds a rule per service port, each with its own `-d`, and a
 * trace through a node's 27,000 of them needs only the few for its destination (LazyChain.ruleFor).
 *
 * Only one form is read, and anything else answers false (the rule is parsed and evaluated):
 * a blank-separated `-d ADDRESS` outside quotes, not negated (`! -d`, `-d !`), one address (no
 * comma list), and no `-i` / `-o` in the rule. The tracer evaluates the core options (`-s`, `-d`,
 * `-p`, ...) first, in the order written, and of them only an interface test has an effect (a
 * note when the interface is unknown), so a destination that cannot match ends the rule's
 * evaluation as it would have ended with the rule parsed.
 */

import { formatIP, isCanonicalIPv4, type IP } from '../../net/ip.js';
import { addressMatches, parseAddressSpec } from './address.js';

/** `args`: a rule's text after `-A CHAIN`. */
export function excludesDestination(args: string, to: IP): boolean {
  const at = args.indexOf(' -d ');
  if (at < 0 || args.includes('\t') || args.includes('\\')) return false;
  if (args.includes(' -i ') || args.includes(' -o ') || args.includes('-interface')) return false;
  if (!outsideQuotes(args, at)) return false;
  // `! -d`: the blank-separated "!" before it negates it.
  if (at >= 1 && args.charCodeAt(at - 1) === 0x21 && (at === 1 || args.charCodeAt(at - 2) === 0x20)) return false;
  const from = at + 4;
  let end = args.indexOf(' ', from);
  if (end < 0) end = args.length;
  const value = args.slice(from, end);
  if (value === '' || value.startsWith('!') || value.includes(',') || value.includes('"')) return false;
  // kube-proxy writes a ClusterIP as a plain dotted quad with /32: a text compare, no parse.
  const host = value.endsWith('/32') ? value.slice(0, -3) : value;
  if (to.family === 'IPv4' && isCanonicalIPv4(host)) return host !== formatIP(to);
  const spec = parseAddressSpec(value);
  return spec !== undefined && !addressMatches(spec, to);
}

/** An even number of double quotes before `at` (the text holds no backslash escapes). */
function outsideQuotes(text: string, at: number): boolean {
  let quotes = 0;
  for (let q = text.indexOf('"'); q >= 0 && q < at; q = text.indexOf('"', q + 1)) quotes++;
  return quotes % 2 === 0;
}

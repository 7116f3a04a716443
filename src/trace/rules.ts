/**
 * The rules `kpc trace` follows, in each tracer's own form (TraceRules): what a mode's backend
 * hands over when compiling (modes' traceRules), and what a `--rules` file is read as
 * (rulesOfText: the form is told by the text). traceThrough sends a packet through
 * whichever it is.
 */

import type { IpvsBundle } from '../emit/ipvs/bundle.js';
import { readRules } from '../lang/iptables/read.js';
import type { AsciiBytes } from '../lang/ascii-bytes.js';
import { PiecedText } from '../lang/pieced-text.js';
import type { TextSource } from '../lang/text-source.js';
import { firstSignificantLine, KUBE_PROXY_TABLE, notATransaction, readNftView, type NftFamily, type NftTableView } from '../lang/nftables/index.js';
import { traceIpvsBundle, type IpvsTraceResult } from './ipvs.js';
import { traceNftState } from './nftables.js';
import type { NodeSpec, PacketSpec } from './result.js';
import { traceRuleSet } from './tracer.js';

export type TraceRules =
  /** iptables-save / iptables-restore text (kpc's output, possibly focused, or a node's file's bytes). */
  | { form: 'iptables'; text: string | AsciiBytes }
  /** One nftables table (kube-proxy's), read or built. */
  | { form: 'nftables'; table: NftTableView }
  /** IPVS mode's bundle: ipvs, ipset and iptables rules and the kube-ipvs0 addresses. */
  | { form: 'ipvs'; bundle: IpvsBundle };

/**
 * nft's forms (a transaction, `nft list` text, `nft -j` JSON) rather than iptables-save's:
 * decided by the first line that is not blank or a comment (read without splitting 78 MB).
 */
function isNftText(text: TextSource): boolean {
  const l = firstSignificantLine(text);
  return l !== undefined && (/^(table|add|flush|delete|insert|replace|create)\s/.test(l) || l.startsWith('{'));
}

/**
 * A rules text that is not an IPVS bundle as the tracer reads it: one of nft's forms (the
 * `family` table, read lazily), or iptables-save text. (A bundle, a directory or the inline
 * script kpc prints in IPVS mode, is read by diff/ipvs: the command finds it first.)
 */
export function rulesOfText(text: TextSource, family: NftFamily): TraceRules {
  if (isNftText(text)) return { form: 'nftables', table: readNftView(text, family, KUBE_PROXY_TABLE) };
  // kpc's iptables output at 100,000 Services is 404 MB, bytes that index; only nftables' is
  // longer than a string, and a non-ASCII text that long is in pieces.
  if (text instanceof PiecedText) throw notATransaction(text, 1, 'this text is not one');
  return { form: 'iptables', text };
}

/** The packet through the rules; `warnings` are what reading iptables rules found (for a node's file). */
export function traceThrough(rules: TraceRules, packet: PacketSpec, node: NodeSpec): { result: IpvsTraceResult; warnings: string[] } {
  switch (rules.form) {
    case 'ipvs':
      return { result: traceIpvsBundle(rules.bundle, packet, node), warnings: [] };
    case 'nftables':
      return { result: traceNftState(rules.table, packet, node), warnings: [] };
    case 'iptables': {
      // Only the chains the packet goes through are parsed (and warned about).
      const rs = readRules(rules.text, { lazy: true });
      const result = traceRuleSet(rs, packet, node);
      return { result, warnings: rs.warnings };
    }
  }
}

/**
 * The printer: one operation per line, exactly as knftables (objects.go writeOperation,
 * v0.0.17–v0.0.22, identical for the objects kube-proxy uses) writes it to `nft -f -`:
 *
 *   add table ip kube-proxy { comment "rules for kube-proxy" ; }
 *   add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
 *   add set ip kube-proxy affinity-X { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
 *   add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-X }
 *   add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
 *   delete counter ip kube-proxy localhost-nodeport-rejected-tcp
 *
 * Every name, comment and element word passes safe-text.ts; rule bodies are checked by the
 * emitter word by word where they hold values.
 */

import type { NftFamily, NftOperation, NftTransaction } from './model.js';
import { nftComment, nftName, nftWord } from './safe-text.js';

/** Key or value words joined by ` . ` (a value such as `goto CHAIN` is checked word by word). */
function words(list: readonly string[]): string {
  return list.map((w) => w.split(' ').map(nftWord).join(' ')).join(' . ');
}

/** One operation's line (without the newline). */
export function printOperation(family: NftFamily, table: string, op: NftOperation): string {
  const { verb, object: o } = op;
  const head = `${verb} ${o.kind} ${family} ${nftName(table)}`;
  switch (o.kind) {
    case 'table':
      return verb === 'add' && o.comment !== undefined ? `${verb} table ${family} ${nftName(table)} { comment ${nftComment(o.comment)} ; }` : `${verb} table ${family} ${nftName(table)}`;
    case 'chain': {
      let line = `${head} ${nftName(o.name)}`;
      if (verb === 'add' && (o.base || o.comment !== undefined)) {
        line += ' {';
        if (o.base) line += ` type ${o.base.type} hook ${o.base.hook} priority ${o.base.priority} ;`;
        if (o.comment !== undefined) line += ` comment ${nftComment(o.comment)} ;`;
        line += ' }';
      }
      return line;
    }
    case 'set':
    case 'map': {
      let line = `${head} ${nftName(o.name)}`;
      if (verb === 'add') {
        line += ` { type ${o.type} ;`;
        if (o.flags && o.flags.length > 0) line += ` flags ${o.flags.join(',')} ;`;
        if (o.timeout !== undefined) line += ` timeout ${o.timeout}s ;`;
        if (o.comment !== undefined) line += ` comment ${nftComment(o.comment)} ;`;
        line += ' }';
      }
      return line;
    }
    case 'counter':
      return `${head} ${nftName(o.name)}`;
    case 'element': {
      let line = `${verb} element ${family} ${nftName(table)} ${nftName(o.container)} { ${words(o.key)}`;
      if (verb === 'add') {
        if (o.comment !== undefined) line += ` comment ${nftComment(o.comment)}`;
        if (o.value && o.value.length > 0) line += ` : ${words(o.value)}`;
      }
      return `${line} }`;
    }
    case 'rule': {
      let line = `${head} ${nftName(o.chain)}`;
      if (verb === 'add') {
        line += ` ${o.rule}`;
        if (o.comment !== undefined) line += ` comment ${nftComment(o.comment)}`;
      }
      return line;
    }
  }
}

/** Operations' lines, each ending in a newline. */
export function renderOperations(family: NftFamily, table: string, ops: readonly NftOperation[]): string {
  let text = '';
  for (const op of ops) text += printOperation(family, table, op) + '\n';
  return text;
}

/**
 * The transaction's text, one line per operation, each ending in a newline, in chunks of
 * `chunkLines` lines. Small chunks (~30 KB) die young, where a large string is made in the old
 * generation: printing 100,000 Services' 721 MB beside a transaction held whole (as `compile
 * --previous` once did) took 2.9 s of full collections in chunks of 4,096 lines, 2.3 s in
 * chunks of 256.
 */
export function* renderTransaction(tx: NftTransaction, chunkLines = 256): Iterable<string> {
  let chunk: string[] = [];
  for (const op of tx.ops) {
    chunk.push(printOperation(tx.family, tx.table, op));
    if (chunk.length >= chunkLines) {
      yield chunk.join('\n') + '\n';
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk.join('\n') + '\n';
}

export function renderTransactionText(tx: NftTransaction): string {
  return Array.from(renderTransaction(tx)).join('');
}

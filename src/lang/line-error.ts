/**
 * A problem at one line of a text kpc reads back (iptables-save output, an ipvsadm-save dump,
 * an ipset save, an address list): the reader knows the line, its caller the file
 * (KpcError.inFile).
 */

import { KpcError } from '../errors.js';

export function lineError(line: number, detail: string): KpcError {
  return new KpcError('input', 'previous.unreadable', detail, { file: '', line });
}

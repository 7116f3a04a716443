/**
 * A problem at one line of a text kpc reads back (iptables-save output, an ipvsadm-save dump,
 * an ipset save, an address list). Each reader has its own subclass, so a caller holding
 * several texts can tell which one the line is in.
 */
export abstract class LineReadError extends Error {
  constructor(
    readonly line: number,
    readonly detail: string,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = new.target.name;
  }
}

/**
 * A text longer than one JavaScript string can be (constants.MAX_STRING_LENGTH, 536,870,888
 * characters): kpc's nftables transaction at 100,000 Services is 721 MB. It is held as pieces
 * that each end at a line's end (no line is split), and read through the few methods of a
 * string the lazy readers use, at positions in the whole text (a TextSource, text-source.ts).
 */

export class PiecedText {
  readonly length: number;
  /** Where each piece starts in the whole text. */
  private readonly bases: number[] = [];
  /** The piece the last position asked for lies in (readers ask for nearby positions). */
  private last = 0;

  /** `pieces`: every one but the last ends with a line feed. */
  constructor(readonly pieces: readonly string[]) {
    if (pieces.length === 0) this.pieces = [''];
    let at = 0;
    for (const piece of this.pieces) {
      this.bases.push(at);
      at += piece.length;
    }
    this.length = at;
  }

  /** Where piece `k` starts in the whole text. */
  base(k: number): number {
    return this.bases[k]!;
  }

  charCodeAt(at: number): number {
    const k = this.pieceAt(at);
    return this.pieces[k]!.charCodeAt(at - this.bases[k]!);
  }

  /** As a string's, for positions from 0 (no negative ones counted from the end). */
  slice(start: number, end = this.length): string {
    end = Math.min(end, this.length);
    if (end <= start) return '';
    const k = this.pieceAt(start);
    const base = this.bases[k]!;
    const piece = this.pieces[k]!;
    if (end <= base + piece.length) return piece.slice(start - base, end - base);
    // Across pieces: only a run of lines asks for that, never a line or a name.
    return piece.slice(start - base) + this.slice(base + piece.length, end);
  }

  /** The first `search` at or after `from`; a match is found within a piece (a line), not across two. */
  indexOf(search: string, from = 0): number {
    for (let k = this.pieceAt(Math.max(0, from)); k < this.pieces.length; k++) {
      const base = this.bases[k]!;
      const found = this.pieces[k]!.indexOf(search, Math.max(0, from - base));
      if (found >= 0) return base + found;
    }
    return -1;
  }

  startsWith(search: string, at = 0): boolean {
    const k = this.pieceAt(at);
    const base = this.bases[k]!;
    const piece = this.pieces[k]!;
    if (at + search.length <= base + piece.length) return piece.startsWith(search, at - base);
    return this.slice(at, at + search.length) === search;
  }

  /** Whether [a, a + length) and [b, b + length) hold the same characters. */
  sameRange(a: number, b: number, length: number): boolean {
    return this.slice(a, a + length) === this.slice(b, b + length);
  }

  private pieceAt(at: number): number {
    const bases = this.bases;
    let k = this.last;
    if (at >= bases[k]! && (k + 1 === bases.length || at < bases[k + 1]!)) return k;
    k = 0;
    while (k + 1 < bases.length && at >= bases[k + 1]!) k++;
    this.last = k;
    return k;
  }
}

/**
 * Lines of an input file: the line-length defence, and byte offset → line:column for
 * diagnostics, both from one pass over the newlines.
 *
 * Diagnostics are rare, so the index keeps one line start in every LineIndex.STRIDE lines
 * (about 6,000 numbers for a 150 MB `kubectl get -o json`) and counts the rest on demand.
 */

/** Byte offset → 1-based line and column, from sparse line starts. */
export class LineIndex {
  /** A line start is kept for lines 1, 1 + STRIDE, 1 + 2·STRIDE, ... */
  static readonly STRIDE = 1024;

  /** checkpoints[k] is the byte offset where line k·STRIDE + 1 starts. */
  constructor(
    private readonly bytes: Uint8Array,
    private readonly checkpoints: readonly number[],
  ) {}

  /** 1-based line and column of a byte offset (columns in bytes). */
  at(offset: number): { line: number; column: number } {
    const cps = this.checkpoints;
    let lo = 0;
    let hi = cps.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (cps[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    // Walk the (at most STRIDE) newlines between the checkpoint and the offset.
    let line = lo * LineIndex.STRIDE + 1;
    let lineStart = cps[lo]!;
    for (let nl = this.bytes.indexOf(0x0a, lineStart); nl >= 0 && nl < offset; nl = this.bytes.indexOf(0x0a, nl + 1)) {
      line++;
      lineStart = nl + 1;
    }
    return { line, column: offset - lineStart + 1 };
  }
}

/** The first line longer than `maxLineBytes`, or the file's line index when there is none. */
export function scanLines(bytes: Uint8Array, maxLineBytes: number): { tooLong: { line: number; length: number } } | { index: LineIndex } {
  const checkpoints = [0];
  let start = 0;
  let line = 1;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    if (end - start > maxLineBytes) return { tooLong: { line, length: end - start } };
    start = end + 1;
    line++;
    if ((line - 1) % LineIndex.STRIDE === 0) checkpoints.push(start);
  }
  return { index: new LineIndex(bytes, checkpoints) };
}

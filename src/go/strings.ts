/**
 * Go's `strings` semantics that kube-proxy and the API server rely on, for the places kpc
 * mirrors them. JavaScript's `String.prototype.trim` is not Go's `strings.TrimSpace`: JS
 * trims U+FEFF, Go does not; Go trims U+0085 (NEL), JS does not. A difference there once let
 * a source range validate (Go's trim) and then be dropped (JS's trim), opening a firewall.
 * Every mirror of a Go TrimSpace uses `goTrimSpace`.
 */

/**
 * unicode.IsSpace: '\t', '\n', '\v', '\f', '\r', ' ', U+0085 (NEL), U+00A0 (NBSP), and beyond
 * Latin-1 the White_Space property (U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
 * U+3000). test/go/strings.test.ts checks the set against Go itself when Go is installed.
 */
export function isGoSpace(codeUnit: number): boolean {
  if (codeUnit <= 0xff) {
    return codeUnit === 0x20 || (codeUnit >= 0x09 && codeUnit <= 0x0d) || codeUnit === 0x85 || codeUnit === 0xa0;
  }
  return (
    codeUnit === 0x1680 ||
    (codeUnit >= 0x2000 && codeUnit <= 0x200a) ||
    codeUnit === 0x2028 ||
    codeUnit === 0x2029 ||
    codeUnit === 0x202f ||
    codeUnit === 0x205f ||
    codeUnit === 0x3000
  );
}

/** strings.TrimSpace: leading and trailing unicode.IsSpace characters removed. */
export function goTrimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  // Every Go space is in the BMP, so UTF-16 code units are enough (a surrogate is never a space).
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/**
 * Go's `<` on strings: the order of their UTF-8 bytes (sort.Strings, slices.Sort, sets.List()).
 * JavaScript's `<` compares UTF-16 code units, which agrees with UTF-8 byte order except where
 * a character above U+FFFF (a surrogate pair, 0xD800–0xDFFF) meets one in U+E000–U+FFFF: in
 * UTF-8 the former is the larger, in UTF-16 the smaller. Every mirror of a Go string sort uses
 * this (never localeCompare, whose order depends on the locale).
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x >= 0xd800 && y >= 0xd800) {
    const xs = x <= 0xdfff;
    const ys = y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
  }
  return x < y ? -1 : 1;
}

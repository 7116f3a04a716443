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

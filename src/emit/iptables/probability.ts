/**
 * `--probability` text: Go's fmt.Sprintf("%0.10f", 1.0/float64(n)) (proxier.go computeProbability).
 *
 * Go rounds the exact binary value of the double correctly, ties to even; JavaScript's
 * toFixed rounds the decimal expansion with ties away from zero. They differ only on exact
 * ties, so we detect those with exact integer arithmetic on the double's bits.
 */

const cache = new Map<number, string>();

export function probability(n: number): string {
  let text = cache.get(n);
  if (text === undefined) {
    text = formatFixed10(1 / n);
    if (cache.size < 100_000) cache.set(n, text);
  }
  return text;
}

/** %0.10f of a double in (0, 1], ties to even. */
export function formatFixed10(x: number): string {
  const naive = x.toFixed(10);
  // An exact tie needs x * 10^10 to end in exactly .5, i.e. x = k/2 * 10^-10 exactly.
  // Check with BigInt: x = m * 2^e exactly; scaled = m * 2^e * 10^10.
  const { mantissa, exponent } = decompose(x);
  if (exponent >= 0) return naive; // integers have no fraction to round
  const scaled = mantissa * 10n ** 10n; // value * 2^-exponent... numerator over 2^(-exponent)
  const denom = 1n << BigInt(-exponent);
  const q = scaled / denom;
  const r = scaled % denom;
  if (r * 2n !== denom) return naive; // not a tie: toFixed is already correct
  const rounded = q % 2n === 0n ? q : q + 1n; // ties to even
  const s = rounded.toString().padStart(11, '0');
  return `${s.slice(0, -10)}.${s.slice(-10)}`;
}

function decompose(x: number): { mantissa: bigint; exponent: number } {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exponent: number;
  if (biased === 0) {
    exponent = -1074;
  } else {
    mantissa |= 1n << 52n;
    exponent = biased - 1075;
  }
  return { mantissa, exponent };
}

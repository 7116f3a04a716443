/**
 * resource.Quantity (apimachinery pkg/api/resource/quantity.go), as far as kpc reads one: a
 * Node's allocatable CPU, which the EndpointSlice controller's topology cache weighs zones by.
 * A quantity is kept exact, as a fraction of two big integers, so sums and MilliValue() round
 * as Go's do (MilliValue rounds up).
 */

export interface Quantity {
  num: bigint;
  den: bigint;
}

export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** ParseQuantity; undefined where Go returns an error. */
export function parseQuantity(text: string): Quantity | undefined {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(text);
  if (!m || text === '') return undefined;
  const [, sign, whole, frac = '', suffix] = m;
  if (whole === '' && frac === '') return undefined;
  let num = BigInt((whole || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (suffix! in BINARY) num *= BINARY[suffix!]!;
  else if (suffix! in DECIMAL) {
    const e = DECIMAL[suffix!]!;
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  } else {
    const x = /^[eE]([+-]?[0-9]+)$/.exec(suffix!);
    if (!x) return undefined;
    const e = Number(x[1]);
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  }
  if (sign === '-') num = -num;
  return { num, den };
}

export function addQuantities(a: Quantity, b: Quantity): Quantity {
  return { num: a.num * b.den + b.num * a.den, den: a.den * b.den };
}

export function isZeroQuantity(q: Quantity): boolean {
  return q.num === 0n;
}

/** Quantity.MilliValue: the value in thousandths, rounded up. */
export function milliValue(q: Quantity): number {
  const n = q.num * 1000n;
  let v = n / q.den;
  if (n % q.den !== 0n && n > 0n) v += 1n;
  return Number(v);
}

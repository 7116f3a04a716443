/**
 * Orders. kpc sorts wherever kube-proxy iterates a Go map or set; where a real tool prints
 * in its own order (ipvsadm -S), kpc reproduces that tool's order.
 */

import { compareIPs } from '../../net/ip.js';
import { canonicalIPValue } from './safe-text.js';

/** Canonical addresses in numeric order (IPv4 before IPv6), for kpc's own lists; each parsed once. */
export function sortIPs(texts: Iterable<string>): string[] {
  const items = Array.from(texts, (text) => ({ text, ip: canonicalIPValue(text) }));
  items.sort((a, b) => compareIPs(a.ip, b.ip));
  return items.map((i) => i.text);
}

/** Byte-wise string order: Go's sort.Strings, which kube-proxy's sets.List() uses (re-exported for diff/ipvs). */
export { compareStrings } from '../../go/strings.js';

/**
 * glibc's qsort (msort_with_tmp, glibc ≤2.36 and again from 2.39): a top-down merge sort that
 * splits n into n/2 and n - n/2 and takes from the left run while cmp(left, right) <= 0.
 * With a consistent comparator any sort gives the same result; ipvsadm's comparators are not
 * always consistent (see ipvsadm.ts), and then only this algorithm reproduces its order.
 */
export function glibcMergeSort<T>(items: readonly T[], cmp: (a: T, b: T) => number): T[] {
  const a = [...items];
  const tmp = new Array<T>(a.length);
  const sort = (lo: number, n: number): void => {
    if (n <= 1) return;
    const n1 = Math.floor(n / 2);
    const n2 = n - n1;
    sort(lo, n1);
    sort(lo + n1, n2);
    let i = lo;
    let j = lo + n1;
    const iEnd = lo + n1;
    const jEnd = lo + n;
    let k = 0;
    while (i < iEnd && j < jEnd) {
      if (cmp(a[i]!, a[j]!) <= 0) tmp[k++] = a[i++]!;
      else tmp[k++] = a[j++]!;
    }
    while (i < iEnd) tmp[k++] = a[i++]!;
    // The rest of the right run is already in place (glibc copies only the merged prefix).
    for (let m = 0; m < k; m++) a[lo + m] = tmp[m]!;
  };
  sort(0, a.length);
  return a;
}

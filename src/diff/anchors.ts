/**
 * An edit script past the point where the shortest one is worth looking for: two sequences
 * cut at their anchors, the elements that occur exactly once in each (the "patience" idea of
 * Bram Cohen's diff, also git's --patience). In kpc's outputs nearly every line names its
 * Service or its chain's hash, so nearly every unchanged line is an anchor and the pieces
 * between anchors are small; each piece is compared on its own (the shortest script when it
 * has one within bounds), and a piece that has none is replaced whole (deleted, then inserted).
 *
 * The script is valid (it turns the old sequence into the new) but not always the shortest.
 * Memory is linear in the elements compared, time O(n log n) over them.
 */

import type { Change } from './sequence.js';

/** Element i of the old sequence, element j of the new, as keys (equal keys: equal elements). */
export interface Keys {
  a(i: number): string;
  b(j: number): string;
}

/** The changes of one piece, or undefined when there is no script within bounds. */
export type PieceChanges = (aFrom: number, aTo: number, bFrom: number, bTo: number) => Change[] | undefined;

/** The changes between old [aFrom, aTo) and new [bFrom, bTo), cut at anchors; `piece` compares what lies between them. */
export function anchoredChanges(aFrom: number, aTo: number, bFrom: number, bTo: number, keys: Keys, piece: PieceChanges): Change[] {
  const { xs, ys } = anchors(aFrom, aTo, bFrom, bTo, keys);
  const out: Change[] = [];
  let x = aFrom;
  let y = bFrom;
  for (let k = 0; k <= xs.length; k++) {
    // Up to the next anchor (the last piece: up to the ends); the anchor itself is kept.
    const ax = k < xs.length ? xs[k]! : aTo;
    const ay = k < ys.length ? ys[k]! : bTo;
    if (ax > x || ay > y) for (const c of piece(x, ax, y, ay) ?? replaced(x, ax, y, ay)) out.push(c);
    x = ax + 1;
    y = ay + 1;
  }
  return out;
}

/** Old [x0, x1) deleted, then new [y0, y1) inserted in their place. */
function replaced(x0: number, x1: number, y0: number, y1: number): Change[] {
  const out: Change[] = [];
  for (let x = x0; x < x1; x++) out.push({ op: 'delete', x, y: y0 });
  for (let y = y0; y < y1; y++) out.push({ op: 'insert', x: x1, y });
  return out;
}

/**
 * The anchors, in order in both sequences: of the elements that occur once in each, the
 * longest run whose positions increase in both (a longest increasing subsequence).
 */
function anchors(aFrom: number, aTo: number, bFrom: number, bTo: number, keys: Keys): { xs: number[]; ys: number[] } {
  // A key's slot, made in the old sequence's order; its position there and in the new
  // sequence, or REPEATED (more than once) or ABSENT (not in the new sequence).
  const REPEATED = -2;
  const ABSENT = -1;
  const slot = new Map<string, number>();
  const inA: number[] = [];
  const inB: number[] = [];
  for (let i = aFrom; i < aTo; i++) {
    const key = keys.a(i);
    const s = slot.get(key);
    if (s === undefined) {
      slot.set(key, inA.length);
      inA.push(i);
      inB.push(ABSENT);
    } else inA[s] = REPEATED;
  }
  for (let j = bFrom; j < bTo; j++) {
    const s = slot.get(keys.b(j));
    if (s !== undefined) inB[s] = inB[s] === ABSENT ? j : REPEATED;
  }
  // Slots are in the old order, so the candidates' old positions increase already.
  const cx: number[] = [];
  const cy: number[] = [];
  for (let s = 0; s < inA.length; s++) {
    if (inA[s]! >= 0 && inB[s]! >= 0) {
      cx.push(inA[s]!);
      cy.push(inB[s]!);
    }
  }
  const chosen = longestIncreasing(cy);
  return { xs: chosen.map((k) => cx[k]!), ys: chosen.map((k) => cy[k]!) };
}

/** The indices of a longest strictly increasing subsequence of `v`, in order (patience sorting, O(n log n)). */
export function longestIncreasing(v: readonly number[]): number[] {
  // tails[l]: the index of the smallest last element of an increasing run of length l + 1.
  const tails: number[] = [];
  const before = new Int32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (v[tails[mid]!]! < v[i]!) lo = mid + 1;
      else hi = mid;
    }
    before[i] = lo > 0 ? tails[lo - 1]! : -1;
    tails[lo] = i;
  }
  const out: number[] = new Array<number>(tails.length);
  for (let k = tails.length - 1, i = tails.length ? tails[tails.length - 1]! : -1; k >= 0; k--, i = before[i]!) out[k] = i;
  return out;
}

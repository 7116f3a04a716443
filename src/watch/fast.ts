/**
 * What a mode's fast path gives the watch engine (iptables.ts, nftables.ts, ipvs.ts): the state of the
 * service ports held, the delta when a few Services' ports change, and the whole comparison
 * when anything else changes.
 */

import { compareStrings } from '../go/strings.js';
import { portKey } from '../ir/build.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';

/** One step's result, kept only when `commit` is called. */
export interface FastStep {
  /** The delta, as compile --previous prints it ('' when nothing changes). */
  text: string;
  /** compile --previous's warnings for it (IPVS: the sync's), if any. */
  warnings?: string[];
  /** Service entries of the state before, for the emptying refusal (counted when asked). */
  before(): number;
  /** The service ports after the change. */
  ports: number;
  commit(): void;
}

export interface FastPath {
  /** The full output of the state's first build, once. */
  takeInitialText(): string;
  /** compile's warnings for that output, if the mode has any. */
  initialWarnings?(): string[];
  readonly servicePorts: readonly ServicePort[];
  /**
   * The delta when the service ports of the Services `services` (`ns/name`) become `ports`
   * (sorted as buildIR sorts them), or undefined when only `rebuild` can tell.
   */
  change(services: readonly string[], ports: readonly ServicePort[]): FastStep | undefined;
  /** The delta to a whole new IR. */
  rebuild(ir: ProxyIR): FastStep;
}

/** A service port's key, as buildIR sorts the service ports by it. */
export function servicePortKey(sp: ServicePort): string {
  return portKey(sp.namespace, sp.name, sp.portName, sp.protocol);
}

/** The first index of the sorted `keys` whose key is not below `key`. */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareStrings(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The keys of the Services' ports in `keys` (sorted): each Service's ports are one run, its keys starting `ns/name` NUL. */
export function serviceRanges(keys: readonly string[], services: readonly string[]): Array<{ service: string; lo: number; hi: number }> {
  return [...new Set(services)].sort(compareStrings).map((s) => ({ service: s, lo: lowerBound(keys, `${s}\u0000`), hi: lowerBound(keys, `${s}\u0001`) }));
}

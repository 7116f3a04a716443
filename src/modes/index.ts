/**
 * The proxy modes kpc compiles for, by name. Adding a mode is one module implementing
 * ModeBackend (backend.ts) and one entry here; the commands find it through backendFor.
 */

import { usageError } from '../errors.js';
import type { ModeBackend, ProxyMode } from './backend.js';
import { iptablesBackend } from './iptables.js';
import { ipvsBackend } from './ipvs.js';
import { nftablesBackend } from './nftables.js';

export type { CheckResult, DeltaOptions, DiffReport, EmitOptions, Emitted, ModeBackend, ModeOutput, PreviousState, ProxyMode, StdinReader } from './backend.js';

const BACKENDS: ReadonlyMap<ProxyMode, ModeBackend> = new Map<ProxyMode, ModeBackend>([
  ['iptables', iptablesBackend],
  ['ipvs', ipvsBackend],
  ['nftables', nftablesBackend],
]);

/** The modes kpc compiles, in the order help lists them. */
export const PROXY_MODES: readonly ProxyMode[] = [...BACKENDS.keys()];

/** The modes that can do `what` (e.g. trace), for a command's --proxy-mode choices. */
export function modesWith(what: keyof ModeBackend): ProxyMode[] {
  return PROXY_MODES.filter((m) => BACKENDS.get(m)![what] !== undefined);
}

export function backendFor(mode: string): ModeBackend {
  const backend = BACKENDS.get(mode as ProxyMode);
  if (!backend) throw usageError(`--proxy-mode: "${mode}" is not supported; kpc compiles ${PROXY_MODES.join(', ')}`);
  return backend;
}

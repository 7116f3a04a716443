/**
 * Feature gates as a release's kube-proxy applies them: component-base's featuregate
 * SetFromMap (unknown, locked and not-yet-available gates refused; AllAlpha/AllBeta; the
 * dependencies between gates, from v1.35), over the release's own gate table.
 */

import { FEATURE_GATE_TABLES } from './feature-gates.js';
import type { KubeProxyRelease } from './release.js';

export type GateStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED' | 'PREALPHA';

export interface GateSpec {
  name: string;
  stage: GateStage;
  default: boolean;
  locked: boolean;
  dependsOn: readonly string[];
}

const tables = new Map<KubeProxyRelease, Map<string, GateSpec>>();

/** The gates a release knows, by name (parsed once). */
export function gatesOf(release: KubeProxyRelease): ReadonlyMap<string, GateSpec> {
  let table = tables.get(release);
  if (!table) {
    table = new Map();
    for (const line of FEATURE_GATE_TABLES[release].split('\n')) {
      if (line === '') continue;
      const [name, stage, dflt, locked, deps] = line.split(' ') as [string, GateStage, string, string, string | undefined];
      table.set(name, { name, stage, default: dflt === '1', locked: locked === '1', dependsOn: deps ? deps.split(',') : [] });
    }
    tables.set(release, table);
  }
  return table;
}

export interface GateProblem {
  /** The requested gate the problem comes from (for a dependency, the disabled gate that was set). */
  gate: string;
  message: string;
}

export interface AppliedGates {
  /** Whether a gate is on (its default unless set). Unknown names are off. */
  enabled(name: string): boolean;
  /** SetFromMap's errors, in kube-proxy's words; none means the map was accepted. */
  errors: GateProblem[];
  /** What kube-proxy logs as a warning: setting a GA or deprecated gate. */
  warnings: GateProblem[];
}

const SPECIAL: Record<string, GateStage> = { AllAlpha: 'ALPHA', AllBeta: 'BETA' };

/**
 * Applies `requested` as SetFromMap does. Go walks the map in random order and stops at the
 * first unknown gate; kpc walks the names in byte order, so the unknown gate it names is the
 * first by name.
 */
export function applyGates(release: KubeProxyRelease, requested: Readonly<Record<string, boolean>>): AppliedGates {
  const known = gatesOf(release);
  const set = new Map<string, boolean>();
  const errors: GateProblem[] = [];
  const warnings: GateProblem[] = [];
  const names = Object.keys(requested).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const value = requested[name]!;
    const spec = known.get(name);
    if (!spec) return result(known, set, [{ gate: name, message: `unrecognized feature gate: ${name}` }], warnings);
    if (spec.locked && spec.default !== value) {
      errors.push({ gate: name, message: `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}` });
      continue;
    }
    if (name in SPECIAL) {
      set.set(name, value);
      for (const g of known.values()) if (g.stage === SPECIAL[name] && !(g.name in SPECIAL) && !set.has(g.name) && !(g.name in requested)) set.set(g.name, value);
      continue;
    }
    if (spec.stage === 'PREALPHA') {
      errors.push({ gate: name, message: `cannot set feature gate ${name} to ${value}, feature is PreAlpha at emulated version ${release}` });
      continue;
    }
    set.set(name, value);
    if (spec.stage === 'DEPRECATED' || spec.stage === 'GA') {
      warnings.push({ gate: name, message: `setting ${spec.stage === 'GA' ? 'GA' : 'deprecated'} feature gate ${name}=${value}: it will be removed in a future release` });
    }
  }
  if (errors.length === 0) errors.push(...dependencyErrors(known, set, requested));
  return result(known, set, errors, warnings);
}

function result(known: ReadonlyMap<string, GateSpec>, set: ReadonlyMap<string, boolean>, errors: GateProblem[], warnings: GateProblem[]): AppliedGates {
  return { enabled: (name) => set.get(name) ?? known.get(name)?.default ?? false, errors, warnings };
}

/** A gate that is on while one it depends on is off (component-base v0.35+; none before). */
function dependencyErrors(known: ReadonlyMap<string, GateSpec>, set: ReadonlyMap<string, boolean>, requested: Readonly<Record<string, boolean>>): GateProblem[] {
  const on = (name: string) => set.get(name) ?? known.get(name)?.default ?? false;
  const out: GateProblem[] = [];
  for (const g of known.values()) {
    if (g.dependsOn.length === 0 || !on(g.name)) continue;
    const off = g.dependsOn.filter((d) => !on(d));
    if (off.length === 0) continue;
    // The gate the user set that caused it: a disabled dependency, the dependent gate, else any.
    const cause = off.find((d) => d in requested) ?? (g.name in requested ? g.name : Object.keys(requested)[0]!);
    out.push({ gate: cause, message: `${g.name} is enabled, but depends on features that are disabled: [${off.join(' ')}]` });
  }
  return out;
}

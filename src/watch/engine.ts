/**
 * kpc watch's engine: the objects of one cluster held in memory, and for each change (one
 * watch event, or the objects of changed files) the delta that takes the node from the
 * previous step's full output to the new one — byte for byte what
 * `kpc compile --previous <previous full output> -f <objects now>` prints with the same flags.
 *
 * A change is validated whole before anything is kept: the object was decoded and validated
 * by the reader (parser/watch-events.ts); here it is checked against the other objects (an
 * allocated cluster IP or node port, as compile checks a file's objects), the IR is rebuilt,
 * and the delta computed. Any problem rejects the change: the state stays as it was and
 * nothing is printed for it.
 *
 * No history is kept: the objects now, and the previous step's full output (the state every
 * next delta starts from). Memory is that of one compile, however many events go by.
 *
 * The generic path (every mode): the IR is rebuilt from all objects, and the delta computed by
 * the mode's own `--previous` code (modes/, readPrevious on the previous output text).
 */

import { inputErrors, usageError } from '../errors.js';
import { locateError, type Diagnostic } from '../diagnostics.js';
import type { ProxyIR } from '../ir/model.js';
import type { DeltaOptions, Emitted, ModeBackend } from '../modes/index.js';
import { checkAcrossObjects } from '../parser/k8s/cross-object.js';
import type { LoadedObject } from '../parser/load.js';
import type { KubeObject } from '../parser/k8s/types.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'OBJECT';

export interface Change {
  /** OBJECT: a bare object (add or replace). */
  type: ChangeType;
  object: LoadedObject;
}

export interface WatchEngineOptions {
  backend: ModeBackend;
  standalone: boolean;
  /** compile --previous's other delta options (--full, --ipvs-removed-real-servers). */
  full: boolean;
  removedRealServers?: 'quiesce' | 'delete';
  /** --allow-empty: a change that removes every Service is meant. */
  allowEmpty: boolean;
  /** The IR of the objects (compile's own build: partition, settings, buildIR); may throw a KpcError. */
  build(objects: readonly LoadedObject[]): ProxyIR;
}

export type StepResult =
  | { changed: false; warnings: string[]; diagnostics: Diagnostic[] }
  | { changed: true; text: string; warnings: string[]; diagnostics: Diagnostic[] };

/** `Service/ns/name`, `Node//name`: one object of the cluster. */
export function objectKey(o: KubeObject): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** An output as the text kpc compile prints to stdout (a bundle: its inline script). */
export function outputText(emitted: Emitted): string {
  const out = emitted.output;
  if (out.form === 'bundle') return out.inline();
  let text = '';
  for (const chunk of out.chunks()) text += chunk;
  return text;
}

const encoder = new TextEncoder();

export class WatchEngine {
  private objects = new Map<string, LoadedObject>();
  /** The full output of the current objects: where the next delta starts. */
  private current = '';

  constructor(private readonly options: WatchEngineOptions) {}

  /** The number of objects held. */
  get size(): number {
    return this.objects.size;
  }

  /** Whether an object of this kind, namespace and name is held. */
  has(o: KubeObject): boolean {
    return this.objects.has(objectKey(o));
  }

  /** The objects held, in the order they came. */
  objectsHeld(): LoadedObject[] {
    return [...this.objects.values()];
  }

  /** The full output the node has after the last step (kpc compile of the objects held). */
  get fullOutput(): string {
    return this.current;
  }

  /**
   * The first step: the full output of the initial objects, or, with `previous` (compile
   * --previous's reading of the node's state), the delta from it.
   */
  start(initial: readonly LoadedObject[], previous?: { path: string; readStdin: (maxBytes: number) => Uint8Array }): { text: string; warnings: string[] } {
    for (const o of initial) this.objects.set(objectKey(o.object), o);
    const ir = this.options.build([...this.objects.values()]);
    const full = this.options.backend.emit(ir, { standalone: this.options.standalone });
    let text: string;
    let warnings = full.warnings;
    if (previous) {
      const state = this.options.backend.readPrevious(previous.path, '--previous', ir, previous.readStdin);
      this.refuseEmptying(ir, state.serviceEntries, `--previous ${previous.path}`);
      const delta = state.delta(this.deltaOptions());
      text = outputText(delta);
      warnings = delta.warnings;
    } else {
      text = outputText(full);
    }
    this.current = previous ? outputText(full) : text;
    return { text, warnings };
  }

  /**
   * One step: the changes applied together. Throws a KpcError (the change rejected, nothing
   * kept) when they fail validation against the other objects, the build, or the empty rule.
   */
  apply(changes: readonly Change[]): StepResult {
    const next = new Map(this.objects);
    const touched: LoadedObject[] = [];
    let differs = false;
    for (const { type, object } of changes) {
      const key = objectKey(object.object);
      const had = next.get(key);
      if (type === 'DELETED') {
        if (had) {
          next.delete(key);
          differs = true;
        }
        continue;
      }
      if (!had || JSON.stringify(had.object) !== JSON.stringify(object.object)) differs = true;
      next.set(key, object);
      touched.push(object);
    }
    if (!differs) return { changed: false, warnings: [], diagnostics: [] };
    const diagnostics = this.checkTouched(next, touched);
    const ir = this.options.build([...next.values()]);
    const previous = this.options.backend.readPrevious('-', '--previous', ir, () => encoder.encode(this.current));
    this.refuseEmptying(ir, previous.serviceEntries, 'the state before it');
    const full = outputText(this.options.backend.emit(ir, { standalone: this.options.standalone }));
    if (full === this.current) {
      this.objects = next;
      return { changed: false, warnings: [], diagnostics };
    }
    const delta = previous.delta(this.deltaOptions());
    const text = outputText(delta);
    this.objects = next;
    this.current = full;
    return { changed: true, text, warnings: delta.warnings, diagnostics };
  }

  private deltaOptions(): DeltaOptions {
    const o = this.options;
    return { standalone: o.standalone, full: o.full, ...(o.removedRealServers ? { removedRealServers: o.removedRealServers } : {}) };
  }

  /**
   * The changed objects checked against the others, as compile checks a file's objects
   * (cross-object.ts): they come last, so a conflict is theirs. Errors reject the change;
   * warnings are returned.
   */
  private checkTouched(next: ReadonlyMap<string, LoadedObject>, touched: readonly LoadedObject[]): Diagnostic[] {
    if (touched.length === 0) return [];
    const keys = new Set(touched.map((o) => objectKey(o.object)));
    const list: LoadedObject[] = [];
    for (const [key, o] of next) if (!keys.has(key)) list.push(o);
    const first = list.length;
    list.push(...touched);
    const errors: Diagnostic[] = [];
    const warnings: Diagnostic[] = [];
    for (const { index, error } of checkAcrossObjects(list)) {
      if (index < first) continue;
      const d = locateError(list[index]!.origin, error);
      (error.severity === 'error' ? errors : warnings).push(d);
    }
    if (errors.length > 0) throw inputErrors(errors, warnings);
    return warnings;
  }

  /** compile's refusal of a delta that removes every Service (--allow-empty says it is meant). */
  private refuseEmptying(ir: ProxyIR, previousServices: number, what: string): void {
    if (this.options.allowEmpty || ir.servicePorts.length > 0 || previousServices === 0) return;
    throw usageError(
      `refusing a delta that removes every Service from ${what} (it holds ${previousServices} Service entries): the objects have no ${ir.family} Service ports. ` +
        'Pass --allow-empty if removing them all is meant',
    );
  }
}

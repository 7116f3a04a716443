/**
 * kpc watch's engine: the objects of one cluster held in memory, and for each change (one
 * watch event, or the objects of changed files) the delta that takes the node from the
 * previous step's full output to the new one — byte for byte what
 * `kpc compile --previous <previous full output> -f <objects now>` prints with the same flags.
 *
 * A change is validated whole before anything is kept: the object was decoded and validated
 * by the reader (parser/watch-events.ts); here it is checked against the other objects it can
 * conflict with (cross-object.ts: an allocated cluster IP or node port, a slice's Service), as
 * compile checks a file's objects, then the delta is computed. Any problem rejects the change:
 * the objects are put back as they were and nothing is printed for it.
 *
 * No history is kept: the objects now and what the next delta starts from. Memory is that of
 * one compile, however many events go by.
 *
 * Two paths:
 *   - generic (every mode): the IR rebuilt from all objects, the delta computed by the mode's
 *     own `--previous` code (modes/, readPrevious of the previous step's full output text);
 *   - the fast path of each mode (watch/iptables.ts, watch/nftables.ts, watch/ipvs.ts): a
 *     Service, EndpointSlice or (mirrored) legacy Endpoints change rebuilds only the touched
 *     Services' service ports and their rules. Anything else there (a Node, Pods, a
 *     ServiceCIDR) rebuilds the IR and compares whole states. --full takes the generic path.
 */

import { inputErrors, usageError } from '../errors.js';
import { locateError, type Diagnostic } from '../diagnostics.js';
import { canonicalIP } from '../net/ip.js';
import type { ProxyIR, ServicePort } from '../ir/model.js';
import type { DeltaOptions, Emitted, ModeBackend } from '../modes/index.js';
import { checkAcrossObjects } from '../parser/k8s/cross-object.js';
import type { LoadedObject } from '../parser/load.js';
import type { EndpointSlice, Endpoints, KubeObject, Node, Service } from '../parser/k8s/types.js';
import { IptablesWatch } from './iptables.js';
import { IpvsWatch } from './ipvs.js';
import { NftablesWatch } from './nftables.js';
import type { FastPath } from './fast.js';
import { append } from '../arrays.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'OBJECT';

export interface Change {
  /** OBJECT: a bare object (add or replace). */
  type: ChangeType;
  object: LoadedObject;
}

/** What the CLI's build gives: the IR, and how it makes one Service's service ports (the same build, for given objects). */
export interface Built {
  ir: ProxyIR;
  /**
   * buildIR's service ports for these Services, their slices and their legacy Endpoints
   * (mirrored as the build mirrors them), with the settings of this build.
   */
  portsOf(services: readonly Service[], slices: readonly EndpointSlice[], endpoints: readonly Endpoints[]): ServicePort[];
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
  build(objects: readonly LoadedObject[]): Built;
  /**
   * Whether a Service or EndpointSlice change may be compiled alone (iptables mode): false when
   * slices come from elsewhere too (--endpoints-from pods).
   */
  incremental: boolean;
  /**
   * What the build takes from the Nodes, as a comparable text (may throw: then the build
   * decides). A Node change that leaves it the same leaves the IR the same.
   */
  nodeDependence?(nodes: readonly Node[]): string;
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

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The kinds whose changes the fast path builds alone (the touched Services' ports). */
const ALONE = new Set(['Service', 'EndpointSlice', 'Endpoints']);
const encoder = new TextEncoder();

/** The Service (`ns/name`) a slice belongs to, if it names one. */
function sliceService(o: KubeObject): string | undefined {
  if (o.kind !== 'EndpointSlice') return undefined;
  const name = o.metadata.labels[SERVICE_NAME_LABEL];
  return name ? `${o.metadata.namespace}/${name}` : undefined;
}

/** The cluster IPs and node ports a Service may hold (more than it does: the check decides). */
function allocations(svc: Service): { ips: string[]; ports: number[] } {
  const ips = [...svc.spec.clusterIPs, svc.spec.clusterIP].map((ip) => canonicalIP(ip)).filter((ip): ip is string => ip !== undefined);
  const ports = svc.spec.ports.map((p) => p.nodePort).filter((p) => p !== 0);
  if (svc.spec.healthCheckNodePort) ports.push(svc.spec.healthCheckNodePort);
  return { ips, ports };
}

function addTo<K>(index: Map<K, Set<string>>, key: K, value: string): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(value);
}

function removeFrom<K>(index: Map<K, Set<string>>, key: K, value: string): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) index.delete(key);
}

/** Whether two texts are the same; false when either cannot be made. */
function sameText(a: () => string, b: () => string): boolean {
  try {
    return a() === b();
  } catch {
    return false;
  }
}

/** The place of an object held (never asked for: see ObjectStore.put). */
const unplaced = (): { line: number; column: number } => ({ line: 1, column: 1 });

/** The objects, with the indexes a change needs: slices by Service, Services by allocation, counts by kind. */
class ObjectStore {
  readonly objects = new Map<string, LoadedObject>();
  readonly slicesOf = new Map<string, Set<string>>();
  readonly byIP = new Map<string, Set<string>>();
  readonly byNodePort = new Map<number, Set<string>>();
  readonly kinds = new Map<string, number>();
  /** The Nodes' keys. */
  readonly nodes = new Set<string>();

  /**
   * Set (or, with undefined, remove) an object; returns what was there. An object is kept
   * without its origin's locator (which holds the text it was read from: a whole -f file):
   * only the objects of a change are ever placed in a message, with their own fresh origin.
   */
  put(key: string, value: LoadedObject | undefined): LoadedObject | undefined {
    const had = this.objects.get(key);
    if (had) this.unindex(key, had.object);
    if (value) {
      if (value.origin.locate !== unplaced) value = { object: value.object, origin: { file: value.origin.file, locate: unplaced } };
      this.objects.set(key, value);
      this.index(key, value.object);
    } else this.objects.delete(key);
    return had;
  }

  private index(key: string, o: KubeObject): void {
    this.kinds.set(o.kind, (this.kinds.get(o.kind) ?? 0) + 1);
    if (o.kind === 'Node') this.nodes.add(key);
    const service = sliceService(o);
    if (service) addTo(this.slicesOf, service, key);
    if (o.kind === 'Service') {
      const { ips, ports } = allocations(o);
      for (const ip of ips) addTo(this.byIP, ip, key);
      for (const p of ports) addTo(this.byNodePort, p, key);
    }
  }

  private unindex(key: string, o: KubeObject): void {
    this.kinds.set(o.kind, (this.kinds.get(o.kind) ?? 1) - 1);
    if (o.kind === 'Node') this.nodes.delete(key);
    const service = sliceService(o);
    if (service) removeFrom(this.slicesOf, service, key);
    if (o.kind === 'Service') {
      const { ips, ports } = allocations(o);
      for (const ip of ips) removeFrom(this.byIP, ip, key);
      for (const p of ports) removeFrom(this.byNodePort, p, key);
    }
  }

  count(kind: string): number {
    return this.kinds.get(kind) ?? 0;
  }

  nodeList(): Node[] {
    const out: Node[] = [];
    for (const key of this.nodes) {
      const o = this.objects.get(key)!.object;
      if (o.kind === 'Node') out.push(o);
    }
    return out;
  }
}

export class WatchEngine {
  private readonly store = new ObjectStore();
  /** Generic path: the full output of the current objects, where the next delta starts. */
  private current = '';
  /** The mode's fast path: its state, no text. */
  private fast: FastPath | undefined;
  /** The last full build (its settings make one Service's ports on the fast path). */
  private built: Built | undefined;

  /** How the steps kept were computed (told at the end, and checked by the tests); unchanged: a Node change the IR does not depend on. */
  readonly steps = { incremental: 0, rebuilt: 0, unchanged: 0 };

  constructor(private readonly options: WatchEngineOptions) {}

  /** The number of objects held. */
  get size(): number {
    return this.store.objects.size;
  }

  /** Whether an object of this kind, namespace and name is held. */
  has(o: KubeObject): boolean {
    return this.store.objects.has(objectKey(o));
  }

  /** The objects held, in the order they came. */
  objectsHeld(): LoadedObject[] {
    return [...this.store.objects.values()];
  }

  /** Which path the steps take (for messages and tests). */
  get path(): 'generic' | 'incremental' {
    return this.fast ? 'incremental' : 'generic';
  }

  /**
   * The first step: the full output of the initial objects, or, with `previous` (compile
   * --previous's reading of the node's state), the delta from it.
   */
  start(initial: readonly LoadedObject[], previous?: { path: string; readStdin: (maxBytes: number) => Uint8Array }): { text: string; warnings: string[] } {
    for (const o of initial) this.store.put(objectKey(o.object), o);
    const built = this.options.build(this.objectsHeld());
    this.built = built;
    const ir = built.ir;
    const o = this.options;
    const useFast = !o.full && o.incremental;
    let full: Emitted | undefined;
    let fullText: string;
    let warnings: string[] = [];
    if (useFast) {
      const mode = o.backend.mode;
      this.fast = mode === 'iptables' ? new IptablesWatch(ir, o.standalone) : mode === 'nftables' ? new NftablesWatch(ir, o.standalone) : new IpvsWatch(ir, this.deltaOptions());
      warnings = this.fast.initialWarnings?.() ?? [];
      fullText = this.fast.takeInitialText();
    } else {
      full = o.backend.emit(ir, { standalone: o.standalone });
      fullText = outputText(full);
      warnings = full.warnings;
      this.current = fullText;
    }
    if (!previous) return { text: fullText, warnings };
    const state = o.backend.readPrevious(previous.path, '--previous', ir, previous.readStdin);
    this.refuseEmptying(ir.servicePorts.length, ir.family, state.serviceEntries, `--previous ${previous.path}`);
    const delta = state.delta(this.deltaOptions());
    return { text: outputText(delta), warnings: delta.warnings };
  }

  /**
   * One step: the changes applied together. Throws a KpcError (the change rejected, the
   * objects as they were) when they fail validation against the other objects, the build, or
   * the empty rule.
   */
  apply(changes: readonly Change[]): StepResult {
    // Only Nodes change (and no Pods are held, whose slices would depend on them): what the
    // build takes from the Nodes, before.
    const dependence = this.options.nodeDependence;
    const nodesBefore = dependence && this.store.count('Pod') === 0 && changes.every((c) => c.object.object.kind === 'Node') ? this.store.nodeList() : undefined;
    const undo: Array<[string, LoadedObject | undefined]> = [];
    const touched: LoadedObject[] = [];
    const services = new Set<string>();
    let differs = false;
    for (const { type, object } of changes) {
      const key = objectKey(object.object);
      const had = this.store.objects.get(key);
      if (type === 'DELETED' ? !had : had && JSON.stringify(had.object) === JSON.stringify(object.object)) continue;
      differs = true;
      undo.push([key, this.store.put(key, type === 'DELETED' ? undefined : object)]);
      if (type !== 'DELETED') touched.push(object);
      for (const o of [had?.object, object.object]) {
        if (!o) continue;
        // Legacy Endpoints are their Service's (the mirroring controller's rule: same namespace and name).
        if (o.kind === 'Service' || o.kind === 'Endpoints') services.add(`${o.metadata.namespace}/${o.metadata.name}`);
        const s = sliceService(o);
        if (s) services.add(s);
      }
    }
    if (!differs) return { changed: false, warnings: [], diagnostics: [] };
    try {
      const diagnostics = this.checkTouched(touched);
      if (nodesBefore && sameText(() => dependence!(nodesBefore), () => dependence!(this.store.nodeList()))) {
        // The same IR: compile --previous would print nothing (a heartbeat, another node's change).
        this.steps.unchanged++;
        return { changed: false, warnings: [], diagnostics };
      }
      const step = this.fast ? this.fastStep(changes, [...services]) : this.genericStep();
      if (step === undefined) return { changed: false, warnings: [], diagnostics };
      return { changed: true, text: step.text, warnings: step.warnings, diagnostics };
    } catch (e) {
      for (const [key, value] of undo.reverse()) this.store.put(key, value);
      throw e;
    }
  }

  private genericStep(): { text: string; warnings: string[] } | undefined {
    const built = this.options.build(this.objectsHeld());
    const ir = built.ir;
    const previous = this.options.backend.readPrevious('-', '--previous', ir, () => encoder.encode(this.current));
    this.refuseEmptying(ir.servicePorts.length, ir.family, previous.serviceEntries, 'the state before it');
    const full = outputText(this.options.backend.emit(ir, { standalone: this.options.standalone }));
    this.built = built;
    this.steps.rebuilt++;
    if (full === this.current) return undefined;
    const delta = previous.delta(this.deltaOptions());
    this.current = full;
    return { text: outputText(delta), warnings: delta.warnings };
  }

  private fastStep(changes: readonly Change[], services: string[]): { text: string; warnings: string[] } | undefined {
    const fast = this.fast!;
    const s = this.store;
    // Slices derived from Pods depend on the Pods and Nodes: only a rebuild derives them.
    const alone = changes.every((c) => ALONE.has(c.object.object.kind)) && s.count('Pod') === 0;
    let step = undefined;
    let family = this.built!.ir.family;
    if (alone) {
      const { svcs, slices, endpoints } = this.sourcesOf(services);
      step = fast.change(services, this.built!.portsOf(svcs, slices, endpoints));
    }
    let built: Built | undefined;
    if (step === undefined) {
      built = this.options.build(this.objectsHeld());
      family = built.ir.family;
      step = fast.rebuild(built.ir);
    }
    if (step.ports === 0) this.refuseEmptying(step.ports, family, step.before(), 'the state before it');
    step.commit();
    if (built) this.built = built;
    this.steps[built ? 'rebuilt' : 'incremental']++;
    return step.text === '' ? undefined : { text: step.text, warnings: step.warnings ?? [] };
  }

  /** What the Services' ports are built from: the Services, their slices and their legacy Endpoints. */
  private sourcesOf(services: readonly string[]): { svcs: Service[]; slices: EndpointSlice[]; endpoints: Endpoints[] } {
    const s = this.store;
    const svcs: Service[] = [];
    const slices: EndpointSlice[] = [];
    const endpoints: Endpoints[] = [];
    for (const name of services) {
      const svc = s.objects.get(`Service/${name}`)?.object;
      if (svc?.kind === 'Service') svcs.push(svc);
      for (const key of s.slicesOf.get(name) ?? []) {
        const slice = s.objects.get(key)!.object;
        if (slice.kind === 'EndpointSlice') slices.push(slice);
      }
      const ep = s.objects.get(`Endpoints/${name}`)?.object;
      if (ep?.kind === 'Endpoints') endpoints.push(ep);
    }
    return { svcs, slices, endpoints };
  }

  /**
   * Runs the fast path's work a few times on Services that do not change (nothing is kept or
   * printed), so the first real events do not pay for compiling that code.
   */
  warmUp(rounds = 12): void {
    if (!this.fast || !this.built) return;
    const ports = this.fast.servicePorts;
    for (let k = 0; k < rounds && ports.length > 0; k++) {
      const sp = ports[Math.floor(((k + 0.5) * ports.length) / rounds)]!;
      const name = `${sp.namespace}/${sp.name}`;
      const { svcs, slices, endpoints } = this.sourcesOf([name]);
      if (svcs.length === 0) continue;
      this.checkTouched([this.store.objects.get(`Service/${name}`)!]);
      this.fast.change([name], this.built.portsOf(svcs, slices, endpoints));
    }
  }

  private deltaOptions(): DeltaOptions {
    const o = this.options;
    return { standalone: o.standalone, full: o.full, ...(o.removedRealServers ? { removedRealServers: o.removedRealServers } : {}) };
  }

  /**
   * The changed objects checked against the others they can conflict with, as compile checks a
   * file's objects (cross-object.ts): the Services holding one of their cluster IPs or node
   * ports, and a slice's Service; the changed objects last, so a conflict is theirs. Errors
   * reject the change; warnings are returned.
   */
  private checkTouched(touched: readonly LoadedObject[]): Diagnostic[] {
    if (touched.length === 0) return [];
    const s = this.store;
    const mine = new Set(touched.map((o) => objectKey(o.object)));
    const others = new Set<string>();
    for (const { object: o } of touched) {
      if (o.kind === 'Service') {
        const { ips, ports } = allocations(o);
        for (const ip of ips) for (const k of s.byIP.get(ip) ?? []) others.add(k);
        for (const p of ports) for (const k of s.byNodePort.get(p) ?? []) others.add(k);
      }
      const svc = sliceService(o);
      if (svc) others.add(`Service/${svc}`);
    }
    const list: LoadedObject[] = [];
    for (const k of others) {
      const o = s.objects.get(k);
      if (o && !mine.has(k)) list.push(o);
    }
    const first = list.length;
    append(list, touched);
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
  private refuseEmptying(servicePorts: number, family: string, previousServices: number, what: string): void {
    if (this.options.allowEmpty || servicePorts > 0 || previousServices === 0) return;
    throw usageError(
      `refusing a delta that removes every Service from ${what} (it holds ${previousServices} Service entries): the objects have no ${family} Service ports. ` +
        'Pass --allow-empty if removing them all is meant',
    );
  }
}

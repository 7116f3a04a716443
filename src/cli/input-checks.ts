/**
 * Mistakes that must not turn into output: no objects at all, and the warnings an operator
 * needs when the input cannot mean what they think (a node that is not there, Services without
 * any endpoints, no local-traffic detector). Each message says what was read and what to do.
 */

import { subfoldersWithManifests } from '../parser/input-files.js';
import type { ReadSummary } from '../parser/load.js';
import type { EndpointSlice, Endpoints, Node, Service } from '../parser/k8s/types.js';
import type { ProxyIR } from '../ir/model.js';
import type { ProxySettings } from '../ir/context.js';
import type { DeriveResult } from '../controllers/endpointslice/index.js';
import { usageError } from '../errors.js';

const KINDS = 'a Service, EndpointSlice, Endpoints, Node or Pod';
export const CLUSTER_QUERY = 'kubectl get svc,endpointslices,nodes -A -o yaml';

/**
 * The error when the input gave no object kpc compiles (kubectl: "no objects passed"): never
 * an empty ruleset, which loaded with iptables-restore would flush a node's Services.
 */
export function noObjectsMessage(read: ReadSummary, paths: readonly string[]): string {
  const where = paths.map((p) => (p === '-' ? 'standard input' : p)).join(', ');
  let what: string;
  if (read.files === 0) what = `${where}: no manifest files (*.yaml, *.yml, *.json)`;
  else if (read.documents === 0) what = `${read.files} file(s) read from ${where}, and not one object in them (empty files or empty lists)`;
  else {
    const kinds = [...read.skipped].map(([kind, n]) => `${n} ${kind}`).join(', ');
    what = `${read.documents} object(s) read from ${where}, none of them ${KINDS} (${kinds}); for a cluster: ${CLUSTER_QUERY}`;
  }
  const sub = subfoldersWithManifests(read.paths);
  const hint = sub.length > 0 ? `; manifests sit in subfolders (${sub.join(', ')}${read.paths.subfolders.length > sub.length ? ', ...' : ''}): add -R to read them` : '';
  return `no objects passed: ${what}${hint} (--allow-empty compiles an empty input: kube-proxy's fixed rules only)`;
}

/** Warnings about the input as a whole (printed `warning: ...`). */
export function inputWarnings(input: { services: readonly Service[]; slices: readonly EndpointSlice[]; legacy: readonly Endpoints[]; nodes: readonly Node[] }, settings: ProxySettings, nodeNamedBy: string | undefined): string[] {
  const out: string[] = [];
  if (input.services.length > 0 && input.slices.length === 0 && input.legacy.length === 0) {
    out.push(
      `the input has ${input.services.length} Service(s) and not one EndpointSlice or Endpoints: every Service is compiled without endpoints ` +
        `(its traffic is rejected); include them, e.g. ${CLUSTER_QUERY}`,
    );
  }
  if (nodeNamedBy !== undefined && input.nodes.length > 0 && !input.nodes.some((n) => n.metadata.name === settings.nodeName)) {
    const names = input.nodes.map((n) => n.metadata.name);
    out.push(
      `${nodeNamedBy} names node "${settings.nodeName}", which is not among the input's Nodes (${names.slice(0, 5).join(', ')}${names.length > 5 ? `, ... ${names.length} in all` : ''}): ` +
        'no endpoint counts as local, and the node\'s addresses, pod CIDR and zone are unknown',
    );
  }
  return out;
}

/** The note explain prints too: without a local-traffic detector kube-proxy cannot tell pod traffic apart. */
export function detectorNote(ir: ProxyIR, settings: ProxySettings): string | undefined {
  if (ir.knobs.localDetector) return undefined;
  const family = ir.family;
  const why =
    settings.detectLocalMode === 'ClusterCIDR' ? `--detect-local-mode ClusterCIDR and no ${family} --cluster-cidr (or clusterCIDR in --config)`
    : settings.detectLocalMode === 'NodeCIDR' ? `--detect-local-mode NodeCIDR and no ${family} podCIDR on Node "${settings.nodeName}"`
    : `--detect-local-mode ${settings.detectLocalMode} without its interface`;
  return `no local-traffic detector (${why}): kube-proxy cannot tell pod traffic from other traffic and writes none of the rules that need to (masquerading off-cluster traffic to cluster IPs, letting pods reach Local external IPs directly)`;
}

/**
 * A delta from a state with Services to an input without any would remove every Service from
 * the node: what an empty or mistaken input (a wrong -f, the wrong family) looks like. Refused
 * unless --allow-empty says it is meant.
 */
export function refuseEmptyingDelta(ir: ProxyIR, previousEntries: number | (() => number), previous: string, allowEmpty: boolean | undefined): void {
  if (allowEmpty || ir.servicePorts.length > 0) return;
  // Counted only here: a mode may have to read its whole previous state to count them.
  const previousServices = typeof previousEntries === 'number' ? previousEntries : previousEntries();
  if (previousServices === 0) return;
  throw usageError(
    `refusing a delta that removes every Service from --previous ${previous} (it holds ${previousServices} Service entries): the input has no ${ir.family} Service ports. ` +
      'Check -f and --ip-family; pass --allow-empty if removing them all is meant',
  );
}

/** `a/b, c/d, e/f and 9 more`: a list that stays one line. */
function someOf(items: readonly string[], shown = 5): string {
  if (items.length <= shown) return items.join(', ');
  return `${items.slice(0, shown).join(', ')} and ${items.length - shown} more`;
}

/** `derived 3 EndpointSlices from Pods for shop/web, shop/db` (nothing when none were derived). */
export function derivationNotes(d: DeriveResult): string[] {
  if (d.services.length === 0) return [];
  const n = d.derived.length;
  const names = d.services.map((s) => `${s.namespace}/${s.name}`);
  const out = [`derived ${n} EndpointSlice${n === 1 ? '' : 's'} from Pods for ${d.services.length > 5 ? `${d.services.length} Services: ` : ''}${someOf(names)}`];
  // What the topology cache decided for topology-mode Services, in the controller's event words.
  const reasons = new Map<string, string[]>();
  for (const s of d.services) {
    for (const t of s.topology) {
      if (t.hints) continue;
      const who = `${s.namespace}/${s.name} (${t.addressType})`;
      reasons.set(t.why, [...(reasons.get(t.why) ?? []), who]);
    }
  }
  for (const [why, who] of reasons) out.push(`topology-aware hints not given (the controller's event: "${why}") for ${someOf(who)}`);
  return out;
}

/** Pods the controller leaves out because their Node is not in the input. */
export function derivationWarnings(d: DeriveResult): string[] {
  const missing: string[] = [];
  const nodes = new Set<string>();
  for (const s of d.services) {
    for (const m of s.podsWithoutNode) {
      missing.push(`${s.namespace}/${m.pod}`);
      nodes.add(m.nodeName === '' ? '(none)' : m.nodeName);
    }
  }
  if (missing.length === 0) return [];
  const pods = [...new Set(missing)];
  return [
    `${pods.length} Pod(s) run on Nodes that are not in the input (${someOf([...nodes].sort())}): the EndpointSlice controller leaves such Pods out of the slices it derives ` +
      `(${someOf(pods)}); include the Nodes, e.g. kubectl get svc,pods,nodes -A -o yaml`,
  ];
}

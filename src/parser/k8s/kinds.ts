/**
 * Which apiVersion/kind pairs kpc decodes, and what it says about everything else. Like
 * `kubectl get all -A -o yaml` output, an input may hold any kind: those are skipped with a
 * note, while a kind kpc reads in a version the API no longer serves is an error.
 */

import { goQuote } from './go-format.js';

export type KindName = 'Service' | 'EndpointSlice' | 'Endpoints' | 'Node' | 'Pod' | 'ServiceCIDR';

export const SERVED: Readonly<Record<KindName, string>> = {
  Service: 'v1',
  EndpointSlice: 'discovery.k8s.io/v1',
  Endpoints: 'v1',
  Node: 'v1',
  Pod: 'v1',
  ServiceCIDR: 'networking.k8s.io/v1',
};

/** Versions that once served a kind kpc reads, and what happened to them. */
const REMOVED: Readonly<Record<string, string>> = {
  'EndpointSlice discovery.k8s.io/v1beta1': 'discovery.k8s.io/v1beta1 EndpointSlice is no longer served since v1.25; use discovery.k8s.io/v1',
  'EndpointSlice discovery.k8s.io/v1alpha1': 'discovery.k8s.io/v1alpha1 EndpointSlice is no longer served since v1.21; use discovery.k8s.io/v1',
};

export function isKindName(kind: string): kind is KindName {
  return Object.hasOwn(SERVED, kind);
}

/** The detail for a kind kpc reads in a version it does not: kubectl's "no matches for kind" text. */
export function unservedVersionDetail(kind: KindName, apiVersion: string): string {
  const base = `no matches for kind ${goQuote(kind)} in version ${goQuote(apiVersion)}`;
  const removed = REMOVED[`${kind} ${apiVersion}`];
  return removed === undefined ? `${base}; kpc reads ${SERVED[kind]} ${kind}` : `${base}; ${removed}`;
}

/** Text that is safe on a terminal: names of skipped objects have not been validated. */
function safe(text: string): string {
  return /^[A-Za-z0-9._:/-]*$/.test(text) ? text : goQuote(text);
}

/** `skipping apps/v1 Deployment default/web: kpc reads Service, EndpointSlice, Endpoints, Node, Pod and ServiceCIDR`. */
export function skipNote(apiVersion: string, kind: string, namespace: string, name: string): string {
  const who = name === '' ? '' : ` ${namespace === '' ? safe(name) : `${safe(namespace)}/${safe(name)}`}`;
  const why =
    kind === 'KubeProxyConfiguration'
      ? 'a kube-proxy configuration is read with --config, not with -f'
      : 'kpc reads Service, EndpointSlice, Endpoints, Node, Pod and ServiceCIDR';
  return `skipping ${safe(apiVersion)} ${safe(kind)}${who}: ${why}`;
}

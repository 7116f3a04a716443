/**
 * A derived slice as the API would return it (`kubectl get endpointslice -o yaml|json`): the
 * discovery.k8s.io/v1 wire form with Go's omitempty (no empty hints, no unset fields), keys in
 * kubectl's order (sorted). The generated name stands in for the API server's random one.
 */

import type { DerivedEndpointSlice } from './model.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]!);
    return out;
  }
  return v;
}

export function toManifest(s: DerivedEndpointSlice): Json {
  const metadata: { [k: string]: Json } = {
    name: s.metadata.name,
    generateName: s.metadata.generateName,
    namespace: s.metadata.namespace,
    labels: { ...s.metadata.labels },
    ownerReferences: s.metadata.ownerReferences.map((o) => ({ ...o })),
  };
  if (Object.keys(s.metadata.annotations).length > 0) metadata.annotations = { ...s.metadata.annotations };
  const endpoints: Json[] = s.endpoints.map((e) => {
    const ep: { [k: string]: Json } = {
      addresses: [...e.addresses],
      conditions: { ...e.conditions },
      targetRef: { ...e.targetRef },
    };
    if (e.hostname !== undefined) ep.hostname = e.hostname;
    if (e.nodeName !== undefined) ep.nodeName = e.nodeName;
    if (e.zone !== undefined) ep.zone = e.zone;
    if (e.hints !== undefined) {
      const hints: { [k: string]: Json } = {};
      if (e.hints.forZones.length > 0) hints.forZones = e.hints.forZones.map((name) => ({ name }));
      if (e.hints.forNodes.length > 0) hints.forNodes = e.hints.forNodes.map((name) => ({ name }));
      ep.hints = hints;
    }
    return ep;
  });
  const ports: Json[] = s.ports.map((p) => ({ ...p }));
  return sortKeys({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata, addressType: s.addressType, endpoints, ports });
}

/** `kind: List`, as `kubectl get -o yaml|json` prints several objects. */
export function toList(slices: readonly DerivedEndpointSlice[]): Json {
  return { apiVersion: 'v1', items: slices.map(toManifest), kind: 'List', metadata: { resourceVersion: '' } };
}

/**
 * Writes test/watch/events.json: the recorded event stream the watch suite replays, in the
 * form `kubectl get TYPE -A --watch --output-watch-events -o json` prints, the Service,
 * EndpointSlice and Node streams in one (indented events; some compact, one a line, as kubectl prints them with -o json | jq -c).
 * The file is committed; this test says how it was made and that it is still that (rewrite it
 * with KPC_WRITE_EVENTS=1 npx vitest run test/watch/events-fixture.test.ts).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { join } from 'node:path';
import { endpointSlice, service } from '../e2e/manifests.js';

const http = { name: 'http', port: 80, protocol: 'TCP' as const, targetPort: 8080 };
const httpSlice = { name: 'http', port: 8080, protocol: 'TCP' as const };

function node(zone: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a', 'topology.kubernetes.io/zone': zone } },
    status: { addresses: [{ type: 'InternalIP', address: '192.168.50.10' }] },
  };
}

/** api's slice with zone hints: a1 for zone-a, b1 and b2 for zone-b. */
function apiSlice(): Record<string, unknown> {
  const s = endpointSlice({ service: 'api', ports: [httpSlice], endpoints: [{ pod: 'a1' }, { pod: 'b1' }, { pod: 'b2' }] });
  const zones = ['zone-a', 'zone-b', 'zone-b'];
  (s.endpoints as Record<string, unknown>[]).forEach((e, i) => {
    e.zone = zones[i];
    e.hints = { forZones: [{ name: zones[i] }] };
  });
  return s;
}

const web = service({ name: 'web', clusterIP: '10.96.0.10', ports: [http] });
const webNodePort = service({ name: 'web', type: 'NodePort', clusterIP: '10.96.0.10', ports: [{ ...http, nodePort: 30080 }] });
const api = service({ name: 'api', clusterIP: '10.96.0.11', ports: [http] });
(api.metadata as Record<string, unknown>).annotations = { 'service.kubernetes.io/topology-mode': 'Auto' };
const apiLB = service({ name: 'api', type: 'LoadBalancer', clusterIP: '10.96.0.11', ports: [{ ...http, nodePort: 30081 }], loadBalancerIPs: ['203.0.113.7'], externalTrafficPolicy: 'Local', healthCheckNodePort: 31000 });
(apiLB.metadata as Record<string, unknown>).annotations = { 'service.kubernetes.io/topology-mode': 'Auto' };
const db = service({ name: 'db', clusterIP: '10.96.0.12', ports: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }] });

const ev = (type: string, object: unknown) => ({ type, object });
const indented = (v: unknown) => JSON.stringify(v, null, 4) + '\n';
const compact = (v: unknown) => JSON.stringify(v) + '\n';

const parts: string[] = [
  /* 1 */ indented(ev('ADDED', node('zone-a'))),
  /* 2 */ indented(ev('ADDED', web)),
  /* 3 */ indented(ev('ADDED', endpointSlice({ service: 'web', ports: [httpSlice], endpoints: [{ pod: 'a1' }, { pod: 'a2' }] }))),
  /* 4 */ compact(ev('ADDED', api)),
  /* 5 */ compact(ev('ADDED', apiSlice())),
  // endpoint churn
  /* 6 */ compact(ev('MODIFIED', endpointSlice({ service: 'web', ports: [httpSlice], endpoints: [{ pod: 'a1' }, { pod: 'a2' }, { pod: 'b1' }] }))),
  /* 7 */ compact(ev('MODIFIED', endpointSlice({ service: 'web', ports: [httpSlice], endpoints: [{ pod: 'a1' }, { pod: 'a2', ready: false, serving: true, terminating: true }, { pod: 'b1' }] }))),
  /* 8 */ compact(ev('BOOKMARK', { kind: 'Service', apiVersion: 'v1', metadata: { resourceVersion: '4711' } })),
  // type changes
  /* 9 */ indented(ev('MODIFIED', webNodePort)),
  /* 10 */ compact(ev('MODIFIED', apiLB)),
  // bad events: malformed JSON (never closed), an object failing validation, an ERROR
  /* 11 */ '{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Service",\n',
  /* 12 */ compact(ev('ADDED', service({ name: 'clash', clusterIP: '10.96.0.10', ports: [http] }))),
  /* 13 */ compact(ev('MODIFIED', { ...db, spec: { ...(db.spec as object), ports: [{ name: 'pg', port: 70000, protocol: 'TCP', targetPort: 5432 }] } })),
  /* 14 */ compact(ev('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 4711 (4800)', reason: 'Expired', code: 410 })),
  // a Node label change (api's endpoints are hinted by zone)
  /* 15 */ indented(ev('MODIFIED', node('zone-b'))),
  // an object without the event wrapper (kubectl without --output-watch-events): add or replace
  /* 16 */ indented(db),
  // a change that changes no rule
  /* 17 */ compact(ev('MODIFIED', { ...db, metadata: { ...(db.metadata as object), labels: { team: 'data' } } })),
  // deletes
  /* 18 */ compact(ev('DELETED', endpointSlice({ service: 'web', ports: [httpSlice], endpoints: [] }))),
  /* 19 */ indented(ev('DELETED', webNodePort)),
  /* 20 */ compact(ev('DELETED', apiLB)),
  // the last Service: refused without --allow-empty
  /* 21 */ compact(ev('DELETED', db)),
  /* 22 */ compact(ev('ADDED', web)),
];

export const EVENTS_PATH = join(import.meta.dirname, 'events.json');

it('test/watch/events.json is the stream this file makes', () => {
  if (process.env.KPC_WRITE_EVENTS) writeFileSync(EVENTS_PATH, parts.join(''));
  expect(readFileSync(EVENTS_PATH, 'utf8')).toBe(parts.join(''));
});

// A Kubernetes API server that serves a fixed set of objects, as much of one as CoreDNS's
// kubernetes plugin (client-go informers) asks for: /version, discovery, and list + watch of
// Services, EndpointSlices, Namespaces and Pods. Watches stay open and send nothing (or, for
// a watch-list request, the objects and the end-of-initial-events bookmark).
//
// Usage: node apiserver.mjs OBJECTS.json PORT   (OBJECTS: {services, endpointslices, namespaces})
// Prints "listening" once it accepts connections.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, port] = process.argv.slice(2);
const objects = JSON.parse(readFileSync(file, 'utf8'));
const RV = '1';

const resources = {
  '/api/v1/services': { kind: 'ServiceList', apiVersion: 'v1', items: objects.services ?? [] },
  '/api/v1/namespaces': { kind: 'NamespaceList', apiVersion: 'v1', items: objects.namespaces ?? [] },
  '/api/v1/pods': { kind: 'PodList', apiVersion: 'v1', items: [] },
  '/apis/discovery.k8s.io/v1/endpointslices': { kind: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1', items: objects.endpointslices ?? [] },
};

const discovery = {
  '/version': { major: '1', minor: '34', gitVersion: 'v1.34.0', platform: 'linux/amd64' },
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] },
  '/apis': {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [{ name: 'discovery.k8s.io', versions: [{ groupVersion: 'discovery.k8s.io/v1', version: 'v1' }], preferredVersion: { groupVersion: 'discovery.k8s.io/v1', version: 'v1' } }],
  },
  '/apis/discovery.k8s.io/v1': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'discovery.k8s.io/v1',
    resources: [{ name: 'endpointslices', singularName: 'endpointslice', namespaced: true, kind: 'EndpointSlice', verbs: ['get', 'list', 'watch'] }],
  },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: ['services', 'namespaces', 'pods'].map((name) => ({ name, namespaced: name !== 'namespaces', kind: name[0].toUpperCase() + name.slice(1, -1), verbs: ['get', 'list', 'watch'] })),
  },
};

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const send = (code, body) => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (discovery[url.pathname]) return send(200, discovery[url.pathname]);
  const r = resources[url.pathname];
  if (!r) return send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  const watch = url.searchParams.get('watch');
  if (watch === 'true' || watch === '1') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    if (url.searchParams.get('sendInitialEvents') === 'true') {
      for (const item of r.items) res.write(JSON.stringify({ type: 'ADDED', object: { ...item, apiVersion: r.apiVersion, kind: r.kind.slice(0, -4) } }) + '\n');
      res.write(JSON.stringify({ type: 'BOOKMARK', object: { apiVersion: r.apiVersion, kind: r.kind.slice(0, -4), metadata: { resourceVersion: RV, annotations: { 'k8s.io/initial-events-end': 'true' } } } }) + '\n');
    }
    return; // held open until the client goes
  }
  return send(200, { kind: r.kind, apiVersion: r.apiVersion, metadata: { resourceVersion: RV }, items: r.items });
});
server.listen(Number(port), '127.0.0.1', () => console.log('listening'));

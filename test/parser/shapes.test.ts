/**
 * Every shape real clients print compiles to the same bytes as the `kind: List` YAML of the
 * same cluster: kubectl's JSON, compact one-line JSON (`jq -c`, the API's wire form), typed
 * lists as `kubectl get --raw` returns them (items without kind or apiVersion), pages of one
 * list, and streams of concatenated objects (`jq '.items[]'`), from files and from stdin.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../bench/gen.js';
import { runKpc } from '../helpers/run-kpc.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-shapes-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Obj = { kind: string; apiVersion: string; metadata: Record<string, unknown> } & Record<string, unknown>;
const objects = generateCluster({ services: 150, seed: 7 }) as Obj[];
const ARGS = ['compile', '--hostname-override', 'node-0', '--cluster-cidr', '10.244.0.0/16'];

const LIST_OF: Record<string, { list: string; apiVersion: string }> = {
  Service: { list: 'ServiceList', apiVersion: 'v1' },
  EndpointSlice: { list: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1' },
  Node: { list: 'NodeList', apiVersion: 'v1' },
};

/** What the API returns: a typed list whose items carry no kind or apiVersion. */
function typedList(kind: string, items: Obj[], cont?: string) {
  const { list, apiVersion } = LIST_OF[kind]!;
  return {
    kind: list,
    apiVersion,
    metadata: { resourceVersion: '12345', ...(cont ? { continue: cont } : {}) },
    items: items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
  };
}

function write(name: string, text: string): string {
  const p = join(tmp, name);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
  return p;
}

let reference = '';
beforeAll(async () => {
  const file = write('reference.yaml', stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const r = await runKpc([...ARGS, '-f', file]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('KUBE-SVC-');
  reference = r.stdout;
});

async function expectSame(args: string[], stdin?: string): Promise<void> {
  const r = await runKpc([...ARGS, ...args], stdin);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(reference);
}

const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
const list = { apiVersion: 'v1', kind: 'List', items: objects };

describe('input shapes compile to the bytes of the kind: List YAML', () => {
  it('kubectl get -o json (indented)', async () => {
    await expectSame(['-f', write('indented.json', JSON.stringify(list, null, 4))]);
  });

  it('compact one-line JSON (jq -c), from a file and from stdin', async () => {
    const text = JSON.stringify(list);
    expect(text.includes('\n')).toBe(false);
    await expectSame(['-f', write('compact.json', text)]);
    await expectSame(['-f', '-'], text);
  });

  it('typed lists (ServiceList, EndpointSliceList, NodeList) as separate files, indented and compact', async () => {
    for (const [style, indent] of [['indented', 2], ['compact', undefined]] as const) {
      const dir = join(tmp, `typed-${style}`);
      for (const kind of Object.keys(LIST_OF)) write(join(`typed-${style}`, `${kind}.json`), JSON.stringify(typedList(kind, byKind(kind)), null, indent));
      await expectSame(['-f', dir]);
    }
  });

  it('typed lists concatenated in one stream (kubectl get --raw of each, one after another)', async () => {
    const text = Object.keys(LIST_OF).map((k) => JSON.stringify(typedList(k, byKind(k)))).join('\n');
    await expectSame(['-f', write('typed-stream.json', text)]);
    await expectSame(['-f', '-'], text);
  });

  it('pages of one list (metadata.continue), as several files and concatenated', async () => {
    const services = byKind('Service');
    const half = Math.floor(services.length / 2);
    const pages = [typedList('Service', services.slice(0, half), 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ'), typedList('Service', services.slice(half))];
    const rest = ['EndpointSlice', 'Node'].map((k) => JSON.stringify(typedList(k, byKind(k)), null, 2));
    write('paged/services-1.json', JSON.stringify(pages[0], null, 2));
    write('paged/services-2.json', JSON.stringify(pages[1], null, 2));
    write('paged/rest.json', rest.join('\n'));
    await expectSame(['-f', join(tmp, 'paged')]);
    await expectSame(['-f', write('paged-concatenated.json', [...pages.map((p) => JSON.stringify(p)), ...rest].join(''))]);
  });

  it("a stream of objects (jq '.items[]'), indented and compact, from a file and from stdin", async () => {
    for (const indent of [2, undefined]) {
      const text = objects.map((o) => JSON.stringify(o, null, indent)).join('\n');
      await expectSame(['-f', write(`stream-${indent ?? 'c'}.json`, text)]);
      await expectSame(['-f', '-'], text);
    }
  });

  it('a typed list in YAML (the API response converted) reads the same', async () => {
    const text = Object.keys(LIST_OF).map((k) => stringify(typedList(k, byKind(k)))).join('---\n');
    await expectSame(['-f', write('typed.yaml', text)]);
  });
});

describe('JSON input: errors keep exact positions', () => {
  it('an error inside a compact one-line List is at line 1, column N', async () => {
    const bad = structuredClone(list) as { items: Obj[] };
    const svc = bad.items.find((o) => o.kind === 'Service')!;
    (svc.spec as { ports: Array<Record<string, unknown>> }).ports[0]!.port = 70000;
    const text = JSON.stringify(bad);
    const r = await runKpc([...ARGS, '-f', write('bad-compact.json', text)]);
    expect(r.code).toBe(2);
    const column = text.indexOf('"port":70000') + '"port":'.length + 1;
    expect(r.stderr).toContain(`bad-compact.json:1:${column}: `);
    expect(r.stderr).toContain('spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive');
  });

  it('a syntax error in the second object of a stream is at its place', async () => {
    const text = `${JSON.stringify(objects[0])}\n${JSON.stringify(objects[1]).replace('"metadata"', '"metadata" "x"')}\n`;
    const r = await runKpc([...ARGS, '-f', write('bad-stream.json', text)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`bad-stream.json:2:${JSON.stringify(objects[1]).indexOf('"metadata"') + '"metadata" '.length + 1}: JSON: `);
  });

  it('something other than an object at the top of a JSON stream', async () => {
    const r = await runKpc([...ARGS, '-f', '-'], `${JSON.stringify(objects[0])}\n[1, 2]\n`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('<stdin>:2:1: JSON: expected a JSON object, found "["');
  });
});

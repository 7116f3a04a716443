/**
 * A large JSON file is read in pieces (parser/file-window.ts) and must load exactly as the
 * same file read whole: the same objects, errors, warnings and notes, each at the same
 * file:line:column. The window is made tiny here so that it slides hundreds of times per
 * file, through list items, top-level keys, strings and multi-byte characters; the whole-file
 * reader (the window larger than the file) is the reference.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FILE_WINDOW } from '../../src/parser/file-window.js';
import { openLargeJSON } from '../../src/parser/documents.js';
import { loadObjects, type LoadResult } from '../../src/parser/load.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-file-window-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const WINDOW = FILE_WINDOW.bytes;
afterEach(() => {
  FILE_WINDOW.bytes = WINDOW;
});

function service(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: 'ns', annotations: { note: `caf\u00e9 \u2603 \u{1f600} ${'x'.repeat(i % 50)}` } },
    spec: { clusterIP: `10.96.${i >> 8}.${i & 255}`, ports: [{ name: 'http', port: 80, protocol: 'TCP' }], ...extra },
  };
}

function slice(i: number): Record<string, unknown> {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `svc-${i}-abc`, namespace: 'ns', labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [`10.128.${i >> 8}.${i & 255}`], conditions: { ready: true } }],
  };
}

function items(n: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    // Every 37th Service draws a warning, so warnings are located late in the file too.
    out.push(service(i, i % 37 === 5 ? { externalIPs: ['192.0.2.1'] } : {}));
    out.push(slice(i));
  }
  return out;
}

/** As kubectl prints it: items first, kind after (so the list is known a list only at its end). */
const kubectlList = (list: unknown[], kind = 'List', indent: number | undefined = 4) =>
  JSON.stringify({ apiVersion: 'v1', items: list, kind, metadata: { resourceVersion: '' } }, null, indent);

function write(name: string, text: string | Buffer): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

function load(path: string, maxErrors = 100): LoadResult {
  return loadObjects({
    paths: [path],
    recursive: false,
    defaultNamespace: 'default',
    readStdin: () => new Uint8Array(),
    maxInputBytes: 1 << 30,
    maxErrors,
    ipValidation: 'legacy',
    nodePortRange: { min: 30000, max: 32767 },
    relaxedServiceNames: false,
  });
}

/** What a load gives, as plain data (origins as the positions of a few field paths). */
function outcome(r: LoadResult): unknown {
  return {
    objects: r.objects.map((o) => ({ object: o.object, at: o.origin.locate(['metadata', 'name']), file: o.origin.file })),
    errors: r.errors,
    warnings: r.warnings,
    notes: r.notes,
    documents: r.read.documents,
  };
}

/** The file loaded with a tiny window (read in pieces) and whole; both outcomes. */
function bothWays(path: string, window = 1024): { pieces: unknown; whole: unknown } {
  FILE_WINDOW.bytes = window;
  const pieces = outcome(load(path));
  FILE_WINDOW.bytes = 1 << 30;
  const whole = outcome(load(path));
  return { pieces, whole };
}

/** The file is read in pieces, and every object comes from them (none falls back to a whole read). */
function expectStreamed(path: string, window = 1024): void {
  FILE_WINDOW.bytes = window;
  const opened = openLargeJSON(path, 1 << 30, () => {
    throw new Error('read whole');
  });
  expect(opened && 'json' in opened, path).toBe(true);
  const items = (opened as { json: { count: number; take(i: number): object; release(): void } }).json;
  for (let i = 0; i < items.count; i++) expect('failed' in items.take(i), `${path} object ${i}`).toBe(false);
  items.release();
  FILE_WINDOW.bytes = WINDOW;
}

// Each case loads a few files twice over (up to a few seconds on a loaded machine).
describe('a large JSON file read in pieces', { timeout: 60_000 }, () => {
  it('loads a kubectl-indented List as the whole file does, positions included', () => {
    const path = write('list.json', kubectlList(items(300)));
    expectStreamed(path);
    const { pieces, whole } = bothWays(path);
    expect(pieces).toEqual(whole);
    const w = whole as { objects: unknown[]; warnings: Array<{ line: number }> };
    expect(w.objects).toHaveLength(600);
    expect(w.warnings.length).toBeGreaterThan(0);
    expect(w.warnings[0]!.line).toBeGreaterThan(1);
  });

  it('loads compact one-line JSON, a typed list and a stream of objects', () => {
    for (const [name, text] of [
      ['compact.json', kubectlList(items(200), 'List', undefined)],
      ['typed.json', JSON.stringify({ apiVersion: 'v1', items: items(150).filter((o) => o.kind === 'Service').map(({ kind: _k, apiVersion: _a, ...rest }) => rest), kind: 'ServiceList' }, null, 2)],
      ['stream.json', items(150).map((o) => JSON.stringify(o, null, 2)).join('\n')],
      ['crlf.json', kubectlList(items(100)).replace(/\n/g, '\r\n')],
    ] as const) {
      expectStreamed(write(name, text));
      const { pieces, whole } = bothWays(join(tmp, name));
      expect(pieces, name).toEqual(whole);
      expect((whole as { objects: unknown[] }).objects.length, name).toBeGreaterThan(100);
    }
  });

  it('a byte-order mark is not part of the text (columns count from after it)', () => {
    const path = write('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(kubectlList(items(100)))]));
    expectStreamed(path);
    const { pieces, whole } = bothWays(path);
    expect(pieces).toEqual(whole);
  });

  it('gives the whole file\'s diagnostics for a syntax error, a bad object, a duplicate key, a NUL, bad UTF-8', () => {
    const good = kubectlList(items(120));
    const late = good.lastIndexOf('"svc-110"');
    const cases: Array<[string, string | Buffer]> = [
      ['syntax.json', good.slice(0, late) + '"svc-110",,' + good.slice(late + 10)],
      ['cut.json', good.slice(0, good.length - 40)],
      ['object.json', good.slice(0, late) + '"svc-110" x' + good.slice(late + 9)],
      ['duplicate.json', good.replace('"name": "svc-100",', '"name": "svc-100", "name": "svc-100b",')],
      ['invalid.json', good.replace('"name": "svc-90",', '"name": "svc-90", "clusterIP": "not an ip",').replace('"clusterIP": "10.96.0.95"', '"clusterIP": "bad"')],
      ['nul.json', Buffer.concat([Buffer.from(good.slice(0, late)), Buffer.from([0]), Buffer.from(good.slice(late + 1))])],
      ['utf8.json', Buffer.concat([Buffer.from(good.slice(0, late)), Buffer.from([0xe2, 0x28, 0xa1]), Buffer.from(good.slice(late + 3))])],
      ['yaml.json', `# not JSON\n${good}`],
    ];
    // Only the duplicate key and the invalid field are read in pieces (they are problems of decoding, not of reading).
    for (const name of ['duplicate.json', 'invalid.json']) expectStreamed(write(name, cases.find((c) => c[0] === name)![1]));
    for (const [name, text] of cases) {
      const { pieces, whole } = bothWays(write(name, text));
      expect(pieces, name).toEqual(whole);
    }
    // The cases are not all quiet: each reports something (or, as YAML, reads otherwise).
    FILE_WINDOW.bytes = 1 << 30;
    expect(load(join(tmp, 'syntax.json')).errors[0]!.line).toBeGreaterThan(1000);
    expect(load(join(tmp, 'duplicate.json')).errors[0]!.message).toMatch(/duplicate field/);
    expect(load(join(tmp, 'nul.json')).errors[0]!.message).toMatch(/NUL byte at offset/);
  });

  it('slides past items larger than the window', () => {
    const big = items(20).map((o, i) => (i === 7 ? { ...o, metadata: { ...(o.metadata as object), annotations: { big: 'y'.repeat(20_000) } } } : o));
    const path = write('big.json', kubectlList(big));
    expectStreamed(path, 2048);
    const { pieces, whole } = bothWays(path, 2048);
    expect(pieces).toEqual(whole);
  });

  it('a file written to in place between its scan and the last object says so at the last object (the loader then reads the file again, whole: one version, never a mix)', () => {
    const v1 = kubectlList(items(40));
    // The same layout and length, other cluster IPs (10.96 → 10.97): what an in-place rewrite by
    // `kubectl get -o json > file` of a changed cluster looks like to a reader holding the file.
    const v2 = v1.replaceAll('"10.96.', '"10.97.');
    expect(v2.length).toBe(v1.length);
    const path = write('rewritten.json', v1);
    FILE_WINDOW.bytes = 1024;
    const opened = openLargeJSON(path, 1 << 30, () => ({ read: { objects: [], diagnostics: [] } }));
    const list = (opened as { json: { count: number; take(i: number): object; release(): void } }).json;
    const first = list.take(0) as { value: { spec: { clusterIP: string } } };
    expect(first.value.spec.clusterIP).toBe('10.96.0.0');
    // File times move with the kernel's coarse clock (a few ms): the rewrite comes later.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    const fd = openSync(path, 'r+');
    writeSync(fd, v2, 0);
    closeSync(fd);
    for (let i = 1; i < list.count - 1; i++) list.take(i);
    expect(list.take(list.count - 1)).toEqual({ failed: 'changed', index: list.count - 1 });
    list.release();
  });
});

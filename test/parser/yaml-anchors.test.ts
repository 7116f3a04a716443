/**
 * YAML with anchors and aliases: only the documents, or the List items, that hold them are read
 * by the precise parser (yaml-documents.ts, readYAMLMixed); the values and every position are
 * the same as when the whole file is read precisely. Positions below are counted by hand from
 * the texts; the large file shows the precise path is not taken for the whole file (a file over
 * 32 MB that is not plain YAML used to be refused).
 */
import { describe, expect, it } from 'vitest';
import { readDocuments } from '../../src/parser/documents.js';

const read = (text: string) => readDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(text) });

const STREAM = `apiVersion: v1
kind: Service
metadata:
  name: a
  namespace: default
  labels: &l {app: a}
spec:
  clusterIP: 10.96.0.10
  ports:
  - port: 80
  selector: *l
---
apiVersion: v1
kind: Service
metadata:
  name: b
  namespace: default
spec:
  clusterIP: 10.96.0.11
  ports:
  - port: 80
    protocol: TCPX
---
apiVersion: v1
kind: Service
metadata:
  name: c
  namespace: default
  labels: &l {app: c}
spec:
  clusterIP: 10.96.0.12
  ports:
  - port: 81
  selector: *l
`;

const LIST = `apiVersion: v1
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a, namespace: default}
  spec:
    clusterIP: 10.96.0.10
    ports: &p
    - name: http
      port: 80
- apiVersion: v1
  kind: Service
  metadata: {name: b, namespace: default}
  spec:
    clusterIP: 10.96.0.11
    ports:
    - port: 70000
- apiVersion: v1
  kind: Service
  metadata: {name: c, namespace: default}
  spec:
    clusterIP: 10.96.0.12
    ports: *p
kind: List
metadata: {}
`;

describe('YAML anchors are read per document and per List item', () => {
  it('a stream: each document with anchors resolved, positions in the file', () => {
    const r = read(STREAM);
    expect(r.diagnostics).toEqual([]);
    expect(r.objects.map((o) => (o.value as { spec: { selector?: unknown } }).spec.selector)).toEqual([{ app: 'a' }, undefined, { app: 'c' }]);
    const [a, b, c] = r.objects;
    expect(b!.origin.locate(['spec', 'ports', 0, 'protocol'])).toEqual({ line: 22, column: 15 });
    expect(a!.origin.locate(['spec', 'selector'])).toEqual({ line: 11, column: 13 });
    expect(c!.origin.locate(['metadata', 'labels'])).toEqual({ line: 29, column: 14 }); // the node, after its anchor
    expect(c!.origin.locate(['spec', 'selector'])).toEqual({ line: 34, column: 13 });
  });

  it('a List: an alias to an earlier item, the items between read fast, positions in the file', () => {
    const r = read(LIST);
    expect(r.diagnostics).toEqual([]);
    const values = r.objects.map((o) => o.value as { spec: { ports: unknown } });
    expect(values[2]!.spec.ports).toEqual([{ name: 'http', port: 80 }]);
    expect(values[0]!.spec.ports).toEqual(values[2]!.spec.ports);
    expect(r.objects[1]!.origin.locate(['spec', 'ports', 0, 'port'])).toEqual({ line: 17, column: 13 });
    expect(r.objects[0]!.origin.locate(['spec', 'ports', 0, 'port'])).toEqual({ line: 10, column: 13 });
    expect(r.objects[2]!.origin.locate(['spec', 'ports'])).toEqual({ line: 23, column: 12 });
    expect(r.objects[2]!.origin.locate(['metadata', 'name'])).toEqual({ line: 20, column: 20 });
  });

  it('what js-yaml reads otherwise, and problems, come from the precise reading of the whole file', () => {
    // A merge key (js-yaml keeps `<<` as a key, the yaml package merges as kubectl does).
    const merged = read(LIST.replace('  metadata: {name: c, namespace: default}', '  metadata:\n    <<: *p\n    name: c'));
    expect(merged.diagnostics).toEqual([]);
    expect((merged.objects[2]!.value as { metadata: unknown }).metadata).toEqual({ name: 'c', port: 80 });
    // kpc 2b4bf86 (the whole file read precisely) reports metadata.port of this file at 21:5.
    expect(merged.objects[2]!.origin.locate(['metadata', 'port'])).toEqual({ line: 21, column: 5 });
    // An ambiguous scalar in an item without anchors.
    const ambiguous = LIST.replace('    - port: 70000', '    - port: 70000\n      name: yes');
    expect(read(ambiguous).diagnostics.map((d) => `${d.line}:${d.column}`)).toEqual(['18:13']);
    // An alias to another document's anchor (anchors are per document): at the alias, in
    // go-yaml's words (kubectl's reader), not as an alias bomb at the document's start.
    const unknown = (name: string) => `YAML: unknown anchor '${name}' referenced (an alias *${name} needs an anchor &${name} before it in the same document)`;
    const across = STREAM.replace('labels: &l {app: c}', 'labels: {app: c}');
    expect(read(across).diagnostics.map((d) => `${d.line}:${d.column}: ${d.path}: ${d.message}`)).toEqual([`34:13: spec.selector: ${unknown('l')}`]);
    // An alias before its anchor in a List (items are one document).
    const early = LIST.replace('    ports: &p\n', '    ports: *q\n    xs: &q [1]\n    ys: &p\n');
    expect(read(early).diagnostics.map((d) => `${d.line}:${d.column}: ${d.path}: ${d.message}`)).toEqual([`8:12: items[0].spec.ports: ${unknown('q')}`]);
    // An alias inside its own anchor's node: go-yaml refuses it (kpc 2a41867 crashed, exit 3);
    // the same name anchored again inside is another anchor.
    const selfish = STREAM.replace('labels: &l {app: a}', 'labels: &l {app: *l}');
    expect(read(selfish).diagnostics.map((d) => `${d.line}:${d.column}: ${d.path}: ${d.message}`)).toEqual([`6:20: metadata.labels.app: YAML: anchor 'l' value contains itself`]);
    const shadowed = read(STREAM.replace('labels: &l {app: a}', 'labels: &l {x: &l a, app: *l}'));
    expect(shadowed.diagnostics).toEqual([]);
    expect((shadowed.objects[0]!.value as { metadata: unknown }).metadata).toEqual({ name: 'a', namespace: 'default', labels: { x: 'a', app: 'a' } });
    // An anchor on a key is an anchor too.
    const key = read(LIST.replace('      port: 80\n', '      port: 80\n      &k kk: 1\n').replace('    ports: *p\n', '    ports: *p\n    xs: *k\n'));
    expect(key.diagnostics).toEqual([]);
    expect((key.objects[2]!.value as { spec: { xs: unknown } }).spec.xs).toBe('kk');
  });

  it('nesting too deep is reported once, at the value (a key is not checked for depth again)', () => {
    // 70 nested maps under data, each key `k`: the 65th level is too deep. kpc 08e0cb7 (keys
    // walked as nodes, for their anchors) also reported the key of that level, one line before.
    let text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: &top\n';
    for (let i = 1; i <= 70; i++) text += `${'  '.repeat(i)}k:\n`;
    text += `${'  '.repeat(71)}v: 1\n`;
    const r = read(text);
    expect(r.diagnostics.map((d) => `${d.line}:${d.column}: ${d.message}`)).toEqual(['69:131: nesting is deeper than 64 levels; no Kubernetes object is']);
  });

  it('a file over 32 MB with a few aliases is read, not refused', () => {
    const item = (i: number) => `- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cm-${i}, namespace: default}\n  data: {a: "${'x'.repeat(200)}"}\n`;
    let body = '';
    for (let i = 0; i < 130_000; i++) body += item(i);
    const text = `apiVersion: v1\nitems:\n${LIST.slice(LIST.indexOf('- apiVersion'), LIST.indexOf('kind: List'))}${body}kind: List\nmetadata: {}\n`;
    expect(text.length).toBeGreaterThan(32 << 20);
    const r = read(text);
    expect(r.diagnostics).toEqual([]);
    expect(r.objects.length).toBe(130_003);
    expect((r.objects[2]!.value as { spec: { ports: unknown } }).spec.ports).toEqual([{ name: 'http', port: 80 }]);
    expect(r.objects[130_002]!.origin.locate(['metadata', 'name'])).toEqual({ line: 24 + 4 * 129_999 + 2, column: 20 });
  }, 120_000);
});

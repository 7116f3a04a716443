/**
 * A kubectl List read item by item (yaml-documents.ts YamlListObjects): an item that is not an
 * object (a string, a number, null) is placed where the precise path places it. kpc 08e0cb7
 * placed it at 1:1 (the fast path keeps positions for objects only).
 */
import { describe, expect, it } from 'vitest';
import { openDocuments } from '../../src/parser/documents.js';
import { readYAMLPrecisely } from '../../src/parser/yaml-precise.js';
import type { RawObject } from '../../src/parser/raw-objects.js';

const TEXT = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a, namespace: default}
  spec: {clusterIP: 10.96.0.5, ports: [{port: 80}]}
- just-a-string
-   42
- [1, 2]
-
- "quoted"
- apiVersion: v1
  kind: Service
  metadata: {name: b, namespace: default}
metadata:
  resourceVersion: ""
`;

/** The objects as compile reads them: item by item when the reader offers that. */
function itemByItem(text: string): RawObject[] {
  const opened = openDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(text) });
  if (!('json' in opened)) throw new Error('the List was not read item by item');
  const out: RawObject[] = [];
  for (let i = 0; i < opened.json.count; i++) {
    const o = opened.json.take(i);
    if ('failed' in o) throw new Error(`item ${i} failed`);
    out.push(o);
  }
  return out;
}

describe('List items that are not objects', () => {
  it('are placed as the precise path places them', () => {
    const mine = itemByItem(TEXT);
    const precise = readYAMLPrecisely('in.yaml', TEXT);
    expect(precise.diagnostics).toEqual([]);
    expect(mine.map((o) => o.value)).toEqual(precise.objects.map((o) => o.value));
    const at = (objects: RawObject[]) => objects.map((o) => o.origin.locate([])).map((p) => `${p.line}:${p.column}`);
    expect(at(mine)).toEqual(at(precise.objects));
    // By hand: the string at 8:3, the number after three spaces at 9:5, the empty item at 11:2.
    expect(at(mine)).toEqual(['4:3', '8:3', '9:5', '10:3', '11:2', '12:3', '13:3']);
  });
});

/**
 * schema/fast-accept.ts decides when decoding may skip zod. Its one rule: never say yes where
 * zod would refuse the value or hand back something other than the value itself. Checked here
 * against zod on every Service, EndpointSlice and Node of the fixtures, and on damaged copies.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { readDocuments } from '../../../src/parser/documents.js';
import { readSource } from '../../../src/parser/input-files.js';
import { compileAcceptor } from '../../../src/parser/k8s/schema/fast-accept.js';
import { serviceSchema } from '../../../src/parser/k8s/schema/service.js';
import { endpointSliceSchema } from '../../../src/parser/k8s/schema/endpoint-slice.js';
import { nodeSchema } from '../../../src/parser/k8s/schema/node.js';

const SCHEMAS: Record<string, z.ZodType> = { Service: serviceSchema, EndpointSlice: endpointSliceSchema, Node: nodeSchema };

function manifests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return manifests(path);
    return /\.(ya?ml|json)$/.test(name) ? [path] : [];
  });
}

/** Damaged copies: each breaks one thing zod checks, or adds what it would drop. */
const DAMAGE: Array<(v: Record<string, any>) => void> = [
  (v) => delete v.kind,
  (v) => (v.unknownField = 1),
  (v) => (v.metadata = 'x'),
  (v) => (v.metadata = { ...v.metadata, labels: { a: 1 } }),
  (v) => (v.spec = { ...v.spec, ports: [{ port: 'eighty' }] }),
  (v) => (v.spec = { ...v.spec, ports: [{ port: 1.5 }] }),
  (v) => (v.endpoints = [{ addresses: 'x' }]),
  (v) => (v.endpoints = [{ addresses: [], conditions: { ready: 'yes' } }]),
  (v) => (v.status = { addresses: [{ type: 'InternalIP', address: 1 }] }),
];

describe('the compiled acceptor never accepts what zod would not take as it is', () => {
  it('on the fixtures and damaged copies of them', () => {
    const acceptors = new Map(Object.entries(SCHEMAS).map(([kind, schema]) => [kind, compileAcceptor(schema)]));
    let accepted = 0;
    let checked = 0;
    for (const file of manifests(join(import.meta.dirname, '..', '..', '..', 'fixtures'))) {
      for (const { value } of readDocuments(readSource(file, () => new Uint8Array(), 1 << 30)).objects) {
        const kind = (value as { kind?: unknown }).kind;
        if (typeof kind !== 'string' || !SCHEMAS[kind]) continue;
        for (const damage of [undefined, ...DAMAGE]) {
          const v = structuredClone(value) as Record<string, any>;
          damage?.(v);
          checked++;
          if (!acceptors.get(kind)!(v)) continue;
          accepted++;
          const parsed = SCHEMAS[kind]!.safeParse(v);
          expect(parsed.success, `${file}: ${JSON.stringify(v).slice(0, 200)}`).toBe(true);
          expect(isDeepStrictEqual(parsed.data, v), `${file}: zod's output differs from its input`).toBe(true);
        }
      }
    }
    // The acceptor must also be worth having: it takes most undamaged objects.
    expect(checked).toBeGreaterThan(1000);
    expect(accepted).toBeGreaterThan(100);
  });
});

/**
 * 20,000 EndpointSlices whose Services are not in the input: a few warnings with exact
 * positions, then one counted note, in bounded time (locating each warning used to count
 * newlines from the start of the file: 366 s at 20,000 in YAML).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';

const KPC = join(import.meta.dirname, '..', '..', 'bin', 'kpc.js');
const tmp = mkdtempSync(join(tmpdir(), 'kpc-orphans-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function slice(i: number, service: string) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `s${i}`, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [`10.244.${(i >> 8) & 255}.${(i & 255) || 1}`] }],
    ports: [{ port: 80, protocol: 'TCP' }],
  };
}

function run(file: string) {
  const start = Date.now();
  const r = spawnSync(process.execPath, [KPC, 'compile', '-f', file, '--hostname-override', 'node-a'], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 60_000 });
  return { ...r, ms: Date.now() - start };
}

/** 1-based line and column of the n-th occurrence of needle in text. */
function position(text: string, needle: string, nth = 0): string {
  let at = -1;
  for (let k = 0; k <= nth; k++) at = text.indexOf(needle, at + 1);
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return `${line}:${at - before.lastIndexOf('\n')}`;
}

const N = 20_000;
const items = Array.from({ length: N }, (_, i) => slice(i, `svc${i}`));

describe('20,000 orphan EndpointSlices', () => {
  for (const format of ['yaml', 'json'] as const) {
    it(`${format}: three located warnings, then one note with the count, in under 5 s`, () => {
      const text = format === 'yaml' ? items.map((o) => stringify(o)).join('---\n') : JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2);
      const file = join(tmp, `orphans.${format}`);
      writeFileSync(file, text);
      const r = run(file);
      expect(r.status, r.stderr).toBe(0);
      expect(r.ms).toBeLessThan(5_000);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(4);
      for (let i = 0; i < 3; i++) {
        // The warning points at the label's value, as the API server's field path does.
        const at = position(text, format === 'yaml' ? `svc${i}\n` : `"svc${i}"`);
        expect(lines[i]).toBe(`${file}:${at}: warning: metadata.labels[kubernetes.io/service-name]: Not found: "svc${i}": no Service default/svc${i} in the input; kube-proxy programs nothing for this slice`);
      }
      expect(lines[3]).toBe(`note: ${N - 3} more warning(s) of this kind: EndpointSlice whose Service is not in the input`);
    }, 30_000);
  }

  it('a warning far down a large YAML file is located exactly', () => {
    const withServices = items.slice(0, 5000).map((s, i) => (i === 4999 ? s : { ...s, metadata: { ...s.metadata, labels: { 'kubernetes.io/service-name': 'web' } } }));
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 80, protocol: 'TCP' }] } };
    const text = [service, ...withServices].map((o) => stringify(o)).join('---\n');
    const file = join(tmp, 'far.yaml');
    writeFileSync(file, text);
    const r = run(file);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${file}:${position(text, 'svc4999\n')}: warning: metadata.labels[kubernetes.io/service-name]: Not found: "svc4999"`);
  }, 30_000);
});

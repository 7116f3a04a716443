/**
 * Bad input, one test per class: each must give a clear error with its position, exit 2,
 * print nothing on stdout and write no file, in bounded time and memory. The CLI runs as a
 * real process under a heap cap, so "bounded memory" is measured, not assumed.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const KPC = join(import.meta.dirname, '..', 'bin', 'kpc.js');
const tmp = mkdtempSync(join(tmpdir(), 'kpc-bad-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const HEAP_MB = 384;
const TIME_LIMIT_MS = 20_000;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  outWritten: boolean;
}

function compile(file: string, extra: string[] = []): Result {
  const out = join(tmp, `out-${Math.random().toString(36).slice(2)}.txt`);
  const start = Date.now();
  const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, KPC, 'compile', '-f', file, '--hostname-override', 'node-a', '-o', out, ...extra], {
    encoding: 'utf8',
    timeout: TIME_LIMIT_MS,
    maxBuffer: 16 << 20,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - start, outWritten: existsSync(out) };
}

function write(name: string, text: string | Buffer): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

/** The common promise for every bad input. */
function expectRejected(r: Result, file: string, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.outWritten).toBe(false);
  expect(r.ms).toBeLessThan(TIME_LIMIT_MS);
  expect(r.stderr).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `));
  expect(r.stderr).toMatch(pattern);
}

const service = (extra = '') => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  clusterIP: 10.96.0.1
  ports:
    - port: 80
      protocol: TCP
${extra}`;

describe('bad input is refused with a position, exit 2, no output', () => {
  it('a schema violation (a string where a port number belongs)', () => {
    const f = write('schema.yaml', service().replace('port: 80', 'port: "eighty"'));
    expectRejected(compile(f), f, /spec\.ports\[0\]\.port/);
  });

  it('an unknown field (kubectl --validate=strict)', () => {
    const f = write('unknown.yaml', service('  typo: 1\n'));
    expectRejected(compile(f), f, /unknown field/);
  });

  it('an API validation failure (port out of range) in the API server\'s words', () => {
    const f = write('api.yaml', service().replace('port: 80', 'port: 70000'));
    expectRejected(compile(f), f, /spec\.ports\[0\]\.port: Invalid value: 70000: must be between 1 and 65535, inclusive/);
  });

  it('YAML that YAML 1.1 (kubectl) and 1.2 read differently', () => {
    const f = write('yaml11.yaml', service().replace('port: 80', 'port: 010'));
    expectRejected(compile(f), f, /kubectl \(YAML 1\.1\) reads the octal number 8, YAML 1\.2 reads the number 10/);
    const g = write('yaml11-bool.yaml', service().replace('name: web', 'name: web\n  labels:\n    enabled: yes'));
    expectRejected(compile(g), g, /reads the boolean true/);
  });

  it('duplicate keys', () => {
    const f = write('dup.yaml', service().replace('  clusterIP: 10.96.0.1', '  clusterIP: 10.96.0.1\n  clusterIP: 10.96.0.2'));
    expectRejected(compile(f), f, /YAML: .*[Uu]nique|duplicate/i);
  });

  it('an alias bomb (billion laughs)', () => {
    const lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(',')}]`);
    const f = write('bomb.yaml', `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n${lines.map((l) => `    ${l}`).join('\n')}\n`);
    expectRejected(compile(f), f, /alias/);
  });

  it('deep nesting', () => {
    const depth = 5000;
    const f = write('deep.yaml', `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec: ${'['.repeat(depth)}${']'.repeat(depth)}\n`);
    expectRejected(compile(f), f, /nest|deep|exhaust/i);
    const j = write('deep.json', `{"apiVersion":"v1","kind":"Service","spec":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    expectRejected(compile(j), j, /nest|deep|exhaust/i);
  });

  it('a single 200 MB scalar', () => {
    const p = join(tmp, 'huge.yaml');
    const fd = openSync(p, 'w');
    writeSync(fd, 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n    big: ');
    const block = Buffer.alloc(1 << 20, 'A');
    for (let i = 0; i < 200; i++) writeSync(fd, block);
    writeSync(fd, '\n');
    closeSync(fd);
    expectRejected(compile(p), p, /characters long/);
  });

  it('binary garbage', () => {
    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) & 0xff;
    const f = write('garbage.yaml', bytes);
    expectRejected(compile(f), f, /not a text file/);
  });

  const injections: Array<[string, string]> = [
    ['a quote in a name', 'web"x'],
    ['a newline in a name', 'web\nCOMMIT'],
    ['a carriage return', 'web\rx'],
    ['a line separator', 'web\u2028x'],
    ['a command substitution', '$(reboot)'],
    ['a backslash', 'web\\"'],
    ['a space', 'web x'],
  ];
  for (const [what, name] of injections) {
    it(`a name crafted to break out of a comment: ${what}`, () => {
      const f = write(`inject-${what.replace(/\W+/g, '-')}.json`, JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 80, protocol: 'TCP' }] } }));
      expectRejected(compile(f), f, /metadata\.name: Invalid value/);
    });
  }

  it('a port name crafted to break out of a comment', () => {
    const f = write('inject-port.yaml', service().replace('- port: 80', '- name: "p\\" -j ACCEPT"\n      port: 80'));
    expectRejected(compile(f), f, /spec\.ports\[0\]\.name: Invalid value/);
  });
});

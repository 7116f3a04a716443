/**
 * Messages that must point at the right thing (issue 12, item 10): each bad input gets the
 * error kubectl's reader or the API server would give, at the right line and column.
 */
import { describe, expect, it } from 'vitest';
import { runKpc } from '../helpers/run-kpc.js';
import { countKeysInText, countKeysInValue, findDuplicateKey } from '../../src/parser/json-duplicates.js';

const VALIDATE = ['validate', '-f', '-'];
const COMPILE = ['compile', '-f', '-', '--hostname-override', 'node-a'];

const svcJSON = (body: string) => `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"}, "spec": {"clusterIP": "10.96.0.1", "ports": [${body}]}}`;

async function refused(args: string[], input: string) {
  const r = await runKpc(args, input);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  return r.stderr;
}

describe('JSON is read as JSON (input starting with "{", as kubectl\'s reader decides)', () => {
  it('a // comment is a JSON syntax error at the comment, not "apiVersion: Required value"', async () => {
    const err = await refused(VALIDATE, '{\n  // web\n  "apiVersion": "v1"\n}\n');
    expect(err).toContain('<stdin>:2:3: JSON: expected a double-quoted property name');
    expect(err).not.toContain('Required value');
  });

  it('a trailing comma is a JSON syntax error at the bracket', async () => {
    const input = svcJSON('{"port": 80},');
    const err = await refused(VALIDATE, input);
    expect(err).toContain(`<stdin>:1:${input.indexOf(',]') + 2}: JSON: unexpected character "]"`);
  });
});

describe('duplicate keys: the API server\'s strict decoding, for JSON and YAML alike', () => {
  it('JSON: duplicate field with its path, at the second key', async () => {
    const input = '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "name": "api"}, "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}}';
    const err = await refused(VALIDATE, input);
    expect(err).toContain(`<stdin>:1:${input.indexOf('"name": "api"') + 1}: metadata.name: duplicate field "metadata.name"`);
  });

  it('JSON inside a List item: the path is the object\'s own, the position the file\'s', async () => {
    const item = svcJSON('{"port": 80, "port": 81}');
    const input = `{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": [\n    ${item}\n  ]\n}\n`;
    const err = await refused(VALIDATE, input);
    expect(err).toContain(`<stdin>:5:${4 + item.indexOf('"port": 81') + 1}: spec.ports[0].port: duplicate field "spec.ports[0].port"`);
  });

  it('YAML: the same words', async () => {
    const err = await refused(VALIDATE, 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  name: api\nspec:\n  clusterIP: 10.96.0.1\n  ports: [{port: 80}]\n');
    expect(err).toContain('<stdin>:5:3: metadata.name: duplicate field "metadata.name"');
  });

  it('keys repeated inside a string (an annotation holding JSON) are not keys', async () => {
    const annotation = JSON.stringify(JSON.stringify({ a: 1 }).replace('}', ',"a":2}'));
    const input = `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop", "annotations": {"x": ${annotation}}}, "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}}`;
    const r = await runKpc(VALIDATE, input);
    expect(r.code, r.stderr).toBe(0);
  });

  it('the cheap count and the exact search agree', () => {
    const text = '{"a": {"b": 1, "c": "x\\":y", "d": [{"e": 1}, {"e": 2, "e": 3}]}}';
    expect(countKeysInText(text)).toBe(7);
    expect(countKeysInValue(JSON.parse(text))).toBe(6);
    expect(findDuplicateKey(text)).toEqual({ offset: text.lastIndexOf('"e"'), path: 'a.d[1].e' });
    expect(findDuplicateKey('{"a": 1, "b": {"a": 2}}')).toBeUndefined();
    expect(findDuplicateKey('{"a\\u0062": 1, "ab": 2}')).toEqual({ offset: 15, path: 'ab' });
  });
});

describe('YAML merge keys (<<), which kubectl accepts', () => {
  it('compile to the same bytes as the keys written out', async () => {
    const head = 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  clusterIP: 10.96.0.1\n  ports:\n';
    const merged = await runKpc(COMPILE, `${head}  - &http {name: http, port: 80, protocol: TCP}\n  - <<: *http\n    name: alt\n    port: 81\n`);
    const plain = await runKpc(COMPILE, `${head}  - {name: http, port: 80, protocol: TCP}\n  - {name: alt, port: 81, protocol: TCP}\n`);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).not.toContain('<<');
    expect(merged.stdout).toBe(plain.stdout);
    expect(merged.stdout).toContain('shop/web:alt');
  });
});

describe('deep nesting', () => {
  it('YAML nested past the parser\'s stack: the nesting message, not "Maximum call stack size exceeded"', async () => {
    const deep = Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}k${i}:\n`).join('') + `${' '.repeat(3000)}v\n`;
    const err = await refused(VALIDATE, deep);
    expect(err).toMatch(/<stdin>:\d+:\d+: nesting is deeper than 64 levels; no Kubernetes object is/);
    expect(err).not.toContain('call stack');
  });
});

describe('flags and the config take the same values', () => {
  it('--pod-bridge-interface ".." is refused as detectLocal.bridgeInterface ".." is', async () => {
    const input = 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n';
    const err = await refused([...COMPILE, '--detect-local-mode', 'BridgeInterface', '--pod-bridge-interface', '..'], input);
    expect(err).toContain('error: --pod-bridge-interface: Invalid value: "..": must be a network interface name');
  });
});

describe('errors inside a List name the object; a misspelt field suggests the right one', () => {
  it('a List: "Service shop/web" beside the position; a lone object: the position alone', async () => {
    const svc = (name: string, extra: string) => `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "${name}", "namespace": "shop"}, "spec": {"clusterIP": "10.96.0.${name.length}", "ports": [{"port": 80${extra}}]}}`;
    const list = `{"apiVersion": "v1", "kind": "List", "items": [\n${svc('web', '')},\n${svc('api', ', "targetport": 8080')}\n]}\n`;
    const err = await refused(VALIDATE, list);
    expect(err).toMatch(/<stdin>:3:\d+: Service shop\/api: spec\.ports\[0\]\.targetport: unknown field "spec\.ports\[0\]\.targetport" \(did you mean "targetPort"\?\)/);
    const lone = await refused(VALIDATE, svc('api', ', "targetport": 8080'));
    expect(lone).toMatch(/<stdin>:1:\d+: spec\.ports\[0\]\.targetport: unknown field/);
  });

  it('a case slip is suggested too; an unrelated name is not', async () => {
    const err = await refused(VALIDATE, 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  clusterIp: 10.96.0.1\n  bogus: 1\n  ports: [{port: 80}]\n');
    expect(err).toContain('spec.clusterIp: unknown field "spec.clusterIp" (did you mean "clusterIP"?)');
    expect(err).toContain('spec.bogus: unknown field "spec.bogus"\n');
  });
});

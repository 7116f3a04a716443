/**
 * Mistakes that must not turn into output (issue 13): each is refused (exit 2, a message that
 * says what was read and what to do, nothing on stdout, -o untouched) or warned about.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKpc } from '../helpers/run-kpc.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-mistakes-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function dir(): string {
  const d = join(tmp, `case-${n++}`);
  mkdirSync(d, { recursive: true });
  return d;
}

const SERVICE = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 80, protocol: TCP}]}
`;
const SLICE = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [10.244.1.5], conditions: {ready: true}, nodeName: node-a}]
ports: [{name: http, port: 8080, protocol: TCP}]
`;
const NODE = (name: string) => `apiVersion: v1
kind: Node
metadata: {name: ${name}}
status: {addresses: [{type: InternalIP, address: 10.1.0.10}]}
`;
const ARGS = ['compile', '--hostname-override', 'node-a', '--cluster-cidr', '10.244.0.0/16'];

/** Refused: exit 2, the message, nothing on stdout, and the -o file kept as it was. */
async function expectRefused(args: string[], message: string | RegExp, stdin?: string): Promise<string> {
  const out = join(dir(), 'rules.txt');
  writeFileSync(out, 'the previous rules\n');
  const r = await runKpc([...args, '-o', out], stdin);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  if (typeof message === 'string') expect(r.stderr).toContain(message);
  else expect(r.stderr).toMatch(message);
  expect(readFileSync(out, 'utf8')).toBe('the previous rules\n');
  return r.stderr;
}

describe('no objects at all: refused, never an empty ruleset', () => {
  it('an empty file', async () => {
    const f = join(dir(), 'empty.yaml');
    writeFileSync(f, '');
    await expectRefused([...ARGS, '-f', f], `error: no objects passed: 1 file(s) read from ${f}, and not one object in them`);
  });

  it('empty stdin', async () => {
    await expectRefused([...ARGS, '-f', '-'], 'error: no objects passed: 1 file(s) read from standard input', '');
  });

  it('an empty directory', async () => {
    const d = dir();
    await expectRefused([...ARGS, '-f', d], `error: no objects passed: ${d}: no manifest files (*.yaml, *.yml, *.json)`);
  });

  it('manifests only in subfolders, without -R: the message suggests -R', async () => {
    const d = dir();
    mkdirSync(join(d, 'apps', 'shop'), { recursive: true });
    writeFileSync(join(d, 'apps', 'shop', 'web.yaml'), SERVICE);
    await expectRefused([...ARGS, '-f', d], `manifests sit in subfolders (${join(d, 'apps')}): add -R to read them`);
    const r = await runKpc([...ARGS, '-f', d, '-R']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('only kinds kpc does not compile', async () => {
    const f = join(dir(), 'other.yaml');
    writeFileSync(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n');
    await expectRefused([...ARGS, '-f', f], /no objects passed: 2 object\(s\) read from .*, none of them a Service, EndpointSlice, Endpoints, Node or Pod \(1 ConfigMap, 1 Deployment\); for a cluster: kubectl get svc,endpointslices,nodes -A -o yaml/);
  });

  it('--allow-empty compiles kube-proxy\'s fixed rules only', async () => {
    const r = await runKpc([...ARGS, '--allow-empty', '-f', '-'], '');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(':KUBE-SERVICES - [0:0]');
    expect(r.stdout).not.toContain('KUBE-SVC-');
  });
});

describe('a delta that would remove every Service', () => {
  for (const mode of ['iptables', 'ipvs'] as const) {
    it(`${mode}: refused when the new input has no Services; --allow-empty lets it through`, async () => {
      const d = dir();
      const prev = join(d, mode === 'ipvs' ? 'prev-bundle' : 'prev.txt');
      const modeArgs = mode === 'ipvs' ? ['--proxy-mode', 'ipvs'] : [];
      const full = await runKpc([...ARGS, ...modeArgs, '-f', '-', '-o', prev], SERVICE + '---\n' + SLICE);
      expect(full.code, full.stderr).toBe(0);
      // The new input: only the Node (say, the wrong -f), no Service.
      const nodeOnly = NODE('node-a');
      const r = await runKpc([...ARGS, ...modeArgs, '-f', '-', '--previous', prev], nodeOnly);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/refusing a delta that removes every Service from --previous .* \(it holds \d+ Service entries\): the input has no IPv4 Service ports/);
      expect(r.stderr).toContain('--allow-empty');
      const allowed = await runKpc([...ARGS, ...modeArgs, '-f', '-', '--previous', prev, '--allow-empty'], nodeOnly);
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(allowed.stdout).not.toBe('');
    });
  }
});

describe('warnings an operator needs', () => {
  it('--hostname-override naming a node the input does not have: the Nodes it has are named', async () => {
    const r = await runKpc(['compile', '--hostname-override', 'node-z', '--cluster-cidr', '10.244.0.0/16', '-f', '-'], [SERVICE, SLICE, NODE('node-a'), NODE('node-b')].join('---\n'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: --hostname-override names node "node-z", which is not among the input\'s Nodes (node-a, node-b)');
  });

  it('Services but not one EndpointSlice or Endpoints: every Service would REJECT', async () => {
    const r = await runKpc([...ARGS, '-f', '-'], SERVICE);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: the input has 1 Service(s) and not one EndpointSlice or Endpoints: every Service is compiled without endpoints');
    expect(r.stderr).toContain('kubectl get svc,endpointslices,nodes -A -o yaml');
  });

  it('no --cluster-cidr: compile says there is no local-traffic detector, as explain does', async () => {
    const r = await runKpc(['compile', '--hostname-override', 'node-a', '-f', '-'], SERVICE + '---\n' + SLICE);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('note: no local-traffic detector (--detect-local-mode ClusterCIDR and no IPv4 --cluster-cidr (or clusterCIDR in --config))');
  });

  it('--quiet silences notes, not warnings', async () => {
    const r = await runKpc(['compile', '--quiet', '--hostname-override', 'node-a', '-f', '-'], SERVICE);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('note:');
    expect(r.stderr).toContain('warning: the input has 1 Service(s)');
  });
});

describe('-o that means a format', () => {
  it('compile -o json is refused with a hint, and no file named json appears', async () => {
    const d = dir();
    const cwd = process.cwd();
    process.chdir(d);
    try {
      const r = await runKpc([...ARGS, '-f', '-', '-o', 'json'], SERVICE);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain("-o json: kpc compile's -o names the file to write");
      expect(existsSync(join(d, 'json'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });
});

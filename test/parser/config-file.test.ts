/**
 * --config takes the kube-proxy ConfigMap as it is (`kubectl -n kube-system get cm kube-proxy
 * -o yaml|json`): its data."config.conf" is the node's KubeProxyConfiguration. Same bytes as
 * the file itself; problems inside the embedded text point at their line in the ConfigMap.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { runKpc } from '../helpers/run-kpc.js';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'features', 'config-file');
const tmp = mkdtempSync(join(tmpdir(), 'kpc-cm-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const conf = readFileSync(join(FIXTURE, 'config.yaml'), 'utf8');

/** What kubeadm creates (abridged), as kubectl prints it. */
function configMap(text: string) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-proxy', namespace: 'kube-system', labels: { app: 'kube-proxy' } },
    data: {
      'config.conf': text,
      'kubeconfig.conf': 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: default\n',
    },
  };
}

function write(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

const ARGS = ['compile', '--node-ip', '10.1.0.10', '-f', join(FIXTURE, 'input'), '-R'];

describe('--config with the kube-proxy ConfigMap', () => {
  it('YAML (kubectl -o yaml, block scalar) and JSON (kubectl -o json) give the bytes of the node\'s file', async () => {
    const plain = await runKpc([...ARGS, '--config', join(FIXTURE, 'config.yaml')]);
    expect(plain.code, plain.stderr).toBe(0);
    const yamlCM = write('cm.yaml', stringify(configMap(conf), { blockQuote: 'literal' }));
    expect(readFileSync(yamlCM, 'utf8')).toContain('config.conf: |');
    const jsonCM = write('cm.json', JSON.stringify(configMap(conf), null, 4));
    for (const cm of [yamlCM, jsonCM]) {
      const r = await runKpc([...ARGS, '--config', cm]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(plain.stdout);
    }
  });

  it('a problem inside data."config.conf" (block scalar) points at its line in the ConfigMap', async () => {
    const text = stringify(configMap(conf.replace('masqueradeBit: 12', 'masqueradeBit: 40')), { blockQuote: 'literal' });
    const cm = write('bad-cm.yaml', text);
    const r = await runKpc([...ARGS, '--config', cm]);
    expect(r.code).toBe(2);
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('masqueradeBit: 40')) + 1;
    const column = lines[line - 1]!.indexOf('40') + 1;
    expect(r.stderr).toContain(`${cm}:${line}:${column}: iptables.masqueradeBit: Invalid value: 40: must be within the range [0, 31]`);
  });

  it('a problem inside a JSON-escaped config.conf names the key and the embedded position', async () => {
    const cm = write('bad-cm.json', JSON.stringify(configMap(conf.replace('masqueradeBit: 12', 'masqueradeBit: 40'))));
    const r = await runKpc([...ARGS, '--config', cm]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad-cm\.json:1:\d+: iptables\.masqueradeBit: in data\."config\.conf" at 8:18: Invalid value: 40/);
  });

  it('a ConfigMap without a KubeProxyConfiguration says which keys it has', async () => {
    const cm = write('other-cm.yaml', stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { 'a.txt': 'hello' } }));
    const r = await runKpc([...ARGS, '--config', cm]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a ConfigMap without data."config.conf" holding a KubeProxyConfiguration (its data keys: a.txt)');
  });
});

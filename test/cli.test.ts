/**
 * The command-line contract (cli.md): exit codes, stdout only for complete output, atomic -o,
 * stdin, notes for skipped kinds, usage errors.
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKpc } from './helpers/run-kpc.js';

const QUICKSTART = join(import.meta.dirname, '..', 'fixtures', 'examples', 'quickstart');
const tmp = mkdtempSync(join(tmpdir(), 'kpc-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const svc = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.1
  ports: [{port: 80, protocol: TCP}]
`;

describe('kpc command line', () => {
  it('--version lists the kube-proxy releases it reproduces, newest the default', async () => {
    const r = await runKpc(['--version']);
    expect(r.code).toBe(0);
    const [first, ...rest] = r.stdout.split('\n');
    expect(first).toMatch(/^kpc \d+\.\d+\.\d+$/);
    expect(rest).toEqual([
      'kube-proxy releases (--kube-proxy-version):',
      '  1.34  (checked against kube-proxy v1.34.4)',
      '  1.35  (checked against kube-proxy v1.35.4)',
      '  1.36  (checked against kube-proxy v1.36.3)',
      '  1.37  (checked against kube-proxy v1.37.2)  default',
      '',
    ]);
  });

  it('--help and help compile show examples and exit 0', async () => {
    const a = await runKpc(['--help']);
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('kpc compile -f');
    const b = await runKpc(['help', 'compile']);
    expect(b.code).toBe(0);
    expect(b.stdout).toContain('--hostname-override');
  });

  it('an unknown flag is a usage error (exit 2), nothing on stdout', async () => {
    const r = await runKpc(['compile', '--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/unknown option/);
  });

  it('no input is a usage error', async () => {
    const r = await runKpc(['compile', '--hostname-override', 'n']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no input/);
  });

  it('compiles the quickstart with the node taken from the only Node object', async () => {
    const r = await runKpc(['compile', '-f', QUICKSTART, '--cluster-cidr', '10.244.0.0/16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.startsWith('*filter\n')).toBe(true);
    expect(r.stdout.endsWith('COMMIT\n')).toBe(true);
    expect(r.stdout).toContain('-A KUBE-SERVICES -m comment --comment "shop/web:http cluster IP" -m tcp -p tcp -d 10.96.10.10 --dport 80 -j KUBE-SVC-');
  });

  it('reads stdin with -f -', async () => {
    const r = await runKpc(['compile', '-f', '-', '--hostname-override', 'node-a'], svc);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"default/web has no endpoints"');
  });

  it('-f - may be given only once', async () => {
    const r = await runKpc(['compile', '-f', '-', '-f', '-', '--hostname-override', 'n'], svc);
    expect(r.code).toBe(2);
  });

  it('-o writes the file atomically and prints nothing', async () => {
    const dir = mkdtempSync(join(tmp, 'out-'));
    const out = join(dir, 'rules.txt');
    writeFileSync(out, 'old contents\n');
    const r = await runKpc(['compile', '-f', QUICKSTART, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toMatch(/^\*filter\n[\s\S]*COMMIT\n$/);
    expect(readdirSync(dir)).toEqual(['rules.txt']); // no temporary file left behind
  });

  it('bad input leaves an existing -o file untouched', async () => {
    const dir = mkdtempSync(join(tmp, 'out-'));
    const out = join(dir, 'rules.txt');
    writeFileSync(out, 'old contents\n');
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, svc.replace('port: 80', 'port: 0'));
    const r = await runKpc(['compile', '-f', bad, '--hostname-override', 'n', '-o', out]);
    expect(r.code).toBe(2);
    expect(readFileSync(out, 'utf8')).toBe('old contents\n');
    expect(readdirSync(dir).sort()).toEqual(['bad.yaml', 'rules.txt']);
  });

  it('skips other kinds with a note, so `kubectl get all -o yaml` output works', async () => {
    const f = join(tmp, 'mixed.yaml');
    writeFileSync(f, `${svc}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {}\n`);
    const r = await runKpc(['compile', '-f', f, '--hostname-override', 'n']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/note: .*Deployment/);
  });

  it('asks which node when several Nodes are given and none is named', async () => {
    const f = join(tmp, 'nodes.yaml');
    writeFileSync(f, ['a', 'b'].map((n) => `apiVersion: v1\nkind: Node\nmetadata: {name: node-${n}}\n`).join('---\n'));
    const r = await runKpc(['compile', '-f', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--hostname-override/);
  });

  it('validate: 0 for valid input with a summary, 2 with every problem', async () => {
    const ok = await runKpc(['validate', '-f', QUICKSTART]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/valid: /);
    const f = join(tmp, 'two-problems.yaml');
    writeFileSync(f, svc.replace('port: 80', 'port: 0').replace('protocol: TCP', 'protocol: tcp'));
    const bad = await runKpc(['validate', '-f', f]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${f}:6:18: spec.ports[0].port: Invalid value: 0`);
    expect(bad.stderr).toMatch(/spec\.ports\[0\]\.port: Invalid value: 0/);
    expect(bad.stderr).toMatch(/spec\.ports\[0\]\.protocol: Unsupported value: "tcp"/);
  });

  it('boolean flags take kube-proxy\'s --flag=false form', async () => {
    const a = await runKpc(['compile', '-f', QUICKSTART, '--iptables-localhost-nodeports=false']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toContain('! -d 127.0.0.0/8 -j KUBE-NODEPORTS');
    const b = await runKpc(['compile', '--kube-proxy-version', '1.36', '-f', QUICKSTART, '--masquerade-random-fully=false']);
    expect(b.stdout).not.toContain('--random-fully');
    const c = await runKpc(['compile', '--kube-proxy-version', '1.36', '-f', QUICKSTART, '--no-masquerade-random-fully']);
    expect(c.stdout).toBe(b.stdout);
  });

  it('--kube-proxy-version: 1.37 writes --random-fully whatever the host supports, and says the flag has no effect', async () => {
    const r = await runKpc(['compile', '-f', QUICKSTART, '--no-masquerade-random-fully']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('-j MASQUERADE --random-fully');
    expect(r.stderr).toContain('warning: --no-masquerade-random-fully has no effect: kube-proxy 1.37 writes MASQUERADE --random-fully');
    const v = await runKpc(['compile', '--kube-proxy-version', 'v1.37.2', '-f', QUICKSTART]);
    expect(v.stdout).toBe(r.stdout);
  });

  it("--kube-proxy-version: from 1.36 a Service's name may start with a digit (the API server's RelaxedServiceNameValidation, beta and on in v1.36)", async () => {
    // pkg/apis/core/validation ValidateServiceCreate: ValidateServiceName (DNS-1035) unless the
    // gate is on, then apimachinery NameIsDNSLabel (DNS-1123); pkg/features: on from 1.36.
    const svc = 'apiVersion: v1\nkind: Service\nmetadata: {name: 1web, namespace: shop}\nspec: {clusterIP: 10.96.0.20, ports: [{port: 80}]}\n';
    const old = await runKpc(['validate', '-f', '-', '--kube-proxy-version', '1.35'], svc);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters');
    const now = await runKpc(['validate', '-f', '-', '--kube-proxy-version', '1.36'], svc);
    expect(now.code, now.stderr).toBe(0);
    const bad = await runKpc(['validate', '-f', '-', '--kube-proxy-version', '1.37'], svc.replace('1web', 'Bad_Name'));
    expect(bad.stderr).toContain(`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character`);
  });

  it('--kube-proxy-version: an unsupported release is a usage error listing the supported ones', async () => {
    const r = await runKpc(['compile', '--kube-proxy-version', '1.33', '-f', QUICKSTART]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--kube-proxy-version: "1.33" is not a supported release (1.34, 1.35, 1.36, 1.37)');
  });

  it('never leaves a file when the output directory does not exist', async () => {
    const out = join(tmp, 'missing-dir', 'rules.txt');
    const r = await runKpc(['compile', '-f', QUICKSTART, '-o', out]);
    expect(r.code).toBeGreaterThan(1);
    expect(existsSync(out)).toBe(false);
  });

  it('a -o that cannot be written is a usage error naming it, for a file, an IPVS bundle and an IPVS delta', async () => {
    const prev = join(tmp, 'ipvs-prev');
    expect((await runKpc(['compile', '--proxy-mode', 'ipvs', '-f', QUICKSTART, '-o', prev])).code).toBe(0);
    const cases = [
      { args: [], out: join(tmp, 'missing-dir', 'rules.txt') },
      { args: ['--proxy-mode', 'ipvs'], out: join(tmp, 'missing-dir', 'bundle') },
      { args: ['--proxy-mode', 'ipvs', '--previous', prev], out: join(tmp, 'missing-dir', 'delta') },
    ];
    for (const { args, out } of cases) {
      const r = await runKpc(['compile', ...args, '-f', QUICKSTART, '-o', out]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`cannot write ${out}: ENOENT`);
      expect(r.stdout).toBe('');
      expect(existsSync(out)).toBe(false);
    }
  });
});

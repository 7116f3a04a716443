/**
 * kpc watch's command line: -o DIR (one file per step, written atomically), --events - (stdin,
 * positions as <stdin>:line:column), compile --watch (the same steps), --watch-files (the -f
 * files polled: a change is one step, equal to compile --previous; a broken file is rejected,
 * the state kept), and the usage errors.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS, KPC, kpc, NODE_FLAGS, parseSteps, ROOT } from './replay.js';

const dir = mkdtempSync(join(tmpdir(), 'kpc-watch-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kpc watch: output and input forms', () => {
  it('-o DIR: one file per step that changes something, the bytes of the framed stdout steps', () => {
    const out = join(dir, 'steps');
    const framed = kpc(['watch', ...NODE_FLAGS, '--events', EVENTS]);
    const written = kpc(['watch', ...NODE_FLAGS, '--events', EVENTS, '-o', out]);
    expect(written.code).toBe(2);
    expect(written.stdout).toBe('');
    const steps = parseSteps(framed.stdout);
    const deltas = [...steps].filter(([, s]) => s.kind === 'delta').map(([n]) => `${String(n).padStart(8, '0')}.rules`);
    expect(readdirSync(out).sort()).toEqual(deltas.sort());
    for (const [n, s] of steps) if (s.kind === 'delta') expect(readFileSync(join(out, `${String(n).padStart(8, '0')}.rules`), 'utf8')).toBe(s.text);
  });

  it('--events -: the stream from standard input, problems placed as <stdin>:line:column', async () => {
    const stream = readFileSync(EVENTS);
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [KPC, 'watch', ...NODE_FLAGS, '--events', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
      // In pieces, as a pipe delivers them.
      let at = 0;
      const next = () => {
        if (at >= stream.length) return child.stdin.end();
        child.stdin.write(stream.subarray(at, at + 333));
        at += 333;
        setTimeout(next, 1);
      };
      next();
    });
    const file = kpc(['watch', ...NODE_FLAGS, '--events', EVENTS]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(file.stdout);
    expect(r.stderr).toContain('<stdin>:160:294: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive');
  });

  it.each(['iptables', 'nftables', 'ipvs'])('--previous (%s): the first step is compile --previous of the initial objects', (mode) => {
    const quickstart = join(ROOT, 'fixtures', 'examples', 'quickstart');
    const flags = ['--proxy-mode', mode, '--cluster-cidr', '10.244.0.0/16'];
    // The node's state: the quickstart less its first file's objects.
    const files = readdirSync(quickstart).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
    const partial = join(dir, `partial-${mode}`);
    mkdirSync(partial);
    for (const f of files.slice(1)) writeFileSync(join(partial, f), readFileSync(join(quickstart, f)));
    const previous = join(dir, `previous-${mode}.txt`);
    const before = kpc(['compile', ...flags, '-f', partial, '--allow-empty']);
    expect(before.code, before.stderr).toBe(0);
    writeFileSync(previous, before.stdout);
    const events = join(dir, 'no-events.json');
    writeFileSync(events, '');
    const r = kpc(['watch', ...flags, '-f', quickstart, '--previous', previous, '--events', events]);
    expect(r.code, r.stderr).toBe(0);
    const step = parseSteps(r.stdout).get(0) as { kind: string; label: string; text: string };
    expect(step.label).toMatch(/^initial delta from --previous \(\d+ objects\)$/);
    expect(step.text).toBe(kpc(['compile', ...flags, '-f', quickstart, '--previous', previous]).stdout);
  });

  it('kpc compile --watch is kpc watch', () => {
    const a = kpc(['watch', '--proxy-mode', 'nftables', ...NODE_FLAGS, '--events', EVENTS]);
    const b = kpc(['compile', '--watch', '--proxy-mode', 'nftables', ...NODE_FLAGS, '--events', EVENTS]);
    expect(b.code).toBe(a.code);
    expect(b.stdout).toBe(a.stdout);
  });

  it('usage errors: --events with --watch-files, -f - to watch, --events in compile without --watch, nothing to watch', () => {
    expect(kpc(['watch', ...NODE_FLAGS, '--events', EVENTS, '--watch-files', '-f', EVENTS]).stderr).toMatch(/give one source of changes/);
    expect(kpc(['watch', ...NODE_FLAGS, '-f', '-']).stderr).toMatch(/standard input cannot be watched/);
    expect(kpc(['compile', ...NODE_FLAGS, '--events', EVENTS, '-f', EVENTS]).stderr).toMatch(/go with --watch/);
    const none = kpc(['watch', ...NODE_FLAGS]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no input: give --events/);
  });
});

describe('kpc watch --watch-files', () => {
  it('a changed file is one step (compile --previous of the last full output); a broken one is rejected and the state kept', { timeout: 240_000 }, async () => {
    const manifests = join(dir, 'manifests');
    const work = join(dir, 'work');
    for (const d of [manifests, work]) rmSync(d, { recursive: true, force: true });
    mkdirSync(manifests);
    mkdirSync(work);
    const svc = (port: number) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', port, protocol: 'TCP', targetPort: 8080 }] } });
    const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }] };
    // Files are replaced by rename, as editors and kubectl's users do: never read half-written.
    const put = (name: string, text: string) => {
      writeFileSync(join(work, name), text);
      renameSync(join(work, name), join(manifests, name));
    };
    put('svc.json', JSON.stringify(svc(80)));
    put('slice.json', JSON.stringify(slice));
    const first = join(dir, 'first.rules');
    writeFileSync(first, kpc(['compile', ...NODE_FLAGS, '-f', manifests]).stdout);

    const child = spawn(process.execPath, [KPC, 'watch', ...NODE_FLAGS, '-f', manifests, '--poll-interval', '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const waitFor = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re}; stdout:\n${stdout}\nstderr:\n${stderr}`)), 60_000);
        const check = () => {
          if (re.test(stdout)) {
            clearTimeout(timer);
            child.stdout.off('data', onData);
            resolve();
          }
        };
        const onData = (d: Buffer) => {
          stdout += d;
          check();
        };
        child.stdout.on('data', onData);
        check();
      });
    try {
      await waitFor(/# kpc watch: end of event 0\n/);
      put('svc.json', JSON.stringify(svc(8080)));
      await waitFor(/# kpc watch: end of event 1\n/);
      put('slice.json', '{"apiVersion": "discovery.k8s.io/v1", "kind": ');
      await waitFor(/# kpc watch: event 2 rejected\n/);
      put('slice.json', JSON.stringify(slice));
      // Back to the slice the state still holds: nothing changed, no step.
      put('svc.json', JSON.stringify(svc(80)));
      await waitFor(/# kpc watch: end of event 3\n/);
    } finally {
      child.kill('SIGTERM');
    }
    const steps = parseSteps(stdout);
    expect(steps.get(0)).toEqual({ kind: 'delta', label: 'initial state (2 objects)', text: readFileSync(first, 'utf8') });
    const step1 = steps.get(1)!;
    expect(step1).toMatchObject({ kind: 'delta', label: 'FILES 0 added, 1 modified, 0 deleted' });
    // The expected delta: compile --previous of the first output with the Service on port 8080.
    const now = join(dir, 'now');
    mkdirSync(now);
    writeFileSync(join(now, 'svc.json'), JSON.stringify(svc(8080)));
    writeFileSync(join(now, 'slice.json'), JSON.stringify(slice));
    expect((step1 as { text: string }).text).toBe(kpc(['compile', ...NODE_FLAGS, '-f', now, '--previous', first]).stdout);
    expect(steps.get(2)).toEqual({ kind: 'rejected' });
    expect(stderr).toMatch(/slice\.json:1:\d+: JSON: /);
    // Step 3 went back to port 80: the delta from the port-8080 state is the inverse change.
    const second = join(dir, 'second.rules');
    writeFileSync(second, kpc(['compile', ...NODE_FLAGS, '-f', now]).stdout);
    expect((steps.get(3) as { text: string }).text).toBe(kpc(['compile', ...NODE_FLAGS, '-f', manifests, '--previous', second]).stdout);
  });
});

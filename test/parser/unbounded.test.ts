/**
 * Input that never ends, or is far too large, is refused quickly and with bounded memory:
 * every input is read under a size limit (--max-input-size, 1Gi by default); binary data
 * stops at its first NUL byte; a directory's FIFOs and devices are skipped (reading them
 * would block or never end), while a FIFO named with -f is read as a stream under the limit.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, openSync, closeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const KPC = join(import.meta.dirname, '..', '..', 'bin', 'kpc.js');
const tmp = mkdtempSync(join(tmpdir(), 'kpc-unbounded-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SERVICE = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.0.1
  ports: [{port: 80, protocol: TCP}]
`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Peak resident memory of the kpc process, in MB (GNU time's %M). */
  rssMB: number;
}

/** kpc under GNU time, its stdin from a shell command (or nothing). */
function kpc(args: string[], stdinFrom?: string): Run {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const cmd = `${stdinFrom ? `${stdinFrom} | ` : ''}/usr/bin/time -f 'RSS_KB=%M' -o ${tmp}/time.txt ${process.execPath} ${KPC} ${quoted}${stdinFrom ? '' : ' </dev/null'}`;
  const start = Date.now();
  const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', timeout: 30_000, maxBuffer: 64 << 20 });
  const ms = Date.now() - start;
  const time = spawnSync('cat', [`${tmp}/time.txt`], { encoding: 'utf8' }).stdout;
  const rss = Number(/RSS_KB=(\d+)/.exec(time)?.[1] ?? NaN) / 1024;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, ms, rssMB: rss };
}

const hasTime = spawnSync('/usr/bin/time', ['-f', '%M', 'true']).status === 0;
const COMPILE = ['compile', '--hostname-override', 'node-a'];

describe.skipIf(!hasTime)('unbounded and oversized input', () => {
  it('-f /dev/zero: refused at the first NUL byte, at once', () => {
    const r = kpc([...COMPILE, '-f', '/dev/zero']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('/dev/zero:1:1: not a text file: NUL byte at offset 0');
    expect(r.ms).toBeLessThan(5_000);
    expect(r.rssMB).toBeLessThan(200);
  });

  it('an endless text stream on stdin: refused at the limit, with the limit named', () => {
    const r = kpc([...COMPILE, '-f', '-', '--max-input-size', '64Mi'], 'yes "a: b"');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('<stdin>:1:1: input too large: over the limit of 64Mi per input');
    expect(r.stderr).toContain('--max-input-size');
    expect(r.ms).toBeLessThan(5_000);
    expect(r.rssMB).toBeLessThan(64 * 3 + 100);
  });

  it('an endless stream at the default limit (1Gi): refused in under 12 s, memory bounded by the limit', () => {
    const r = kpc([...COMPILE, '-f', '-'], 'yes "a: b"');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('input too large: over the limit of 1Gi per input');
    // Piping 1 GiB through `yes` takes 3.5-6.8 s on this 2-core VM for the same code (1bb74d5
    // and later alike): 5 s failed a clean run. What this guards is a refusal, not a read forever.
    expect(r.ms).toBeLessThan(12_000);
    expect(r.rssMB).toBeLessThan(1024 + 400);
  }, 30_000);

  it('a regular file over the limit is refused from its size, before reading', () => {
    const big = join(tmp, 'big.yaml');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 3 * 1024 * 1024 * 1024); // sparse: takes no disk
    closeSync(fd);
    const r = kpc([...COMPILE, '-f', big]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${big}:1:1: input too large: over the limit of 1Gi per input (it holds 3221225472 bytes)`);
    expect(r.ms).toBeLessThan(5_000);
    expect(r.rssMB).toBeLessThan(200);
  });

  it('a directory: a *.yaml symlink to /dev/zero and a *.yaml FIFO are skipped with a note; the rest compiles', () => {
    const dir = join(tmp, 'dir');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a-service.yaml'), SERVICE);
    symlinkSync('/dev/zero', join(dir, 'b-zero.yaml'));
    expect(spawnSync('mkfifo', [join(dir, 'c-fifo.yaml')]).status).toBe(0);
    const r = kpc([...COMPILE, '-f', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('default/web has no endpoints');
    expect(r.stderr).toContain(`skipped ${join(dir, 'b-zero.yaml')}: not a regular file (a character device)`);
    expect(r.stderr).toContain(`skipped ${join(dir, 'c-fifo.yaml')}: not a regular file (a FIFO)`);
    expect(r.ms).toBeLessThan(5_000);
  });

  it('a FIFO named with -f is read as a stream', async () => {
    const fifo = join(tmp, 'named.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const child = spawn(process.execPath, [KPC, ...COMPILE, '-f', fifo], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    // The writer opens the FIFO after kpc does; kpc reads until the writer closes it.
    writeFileSync(fifo, SERVICE);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout).toContain('default/web has no endpoints');
  });

  it('--max-input-size must be a size', () => {
    const r = kpc([...COMPILE, '-f', '/dev/null', '--max-input-size', 'lots']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-input-size: "lots" is not a size');
  });
});

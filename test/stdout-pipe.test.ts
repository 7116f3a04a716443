/**
 * A reader that stops early (`kpc compile … | head`): kpc stops writing quietly and keeps its
 * exit code, instead of dying on EPIPE with a stack trace. A real process and a real pipe,
 * with more output than a pipe buffer holds.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, renderCluster } from '../bench/gen.js';

const KPC = join(import.meta.dirname, '..', 'bin', 'kpc.js');
const dir = mkdtempSync(join(tmpdir(), 'kpc-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function closeAfterFirstChunk(args: string[]): Promise<{ code: number | null; stderr: string; got: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [KPC, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let got = 0;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', (d: Buffer) => {
      got = d.length;
      child.stdout.destroy(); // what `head` does once it has its lines
    });
    child.on('close', (code) => resolve({ code, stderr, got }));
  });
}

describe('stdout closed by the reader', () => {
  it('compile stops quietly with exit 0', { timeout: 60_000 }, async () => {
    const file = join(dir, 'cluster.json');
    writeFileSync(file, [...renderCluster(generateCluster({ services: 300, seed: 1, variant: 'base' }), 'json')].join(''));
    const r = await closeAfterFirstChunk(['compile', '-f', file, '--hostname-override', 'node-0', '--cluster-cidr', '10.128.0.0/9']);
    expect(r.got).toBeGreaterThan(0);
    expect(r.stderr).not.toMatch(/EPIPE|Error|internal error/);
    expect(r.code).toBe(0);
  });
});

/**
 * stdout (and -o to a FIFO or device) gets an output only once all of it is made; a large one
 * waits in an unlinked temporary file instead of the heap (cli/write/spool.ts). The bytes must
 * be those of -o FILE in every mode, and no temporary file may stay behind.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SPOOL, Spool } from '../../src/cli/write/spool.js';
import { runKpc } from '../helpers/run-kpc.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-spool-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const MEMORY = SPOOL.memoryBytes;
afterEach(() => {
  SPOOL.memoryBytes = MEMORY;
});
const EXAMPLES = join(import.meta.dirname, '..', '..', 'fixtures', 'examples', 'quickstart');
const FLAGS = ['-f', EXAMPLES, '--hostname-override', 'node-a', '--cluster-cidr', '10.244.0.0/16'];

const spoolFiles = () => readdirSync(tmpdir()).filter((n) => n.startsWith('.kpc-output.'));

describe('the output spool', () => {
  it('gives back what it was given, in order, from memory or from its file', () => {
    for (const limit of [1 << 20, 10]) {
      SPOOL.memoryBytes = limit;
      const s = new Spool();
      const chunks: Array<string | Uint8Array> = [];
      for (let i = 0; i < 500; i++) chunks.push(i % 3 === 0 ? Buffer.from(`bytes ${i} \u00e9\n`) : `text ${i} \u2603 ${'x'.repeat(i)}\n`);
      for (const c of chunks) s.add(c);
      const back = Buffer.concat([...s.contents()].map((c) => Buffer.from(typeof c === 'string' ? Buffer.from(c) : c)));
      s.release();
      expect(back.equals(Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : Buffer.from(c)))))).toBe(true);
    }
    expect(spoolFiles()).toEqual([]);
  });

  it('stdout holds the same bytes as -o FILE when the text goes through the file', async () => {
    for (const mode of ['iptables', 'nftables']) {
      const file = join(tmp, `${mode}.txt`);
      expect((await runKpc(['compile', ...FLAGS, '--proxy-mode', mode, '-o', file])).code).toBe(0);
      SPOOL.memoryBytes = 64;
      const run = await runKpc(['compile', ...FLAGS, '--proxy-mode', mode]);
      SPOOL.memoryBytes = MEMORY;
      expect(run.code).toBe(0);
      expect(run.stdout.length).toBeGreaterThan(1000);
      expect(run.stdout).toBe(readFileSync(file, 'utf8'));
    }
    expect(spoolFiles()).toEqual([]);
  });
});

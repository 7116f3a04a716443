/**
 * resolveTarget (src/cli/write/target.ts): what an -o path names, when another writer replaces
 * the file at that moment, and when the name is one kpc cannot replace.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import { resolveTarget } from '../../src/cli/write/target.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

it('a file renamed over the target while it is looked at is a file, not refused (two kpc runs to one -o)', async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpc-target-'));
  const out = join(dir, 'out');
  writeFileSync(out, 'x');
  // Another thread renames new files over `out` as fast as it can (kpc 2a41867 refused ~1 % of
  // the looks here: the walk's lstat and the final stat saw two different files).
  const shared = new Int32Array(new SharedArrayBuffer(8)); // [stop, renames]
  const renamer = new Worker(
    `const { workerData: { out, shared } } = require('node:worker_threads');
     const fs = require('node:fs');
     for (let i = 0; Atomics.load(shared, 0) === 0; i++) {
       const t = out + '.tmp' + (i % 2);
       fs.writeFileSync(t, 'y');
       fs.renameSync(t, out);
       Atomics.add(shared, 1, 1);
     }`,
    { eval: true, workerData: { out, shared } },
  );
  try {
    while (Atomics.load(shared, 1) < 100) await new Promise((r) => setTimeout(r, 5));
    // At least 20,000 looks, and on until the renamer has done 2,000 more renames (on a loaded
    // machine it gets less time), at most 40 s.
    const kinds: Record<string, number> = {};
    const renamesBefore = Atomics.load(shared, 1);
    const deadline = Date.now() + 40_000;
    let looks = 0;
    while ((looks < 20_000 || Atomics.load(shared, 1) - renamesBefore < 2_000) && Date.now() < deadline) {
      const t = resolveTarget(out);
      kinds[t.kind] = (kinds[t.kind] ?? 0) + 1;
      looks++;
    }
    expect(kinds).toEqual({ file: looks });
    expect(Atomics.load(shared, 1) - renamesBefore).toBeGreaterThanOrEqual(2_000); // the race really ran beside the looks
  } finally {
    Atomics.store(shared, 0, 1);
    await renamer.terminate();
  }
}, 90_000);

it("another process's descriptor of a deleted file is refused: it has no name to replace", async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpc-target-'));
  const gone = join(dir, 'gone');
  const fd = openSync(gone, 'w');
  const child = spawn('sleep', ['30'], { stdio: ['ignore', fd, 'ignore'] });
  closeSync(fd);
  unlinkSync(gone);
  try {
    const t = resolveTarget(`/proc/${child.pid}/fd/1`);
    expect(t).toEqual({ kind: 'refused', path: `/proc/${child.pid}/fd/1`, what: 'a regular file without a name kpc can replace' });
  } finally {
    child.kill();
  }
});

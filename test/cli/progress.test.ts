import { describe, expect, it } from 'vitest';
import { progressFor } from '../../src/cli/progress.js';
import type { Io } from '../../src/cli/io.js';

function io(tty: boolean): Io & { err: string } {
  const o = { err: '', stdout: () => undefined, stderr: (t: string) => void (o.err += t), stderrIsTTY: tty, stdoutIsTTY: false, readStdin: () => new Uint8Array() };
  return o;
}

describe('progress', () => {
  it('writes nothing when stderr is not a terminal', () => {
    const o = io(false);
    const p = progressFor(o);
    p('reading');
    p.done();
    expect(o.err).toBe('');
  });

  it('rewrites one line on a terminal and clears it when done', () => {
    const o = io(true);
    const p = progressFor(o);
    p('reading a.yaml');
    p('throttled away');
    p.done();
    expect(o.err).toBe('\r\x1b[Kreading a.yaml\r\x1b[K');
  });
});

/**
 * kpc's four `-o` write paths, and the reference outputs the faulted runs are compared with.
 *
 *   iptables file    compile -o FILE
 *   ipvs bundle      compile --proxy-mode ipvs -o DIR
 *   iptables delta   compile --previous PREV.txt --full -o FILE
 *   ipvs delta       compile --proxy-mode ipvs --previous PREVDIR --full -o DIR
 *
 * (--full makes a delta's size grow with the input, so a delta is as big a write as a state.)
 *
 * The expected bytes of a faulted run are those of the same command run without a fault, into
 * a plain directory: what these tests check is that a fault leaves the target with exactly the
 * old complete output or exactly the new complete output; that the output itself is right is
 * the golden tests' business (fixtures/).
 */

import { join } from 'node:path';
import { expect } from 'vitest';
import { cluster, contentOf, kpc, NODE_FLAGS, type Content, type Workdir } from './harness.js';

export interface WritePath {
  name: string;
  kind: 'file' | 'dir';
  /** kpc's argv for `input`, without -o. */
  args(input: string): string[];
}

export interface Inputs {
  /** What the target holds before a faulted run (small, quick: also the sweeper's input). */
  old: string;
  /** What the faulted run writes. */
  new: string;
  paths: WritePath[];
  reference(path: WritePath, input: string): Promise<Content>;
}

/** Inputs in `work`: the old state, the new one (`services` Services), and deltas' previous. */
export async function prepareInputs(work: Workdir, services: number): Promise<Inputs> {
  const dir = work.dir('inputs');
  const old = cluster(dir, 40, 2);
  const newer = cluster(dir, services, 1);
  const prev = cluster(dir, 40, 3);
  const prevFile = join(dir, 'previous.txt');
  const prevDir = join(dir, 'previous-bundle');
  for (const [args, out] of [
    [['compile', '-f', prev, ...NODE_FLAGS], prevFile],
    [['compile', '-f', prev, ...NODE_FLAGS, '--proxy-mode', 'ipvs'], prevDir],
  ] as const) {
    const r = await kpc([...args, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
  }
  const paths: WritePath[] = [
    { name: 'iptables file', kind: 'file', args: (input) => ['compile', '-f', input, ...NODE_FLAGS] },
    { name: 'ipvs bundle', kind: 'dir', args: (input) => ['compile', '-f', input, ...NODE_FLAGS, '--proxy-mode', 'ipvs'] },
    { name: 'iptables delta', kind: 'file', args: (input) => ['compile', '-f', input, ...NODE_FLAGS, '--previous', prevFile, '--full'] },
    { name: 'ipvs delta', kind: 'dir', args: (input) => ['compile', '-f', input, ...NODE_FLAGS, '--proxy-mode', 'ipvs', '--previous', prevDir, '--full'] },
  ];
  const refs = new Map<string, Content>();
  const refDir = work.dir('references');
  let n = 0;
  return {
    old,
    new: newer,
    paths,
    async reference(path, input) {
      const key = `${path.name}\0${input}`;
      const known = refs.get(key);
      if (known) return known;
      const out = join(refDir, `ref-${n++}`);
      const r = await kpc([...path.args(input), '-o', out]);
      expect(r.code, r.stderr).toBe(0);
      const c = contentOf(out);
      expect(c.kind).toBe(path.kind);
      refs.set(key, c);
      return c;
    },
  };
}

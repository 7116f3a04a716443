/**
 * The layering of src/ (ARCHITECTURE.md): each top-level folder sits on one layer and may import
 * only from its own folder or from lower layers. So imports run one way down the pipeline and
 * no two folders can form a cycle. The check reads every import of every source file.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Lowest first. A folder (or a top-level module, by its name) on each. */
export const LAYERS: readonly (readonly string[])[] = [
  ['go', 'net', 'diagnostics', 'releases', 'arrays'],
  ['errors'],
  ['lang'],
  ['parser'],
  ['controllers'],
  ['ir'],
  ['config'],
  ['emit'],
  ['diff', 'trace', 'explain', 'dns'],
  ['modes'],
  ['watch'],
  ['cli'],
];

function layerOf(unit: string): number {
  const i = LAYERS.findIndex((l) => l.includes(unit));
  if (i < 0) throw new Error(`src/${unit} is on no layer: add it to LAYERS (and ARCHITECTURE.md)`);
  return i;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** The top-level unit of a path under src/: its folder, or the module's name. */
function unitOf(path: string): string {
  const first = relative(SRC, path).split('/')[0]!;
  return first.replace(/\.(ts|js)$/, '');
}

const IMPORT = /(?:^|\n)\s*(?:import|export)[^'"\n]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

export interface Violation {
  file: string;
  imports: string;
  why: string;
}

/** Every import that breaks the layering, for the files and their texts given. */
export function violations(files: ReadonlyArray<{ path: string; text: string }>): Violation[] {
  const out: Violation[] = [];
  for (const { path, text } of files) {
    const from = unitOf(path);
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      const target = normalize(join(dirname(path), spec));
      if (!target.startsWith(SRC)) continue;
      const to = unitOf(target);
      if (to === from) continue;
      const [a, b] = [layerOf(from), layerOf(to)];
      if (b < a) continue;
      out.push({
        file: relative(SRC, path),
        imports: relative(SRC, target),
        why: b === a ? `${from} and ${to} are on one layer and may not import each other` : `${to} is above ${from}`,
      });
    }
  }
  return out;
}

describe('the layering of src/', () => {
  const files = sourceFiles(SRC).map((path) => ({ path, text: readFileSync(path, 'utf8') }));

  it('every top-level folder is on a layer', () => {
    for (const f of files) expect(() => layerOf(unitOf(f.path))).not.toThrow();
  });

  it('no import goes up a layer or across one', () => {
    expect(violations(files)).toEqual([]);
  });

  it("ARCHITECTURE.md's layer table lists the same layers, numbered as here", () => {
    const doc = readFileSync(join(SRC, '..', 'ARCHITECTURE.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)].map((m) => ({
      layer: Number(m[1]),
      units: [...m[2]!.matchAll(/`([^`]+)`/g)].map((u) => u[1]!.replace(/\/$/, '').replace(/\.ts$/, '')),
    }));
    expect(rows).toEqual(LAYERS.map((units, layer) => ({ layer, units: [...units] })));
  });

  it('the check sees an upward import, one across a layer, and a dynamic import', () => {
    const fake = (unit: string, text: string) => ({ path: join(SRC, unit, 'x.ts'), text });
    expect(violations([fake('parser', "import { main } from '../cli/main.js';\n")])).toEqual([{ file: 'parser/x.ts', imports: 'cli/main.js', why: 'cli is above parser' }]);
    expect(violations([fake('trace', "import type { X } from '../diff/state.js';\n")])[0]?.why).toBe('trace and diff are on one layer and may not import each other');
    expect(violations([fake('ir', "const m = await import('../emit/iptables/index.js');\n")])).toHaveLength(1);
    expect(violations([fake('cli', "import { x } from '../parser/load.js';\n")])).toEqual([]);
  });
});

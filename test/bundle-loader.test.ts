/**
 * bin/bundle-loader.js: kpc's bundle loaded with V8's code cache. A cache must never be used
 * for another bundle: V8 itself checks only the source length (shown below), so the loader
 * checks a digest of the bundle. Runs on the built bundle (npm test builds first).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Module from 'node:module';
import { Script } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const dirs: string[] = [];

/** A copy of bin/ and the bundle with its cache, runnable on its own. */
function install(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kpc-loader-'));
  dirs.push(dir);
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  for (const f of ['kpc.cjs', 'kpc.cjs.cache']) cpSync(join(ROOT, 'dist', f), join(dir, 'dist', f));
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

const version = (dir: string) => execFileSync(process.execPath, [join(dir, 'bin', 'kpc.js'), '--version'], { encoding: 'utf8' });

/** Change the bundle's version text, keeping its length. */
function editBundle(dir: string): void {
  const file = join(dir, 'dist', 'kpc.cjs');
  const text = readFileSync(file, 'utf8');
  const edited = text.replace('const KPC_VERSION = "0.', 'const KPC_VERSION = "9.');
  expect(edited).not.toBe(text);
  writeFileSync(file, edited);
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the bundle loader', () => {
  it('V8 alone would take a stale cache for an edited bundle of the same length (why the digest exists)', () => {
    const dir = install();
    editBundle(dir);
    const source = readFileSync(join(dir, 'dist', 'kpc.cjs'), 'utf8');
    const cache = readFileSync(join(dir, 'dist', 'kpc.cjs.cache')).subarray(32);
    const script = new Script(Module.wrap(source), { filename: join(dir, 'dist', 'kpc.cjs'), cachedData: cache });
    expect(script.cachedDataRejected).toBe(false);
  });

  it('runs the edited bundle, not the cached code of the old one', () => {
    const dir = install();
    expect(version(dir)).toMatch(/^kpc 0\./);
    editBundle(dir);
    expect(version(dir)).toMatch(/^kpc 9\./);
  });

  it('runs without a cache, and with a damaged one', () => {
    const dir = install();
    const cacheFile = join(dir, 'dist', 'kpc.cjs.cache');
    const cache = readFileSync(cacheFile);
    // The right digest over garbage: V8 rejects it and compiles.
    const garbled = Buffer.from(cache);
    for (let i = 40; i < Math.min(garbled.length, 4000); i++) garbled[i] = (garbled[i]! * 7 + 3) & 255;
    writeFileSync(cacheFile, garbled);
    expect(version(dir)).toMatch(/^kpc /);
    rmSync(cacheFile);
    expect(version(dir)).toMatch(/^kpc /);
  });
});

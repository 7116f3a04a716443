// Loads kpc's bundle (dist/kpc.cjs, made by `npm run build`; see scripts/bundle.mjs) with V8's
// code cache for it (dist/kpc.cjs.cache, made by the same build).
//
// Why: compiling the 1.1 MB bundle is most of kpc's start (~60 ms of ~130 on top of Node's
// own ~65), paid again on every run. V8 can save what it compiled and take it back instead of
// parsing again; Node 20 offers that only for scripts (vm.Script cachedData), not for ES
// modules, hence a CommonJS bundle loaded by hand. The cache starts with the SHA-256 of the
// bundle it was made from: V8's own check compares only the source length, and a cache from
// another bundle must never be used. A missing, stale or rejected cache just means compiling.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

export const BUNDLE = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'kpc.cjs');
export const CACHE = `${BUNDLE}.cache`;
const DIGEST_BYTES = 32;

function cachedDataFor(digest) {
  let cache;
  try {
    cache = readFileSync(CACHE);
  } catch {
    return undefined;
  }
  if (cache.length <= DIGEST_BYTES || !cache.subarray(0, DIGEST_BYTES).equals(digest)) return undefined;
  return cache.subarray(DIGEST_BYTES);
}

/** The bundle's exports ({ main, timingsJSON }), and `makeCache()` to save the code compiled so far. */
export function loadBundle() {
  const source = readFileSync(BUNDLE, 'utf8');
  const digest = createHash('sha256').update(source).digest();
  const script = new Script(Module.wrap(source), { filename: BUNDLE, cachedData: cachedDataFor(digest) });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE));
  return {
    exports: module.exports,
    makeCache: () => Buffer.concat([digest, script.createCachedData()]),
  };
}

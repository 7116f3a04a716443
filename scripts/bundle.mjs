// Bundle the compiled CLI (dist/src/cli/entry.js) and its runtime dependencies into one
// CommonJS file, dist/kpc.cjs, which bin/kpc.js loads, and make V8's code cache for it.
//
// Why: Node 20 loads ES modules one file at a time. kpc is about 150 modules and zod alone
// about 100 more, and loading them took ~250 ms of every run (`kpc --version` 0.33 s against
// 0.07 s for `node -e 0`); one file loads in ~100 ms, ~60 ms of it compiling, which the code
// cache saves (bin/bundle-loader.js). Not minified: stack traces stay readable. tsc's
// per-file output in dist/src stays as it is: the tests and tools import it.
import { execFileSync } from 'node:child_process';
import { build } from 'rolldown';

await build({
  input: 'dist/src/cli/entry.js',
  platform: 'node',
  logLevel: 'warn',
  output: { file: 'dist/kpc.cjs', format: 'cjs' },
});
// In a fresh process, so that the cache holds what a run compiles (see code-cache.mjs).
execFileSync(process.execPath, ['scripts/code-cache.mjs'], { stdio: 'inherit' });

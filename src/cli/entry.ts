/**
 * What bin/kpc.js and the benchmark child load: kpc's `main`, and the stage timers that
 * belong to it. `npm run build` bundles this module with its dependencies into dist/kpc.cjs
 * (scripts/bundle.mjs says why), which bin/bundle-loader.js loads.
 */

export { main } from './main.js';
export { timingsJSON } from './stage-timer.js';
export { handleSignalsDuringWrites } from './write/signals.js';

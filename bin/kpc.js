#!/usr/bin/env node
// Entry point: the CLI bundled into one file by `npm run build` (the prepare script runs it on
// `npm ci`; see scripts/bundle.mjs), loaded with its code cache (bin/bundle-loader.js).
import { loadBundle } from './bundle-loader.js';

const { main, handleSignalsDuringWrites } = loadBundle().exports;
// SIGINT/SIGTERM/SIGHUP while -o is written: the write ends (committed or rolled back), then
// kpc dies of the signal, never leaving a temporary file (src/cli/write/signals.ts).
handleSignalsDuringWrites();
process.exitCode = await main(process.argv.slice(2));
// A signal held during a write is acted on in the event loop's poll phase: the first immediate
// may run in the turn now under way, the second runs only after a poll.
await new Promise((resolve) => setImmediate(resolve));
await new Promise((resolve) => setImmediate(resolve));

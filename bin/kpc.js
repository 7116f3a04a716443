#!/usr/bin/env node
// Entry point: the CLI bundled into one file by `npm run build` (the prepare script runs it on
// `npm ci`; see scripts/bundle.mjs), loaded with its code cache (bin/bundle-loader.js).
import { loadBundle } from './bundle-loader.js';

const { main } = loadBundle().exports;
process.exitCode = await main(process.argv.slice(2));

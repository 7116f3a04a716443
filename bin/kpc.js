#!/usr/bin/env node
// Entry point: the CLI bundled into one file by `npm run build` (the prepare script runs it on
// `npm ci`; see scripts/bundle.mjs).
import { main } from '../dist/kpc.mjs';

process.exitCode = await main(process.argv.slice(2));

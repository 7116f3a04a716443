// Write dist/kpc.cjs.cache: load the bundle, compile the shipped example once in-process (so
// the functions a compile needs are compiled too, not only the top level), then save V8's
// code for it (bin/bundle-loader.js says why and how it is checked).
import { renameSync, writeFileSync } from 'node:fs';
import { CACHE, loadBundle } from '../bin/bundle-loader.js';

const bundle = loadBundle();
const quiet = { stdout: () => {}, stderr: () => {}, stderrIsTTY: false, stdoutIsTTY: false, readStdin: () => new Uint8Array() };
const code = await bundle.exports.main(['compile', '-f', 'fixtures/examples/quickstart/', '--cluster-cidr', '10.244.0.0/16'], quiet);
if (code !== 0) throw new Error(`warm-up compile exited ${code}`);
// Written whole, then renamed: a half-written cache must never sit under the real name.
writeFileSync(`${CACHE}.tmp`, bundle.makeCache());
renameSync(`${CACHE}.tmp`, CACHE);

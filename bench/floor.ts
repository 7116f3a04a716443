/**
 * The floor a compile is compared with: the least any tool must do to turn this input into
 * this much output in Node.
 *
 *   node dist/bench/floor.js --input FILE... [--json FILE] --write-bytes N --output FILE
 *
 * 1. read: the input files' bytes (readFileSync), as kpc reads them;
 * 2. parse: JSON.parse of the cluster as JSON (`--json`, default the input itself; for a YAML
 *    input the harness passes the JSON rendering of the same cluster, read beforehand and not
 *    timed, so the floor is the same data volume in its cheapest form). A text too long for one
 *    JavaScript string (~512 MiB, the 100,000-Service JSON) is cut at the top-level `items`
 *    boundaries by one byte scan and each item parsed on its own, which is the least any
 *    Node program can do there;
 * 3. write: N bytes (the size of kpc's output) to a temporary file in the output's directory,
 *    fsync, rename, as kpc's `-o` does (src/cli/io.ts writeFileAtomic).
 *
 * Prints one line on stderr: `floor-bench-result: {"readMs":..,"parseMs":..,"writeMs":..,"maxRssKB":..,"items":..}`.
 */

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

/** V8's longest string is 2^29 - 24 UTF-16 units; stay clear of it. */
const MAX_STRING = (1 << 29) - 1024;

/** Byte ranges of the elements of the top-level `"items": [...]` array (strings and escapes honoured). */
export function itemRanges(buf: Uint8Array): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let depth = 0;
  let inItems = false;
  let start = -1;
  let lastKey = '';
  let keyStart = -1;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (b === 0x22) {
      const s = i;
      i++;
      while (i < buf.length && buf[i] !== 0x22) i += buf[i] === 0x5c ? 2 : 1;
      if (depth === 1) {
        keyStart = s;
        lastKey = Buffer.from(buf.subarray(s + 1, i)).toString('utf8');
      }
      if (inItems && depth === 2 && start < 0) start = s;
      continue;
    }
    if (b === 0x7b || b === 0x5b) {
      if (depth === 1 && b === 0x5b && lastKey === 'items' && keyStart >= 0) inItems = true;
      else if (inItems && depth === 2 && start < 0) start = i;
      depth++;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
      if (inItems && depth === 2 && start >= 0) {
        ranges.push([start, i + 1]);
        start = -1;
      }
      if (inItems && depth === 1) inItems = false;
    }
  }
  return ranges;
}

function parseJSON(buf: Buffer): number {
  if (buf.length < MAX_STRING) {
    const doc = JSON.parse(buf.toString('utf8')) as { items?: unknown[] };
    return doc.items?.length ?? 0;
  }
  let n = 0;
  for (const [a, b] of itemRanges(buf)) {
    JSON.parse(buf.toString('utf8', a, b));
    n++;
  }
  return n;
}

function writeBytes(path: string, n: number): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.floor.tmp`);
  const chunk = Buffer.alloc(1 << 20, '-A KUBE-SVC-XXXXXXXXXXXXXXXX -j KUBE-SEP-YYYYYYYYYYYYYYYY\n');
  const fd = openSync(tmp, 'w', 0o644);
  try {
    let left = n;
    while (left > 0) {
      const len = Math.min(left, chunk.length);
      let off = 0;
      while (off < len) off += writeSync(fd, chunk, off, len - off);
      left -= len;
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function main(argv: string[]): void {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  // --input may repeat (a YAML cluster split into several files, as kpc reads it).
  const inputs = argv.flatMap((a, i) => (a === '--input' && argv[i + 1] !== undefined ? [argv[i + 1]!] : []));
  const output = arg('output');
  const bytes = Number(arg('write-bytes') ?? '0');
  if (inputs.length === 0 || !output) throw new Error('usage: floor.js --input FILE... [--json FILE] --write-bytes N --output FILE');
  const jsonPath = arg('json');
  // For a YAML input: the JSON text of the same cluster, read before the clock starts.
  const jsonBytes = jsonPath === undefined || (inputs.length === 1 && jsonPath === inputs[0]) ? undefined : readFileSync(jsonPath);
  const t0 = performance.now();
  const raw = inputs.map((f) => readFileSync(f));
  const t1 = performance.now();
  const items = parseJSON(jsonBytes ?? raw[0]!);
  const t2 = performance.now();
  writeBytes(output, bytes);
  const t3 = performance.now();
  const result = { readMs: t1 - t0, parseMs: t2 - t1, writeMs: t3 - t2, items, maxRssKB: process.resourceUsage().maxRSS };
  writeSync(2, `floor-bench-result: ${JSON.stringify(result)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));

// Reads manifests (files or directories of .yaml/.yml/.json, YAML streams, kind: List) and
// prints one `kind: List` JSON: the oracle's input form.
//   node test/oracle/runner/to-list.mjs PATH... > list.json
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export function manifestFiles(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).sort().flatMap((n) => {
    const p = join(path, n);
    if (statSync(p).isDirectory()) return manifestFiles(p);
    return /\.(ya?ml|json)$/.test(n) ? [p] : [];
  });
}

export function readObjects(paths) {
  const items = [];
  for (const f of paths.flatMap(manifestFiles)) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
      const v = doc.toJS();
      if (v === null || v === undefined) continue;
      if (v.kind === 'List' || (typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items))) items.push(...v.items);
      else items.push(v);
    }
  }
  return items;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: readObjects(process.argv.slice(2)) }) + '\n');
}

// Build the CoreDNS of this folder (main.go: the kubernetes plugin only, CoreDNS as go.mod pins
// it) into a cache keyed by the sources, or find it there. Used by test/dns/coredns.test.ts and
// run by .ci/run before the tests (`node test/dns/coredns/build.mjs` prints the binary's path).

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

function findGo() {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/local/go/bin', '/usr/lib/go/bin']) {
    const p = join(dir, 'go');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

/** @returns {{ path?: string, why?: string }} */
export function buildCoreDNS() {
  const hash = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(HERE, f)));
  const key = hash.digest('hex').slice(0, 16);
  const root = process.getuid?.() === 0 ? '/var/cache/kpc-coredns' : join(tmpdir(), 'kpc-coredns-cache');
  const path = join(root, key, 'coredns');
  if (existsSync(path)) return { path };
  const go = findGo();
  if (!go) return { why: 'go is not installed (the CoreDNS oracle is built from the Go module proxy)' };
  mkdirSync(join(root, key), { recursive: true });
  const out = `${path}.${process.pid}.tmp`;
  const r = spawnSync(go, ['build', '-trimpath', '-o', out, '.'], { cwd: HERE, encoding: 'utf8', timeout: 20 * 60_000, env: { ...process.env, GOFLAGS: '-mod=readonly -buildvcs=false' } });
  if (r.status !== 0) return { why: `go build of CoreDNS failed: ${(r.stderr || r.error?.message || '').slice(-2000)}` };
  renameSync(out, path);
  return { path };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = buildCoreDNS();
  if (!r.path) {
    console.error(r.why);
    process.exit(1);
  }
  console.log(r.path);
}

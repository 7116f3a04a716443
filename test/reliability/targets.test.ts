/**
 * What an -o path names decides how kpc writes it (src/cli/write/file.ts, bundle.ts), and what
 * it refuses: never a rename over a device, a FIFO or a link to kpc's own stdout; never a
 * directory kpc did not write replaced or deleted.
 *
 *   iptables -o   a character device (a mknod'd /dev/null, and /dev/null itself, in a mount
 *                 namespace whose /dev is a tmpfs), a FIFO (read by a reader), /dev/stdout and a
 *                 link to /proc/self/fd/1 (stdout a pipe, and a file the parent opened), a link
 *                 to a regular file, a dangling link: written, the node or link left as it is;
 *                 a block device, a socket, a directory, a link loop: refused, exit 2
 *   ipvs -o       an unrelated directory, a node's hand-captured state, a kpc bundle holding a
 *                 file kpc did not write, a regular file, a FIFO, /dev/stdout: refused, exit 2,
 *                 untouched; an empty directory, an older kpc's bundle, a link to a kpc bundle,
 *                 a link to an older bundle elsewhere: replaced
 *   readers       --previous DIR and check --golden DIR read kpc's link layout and a real
 *                 directory without a marker alike
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, cpSync, createReadStream, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contentOf, describeContent, describeFaults, inPrivateDev, kpc, kpcWords, leftovers, oneLineError, plantSentinels, printFigures, record, sameContent, surroundings, sweepStaleMounts, tree, Workdir, type Content } from './harness.js';
import { prepareInputs, type Inputs, type WritePath } from './paths.js';

describeFaults('-o targets that are not a plain file or a kpc bundle', () => {
  let work: Workdir;
  let inputs: Inputs;
  let fileP: WritePath;
  let dirP: WritePath;
  let expected: Buffer;

  beforeAll(async () => {
    sweepStaleMounts();
    work = new Workdir('targets');
    inputs = await prepareInputs(work, 30);
    fileP = inputs.paths.find((p) => p.name === 'iptables file')!;
    dirP = inputs.paths.find((p) => p.name === 'ipvs bundle')!;
    const r = await kpc(fileP.args(inputs.new));
    expect(r.code).toBe(0);
    expected = r.stdout;
  }, 120_000);
  afterAll(() => {
    work?.cleanup();
    printFigures('targets figures:');
  });

  function sha(b: Buffer): Content {
    return { kind: 'file', sha: createHash('sha256').update(b).digest('hex'), size: b.length };
  }

  function refused(r: { code: number | null; stderr: string }, what: RegExp): void {
    expect(r.code, r.stderr).toBe(2);
    expect(oneLineError(r.stderr)).toMatch(what);
  }

  it('a character device is written to, never replaced (a mknod\'d null, and /dev/null as root)', { timeout: 60_000 }, async () => {
    const d = work.dir('chardev');
    const node = join(d, 'null');
    spawnSync('mknod', ['-m', '666', node, 'c', '1', '3']);
    const before = statSync(node);
    const r = await kpc([...fileP.args(inputs.new), '-o', node]);
    expect(r.code, r.stderr).toBe(0);
    const after = lstatSync(node);
    expect(after.isCharacterDevice()).toBe(true);
    expect([after.ino, after.rdev]).toEqual([before.ino, before.rdev]);
    expect(readdirSync(d)).toEqual(['null']);
    // /dev/null itself, in a mount namespace whose /dev is a tmpfs (harness.ts inPrivateDev).
    const ns = inPrivateDev(
      [
        'ino=$(stat -c %i /dev/null)',
        `${kpcWords([...fileP.args(inputs.new), '-o', '/dev/null'])} || exit $?`,
        'test "$(stat -c %F:%t:%T:%i /dev/null)" = "character special file:1:3:$ino" || exit 91',
        'test "$(ls -A /dev | tr "\\n" " ")" = "fd null stderr stdin stdout " || exit 92',
      ].join('\n'),
    );
    expect(ns.status, ns.stderr).toBe(0);
  });

  it('a FIFO is opened and written; a reader that leaves early is an error, exit 2', { timeout: 60_000 }, async () => {
    const d = work.dir('fifo');
    const fifo = join(d, 'pipe');
    spawnSync('mkfifo', [fifo]);
    const got: Buffer[] = [];
    const reading = new Promise<void>((resolve) => createReadStream(fifo).on('data', (c) => got.push(c as Buffer)).on('end', () => resolve()));
    const r = await kpc([...fileP.args(inputs.new), '-o', fifo]);
    await reading;
    expect(r.code, r.stderr).toBe(0);
    expect(Buffer.concat(got).equals(expected)).toBe(true);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(d)).toEqual(['pipe']);
    // A reader that takes one chunk and goes.
    const early = new Promise<void>((resolve) => {
      const s = createReadStream(fifo, { highWaterMark: 1024 });
      s.once('data', () => {
        s.destroy();
        resolve();
      });
    });
    const big = await kpc([...fileP.args(inputs.new), '-o', fifo]);
    await early;
    refused(big, /cannot write .*pipe: EPIPE \(the reader closed it\); what was written to .* is incomplete$/);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it('/dev/stdout and a link to /proc/self/fd/1 write to kpc\'s stdout: a pipe, or the file the parent opened', { timeout: 60_000 }, async () => {
    // In a private /dev (inPrivateDev): a kpc that renamed over /dev/stdout would replace the
    // namespace's link only.
    const d = work.dir('stdout');
    const link = join(d, 'so');
    symlinkSync('/proc/self/fd/1', link);
    const intact = 'test -L /dev/stdout && test "$(readlink /dev/stdout)" = /proc/self/fd/1 && test -L /dev/fd || exit 93';
    for (const target of ['/dev/stdout', link, '/dev/fd/1', '/proc/self/fd/1']) {
      const ns = inPrivateDev(`${kpcWords([...fileP.args(inputs.new), '-o', target])} || exit $?\n${intact}`);
      expect(ns.status, `${target}: ${ns.stderr}`).toBe(0);
      expect(ns.stdout.equals(expected), target).toBe(true);
    }
    expect(readlinkSync(link)).toBe('/proc/self/fd/1');
    // stdout a regular file opened by the parent (`> file`): the same file gets the bytes.
    const file = join(d, 'out.txt');
    writeFileSync(file, '');
    const ino = statSync(file).ino;
    const ns = inPrivateDev(`${kpcWords([...fileP.args(inputs.new), '-o', '/dev/stdout'])} > '${file}' || exit $?\n${intact}`);
    expect(ns.status, ns.stderr).toBe(0);
    expect(statSync(file).ino).toBe(ino);
    expect(readFileSync(file).equals(expected)).toBe(true);
    expect(readdirSync(d).sort()).toEqual(['out.txt', 'so']);
    // ipvs mode refuses all of them (a bundle is a directory), leaving them as they are.
    for (const target of ['/dev/stdout', link]) {
      const refusal = inPrivateDev(`${kpcWords([...dirP.args(inputs.new), '-o', target])}; rc=$?\n${intact}\nexit $rc`);
      expect(refusal.status, refusal.stderr).toBe(2);
      expect(oneLineError(refusal.stderr)).toMatch(/is kpc's own file descriptor 1; ipvs mode writes a bundle directory/);
    }
    expect(readlinkSync(link)).toBe('/proc/self/fd/1');
  });

  it('a link to a regular file: the file is replaced atomically at its own name, the link stays', { timeout: 60_000 }, async () => {
    const d = work.dir('links');
    plantSentinels(d, 'real.txt');
    writeFileSync(join(d, 'real.txt'), 'old\n');
    symlinkSync('real.txt', join(d, 'link'));
    symlinkSync('missing.txt', join(d, 'dangling'));
    symlinkSync('loop-b', join(d, 'loop-a'));
    symlinkSync('loop-a', join(d, 'loop-b'));
    const around = surroundings(d, 'real.txt');
    const oldIno = statSync(join(d, 'real.txt')).ino;
    let r = await kpc([...fileP.args(inputs.new), '-o', join(d, 'link')]);
    expect(r.code, r.stderr).toBe(0);
    expect(readlinkSync(join(d, 'link'))).toBe('real.txt');
    expect(sameContent(contentOf(join(d, 'real.txt')), sha(expected))).toBe(true);
    expect(statSync(join(d, 'real.txt')).ino).not.toBe(oldIno); // a new file renamed in, not rewritten in place
    expect(leftovers(d, 'real.txt')).toEqual([]);
    r = await kpc([...fileP.args(inputs.new), '-o', join(d, 'dangling')]);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(d, 'dangling')).isSymbolicLink()).toBe(true);
    expect(sameContent(contentOf(join(d, 'missing.txt')), sha(expected))).toBe(true);
    r = await kpc([...fileP.args(inputs.new), '-o', join(d, 'loop-a')]);
    refused(r, /ELOOP/);
    const now = surroundings(d, 'real.txt');
    delete now['missing.txt'];
    expect(now).toEqual(around);
  });

  it('iptables -o refuses a block device, a socket and a directory, and leaves them', { timeout: 60_000 }, async () => {
    const d = work.dir('refuse');
    spawnSync('mknod', [join(d, 'blk'), 'b', '7', '200']); // a loop-device node no one uses: never opened
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(d, 'sock'), resolve));
    mkdirSync(join(d, 'dir'));
    writeFileSync(join(d, 'dir', 'keep'), 'x');
    const before = tree(d);
    refused(await kpc([...fileP.args(inputs.new), '-o', join(d, 'blk')]), /blk is a block device; kpc writes only to a regular file/);
    refused(await kpc([...fileP.args(inputs.new), '-o', join(d, 'sock')]), /sock is a socket/);
    refused(await kpc([...fileP.args(inputs.new), '-o', join(d, 'dir')]), /dir is a directory; iptables mode writes one file/);
    expect(tree(d)).toEqual(before);
    server.close(); // (which removes the socket)
  });

  it('ipvs -o refuses what kpc did not write, and leaves it whole', { timeout: 90_000 }, async () => {
    const d = work.dir('ipvs-refuse');
    plantSentinels(d, 'out');
    // An unrelated directory tree.
    const victim = join(d, 'victim');
    // A node's hand-captured state: the four parts, no apply.sh, no marker.
    const captured = join(d, 'captured');
    const made = join(work.dir('made'), 'b');
    expect((await kpc([...dirP.args(inputs.old), '-o', made])).code).toBe(0);
    mkdirSync(captured);
    for (const f of ['ipvs.rules', 'ipset.rules', 'iptables.rules', 'kube-ipvs0.addrs']) cpSync(join(made, f), join(captured, f));
    // A kpc bundle the operator added a file to.
    const added = join(d, 'added');
    expect((await kpc([...dirP.args(inputs.old), '-o', added])).code).toBe(0);
    writeFileSync(join(added, 'NOTES'), 'mine\n');
    // An older kpc's bundle with one more file, a regular file, a FIFO.
    const olderPlus = join(d, 'older-plus');
    mkdirSync(olderPlus);
    for (const f of readdirSync(made)) if (f !== '.kpc-bundle') cpSync(join(made, f), join(olderPlus, f));
    writeFileSync(join(olderPlus, 'extra'), 'x');
    writeFileSync(join(d, 'plain'), 'x');
    spawnSync('mkfifo', [join(d, 'fifo')]);
    const before = tree(d);
    const cases: [string, RegExp][] = [
      [victim, /victim is a directory kpc did not write \(it has no \.kpc-bundle manifest\)/],
      [captured, /captured is a directory kpc did not write/],
      [added, /holds an entry kpc did not write \(NOTES\); kpc does not delete them/],
      [olderPlus, /older-plus is a directory kpc did not write/],
      [join(d, 'plain'), /plain is a regular file; ipvs mode writes a bundle directory/],
      [join(d, 'fifo'), /fifo is a FIFO; ipvs mode writes a bundle directory/],
    ];
    for (const [target, message] of cases) refused(await kpc([...dirP.args(inputs.new), '-o', target]), message);
    expect(tree(d)).toEqual(before);
    // The readers take the hand-captured directory and kpc's link layout alike.
    for (const previous of [captured, made]) {
      const r = await kpc([...dirP.args(inputs.new), '--previous', previous]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.toString()).toContain('kpc-bundle: delta');
    }
    const check = await kpc(['check', '-f', inputs.old, ...dirP.args(inputs.old).slice(3), '--golden', made]);
    expect(check.code, check.stderr + check.stdout.toString()).toBe(0);
    const checkCaptured = await kpc(['check', '-f', inputs.old, ...dirP.args(inputs.old).slice(3), '--golden', captured]);
    expect(checkCaptured.code, checkCaptured.stderr).toBe(1); // apply.sh is missing there: reported, compared as empty
    expect(checkCaptured.stderr).toContain('apply.sh is missing');
    record(`ipvs -o: ${cases.length} kinds of target refused with exit 2, each left byte for byte as it was`);
  });

  it('ipvs -o replaces an empty directory, an older kpc\'s bundle, and bundles reached through links', { timeout: 90_000 }, async () => {
    const d = work.dir('ipvs-replace');
    plantSentinels(d, 'out');
    const fresh = await inputs.reference(dirP, inputs.new);
    const made = join(work.dir('made'), 'b');
    expect((await kpc([...dirP.args(inputs.old), '-o', made])).code).toBe(0);
    const around = surroundings(d, 'out');
    const target = join(d, 'out');
    for (const start of ['empty', 'older kpc']) {
      mkdirSync(target);
      if (start === 'older kpc') for (const f of readdirSync(made)) if (f !== '.kpc-bundle') cpSync(join(made, f), join(target, f));
      const r = await kpc([...dirP.args(inputs.new), '-o', target]);
      expect(r.code, r.stderr).toBe(0);
      expect(lstatSync(target).isSymbolicLink()).toBe(true);
      expect(sameContent(contentOf(target), fresh), `${start}: ${describeContent(contentOf(target))}`).toBe(true);
      expect(leftovers(d, 'out')).toEqual([]);
      expect(surroundings(d, 'out')).toEqual(around);
      spawnSync('rm', ['-rf', join(d, readlinkSync(target)), target]);
    }
    // A link of the operator's to kpc's bundle link: the bundle is replaced where it is.
    const elsewhere = work.dir('elsewhere');
    const real = join(elsewhere, 'bundle');
    expect((await kpc([...dirP.args(inputs.old), '-o', real])).code).toBe(0);
    symlinkSync(real, join(d, 'mine'));
    let r = await kpc([...dirP.args(inputs.new), '-o', join(d, 'mine')]);
    expect(r.code, r.stderr).toBe(0);
    expect(readlinkSync(join(d, 'mine'))).toBe(real);
    expect(sameContent(contentOf(real), fresh)).toBe(true);
    expect(leftovers(elsewhere, 'bundle')).toEqual([]);
    // A link to an older kpc's real directory elsewhere: migrated where it is.
    const olderDir = join(elsewhere, 'older');
    mkdirSync(olderDir);
    for (const f of readdirSync(made)) if (f !== '.kpc-bundle') cpSync(join(made, f), join(olderDir, f));
    symlinkSync(olderDir, join(d, 'mine-older'));
    r = await kpc([...dirP.args(inputs.new), '-o', `${join(d, 'mine-older')}/`]);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(d, 'mine-older')).isSymbolicLink()).toBe(true);
    expect(lstatSync(olderDir).isSymbolicLink()).toBe(true);
    expect(sameContent(contentOf(olderDir), fresh)).toBe(true);
    // The bundle's apply.sh finds its files through the link.
    expect(readFileSync(join(d, 'mine', 'apply.sh'), 'utf8')).toContain('dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)');
  });
});

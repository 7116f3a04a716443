/**
 * `-o DIR` in ipvs mode: the bundle directory, replaced as a whole.
 *
 * Layout. DIR is a symbolic link to a hidden sibling directory that holds the files:
 *
 *     out -> .out.4242.1f2e3d4c.d/      apply.sh ipset.rules iptables.rules ipvs.rules
 *                                       kube-ipvs0.addrs .kpc-bundle
 *
 * `.kpc-bundle` (the manifest) marks the directory as kpc's and names every file in it; it is
 * written last, after every file is complete and synced. Anything reading DIR (`--previous
 * DIR`, `--golden DIR`, `sh DIR/apply.sh`, cat, ls) goes through the link without noticing it.
 *
 * Replacing. A new directory `.out.PID.HEX.d` is written completely (every file every byte,
 * fsync of each file, the manifest, fsync of the directory), a link `.out.PID.HEX.lnk` to it is
 * made, and that link is renamed over DIR: one rename(2), which the kernel makes atomic, so
 * DIR names the old complete bundle until that instant and the new complete bundle after it,
 * never anything else (the parent directory is then synced). The previous directory is removed
 * afterwards. A failure before the rename removes what this run made and leaves DIR as it was.
 *
 * What is replaced. Only what kpc wrote:
 *   - nothing at DIR;
 *   - DIR a link `.DIR.PID.HEX.d` made by kpc, whose directory holds only the files its
 *     manifest names (or is gone);
 *   - a real directory that is empty, or holds only the files its manifest names, or is an
 *     older kpc's bundle (exactly the five bundle files, regular, apply.sh kpc's script): these
 *     are migrated to the layout above (below);
 * and nothing else: a directory without the marker (a node's hand-captured state, anything
 * unrelated), a kpc directory holding files kpc did not write, a regular file, a device, a FIFO
 * are refused with exit 2 and left untouched. Removal deletes only the files the manifest names
 * (and the bundle's own file names), then the empty directory: an unexpected entry is never
 * deleted, and keeps its directory. A link DIR that is not kpc's is followed, and the bundle is
 * written where it points.
 *
 * Migration (once per DIR): a real directory cannot be replaced by a link atomically
 * (rename(2) refuses a non-directory over a directory, and RENAME_EXCHANGE is not reachable
 * from Node without a native addon). So: the new directory and its link are made first, then
 * DIR is renamed aside to `.DIR.PID.HEX.old` and the link renamed to DIR. Between those two
 * renames DIR does not exist (microseconds). If the second rename fails, the old directory is
 * renamed back. If kpc is killed between them, the next kpc write to DIR renames the `.old`
 * directory back before anything else (a reader meanwhile finds no DIR, never a partial one).
 *
 * Leftovers. Every temporary name carries the writer's pid. A write first sweeps the entries of
 * DIR's earlier writers that are gone (SIGKILL, crash): their unfinished directories and links,
 * directories no longer linked, `.old` directories whose DIR exists. A live writer's entries are
 * left to it. Concurrent writers each rename their own link over DIR: the last rename wins, and
 * each writer removes its own directory if it is no longer the one linked (a loser that exits
 * just as the winner sweeps may leave its directory to the next write's sweep). Writers in other
 * pid namespaces sharing the file system are not told apart and must not write the same DIR.
 */

import { closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, statSync, symlinkSync, unlinkSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { KpcError } from '../../errors.js';
import { failingAs, WriteFailure } from './errors.js';
import { fsyncDirectory, newTag, processAlive, releaseScratch, tempName, tempPattern, writeAll } from './low.js';
import { deferSignalsWhileWriting } from './signals.js';
import { resolveTarget } from './target.js';
import { named } from './file.js';

/** A write refused or failed: the user's to fix (a path, a full disk), exit 2. */
const outputError = (message: string) => new KpcError('usage', 'output.write', message);

export interface DirectoryFile {
  name: string;
  content: string;
  mode: number;
}

/** The marker and list of contents of a bundle directory kpc wrote. */
export const MANIFEST = '.kpc-bundle';

export interface BundleOptions {
  /** Written into the manifest: a full state, a delta (--previous), or DNS zone files (kpc dns). */
  kind: 'full' | 'delta' | 'zones';
  /** How an older kpc's bundle (written without a manifest) is recognised: one of its files starts so. */
  legacy?: { file: string; prefix: string };
}

const MANIFEST_HEAD = /^kpc-bundle 1 (full|delta|zones)$/;

export function renderManifest(files: readonly DirectoryFile[], kind: BundleOptions['kind']): string {
  const lines = [
    `kpc-bundle 1 ${kind}`,
    '# Written by kpc -o: the files below, each with its size in bytes. kpc replaces this directory',
    '# on its next -o to the same path only while it holds just these files.',
    ...[...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((f) => `${f.name} ${Buffer.byteLength(f.content, 'utf8')}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** The file names a manifest lists, or undefined when `text` is not a manifest. */
export function parseManifest(text: string): string[] | undefined {
  const lines = text.split('\n');
  if (!MANIFEST_HEAD.test(lines[0] ?? '')) return undefined;
  const names: string[] = [];
  for (const line of lines.slice(1)) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([^\s/]+) (\d+)$/.exec(line);
    if (!m || m[1] === '.' || m[1] === '..' || m[1] === MANIFEST) return undefined;
    names.push(m[1]!);
  }
  return names;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A link `NAME -> .NAME.PID.HEX.d`: the form kpc gives DIR. */
function isOwnLink(name: string, link: string): boolean {
  return new RegExp(`^\\.${escapeRegExp(name)}\\.\\d+\\.[0-9a-f]{8}\\.d$`).test(link);
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (e) {
    if (code(e) === 'ENOENT') return undefined;
    throw e;
  }
}

function readlinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function manifestNames(dir: string): string[] | undefined {
  try {
    const path = join(dir, MANIFEST);
    if (!lstatSync(path).isFile()) return undefined;
    return parseManifest(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

type Verdict = { ok: true } | { ok: false; reason: string };

/**
 * May the directory `dir` be replaced (`shown`: its name in a refusal)? `ownTarget`: it is the
 * directory DIR's kpc link points to (the link is the mark, the manifest lists its files).
 * `names`: the files this write makes.
 */
function replaceable(dir: string, shown: string, names: readonly string[], options: BundleOptions, ownTarget: boolean): Verdict {
  const entries = readdirSync(dir, { withFileTypes: true });
  if (entries.length === 0) return { ok: true };
  const listed = manifestNames(dir);
  const allowed = new Set(listed ?? (ownTarget ? names : []));
  if (listed !== undefined || ownTarget) {
    const extra = entries.filter((e) => e.name !== MANIFEST && !(allowed.has(e.name) && e.isFile())).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    if (extra.length === 0) return { ok: true };
    return { ok: false, reason: `${shown} holds ${extra.length === 1 ? 'an entry' : 'entries'} kpc did not write (${preview(extra)}); kpc does not delete them: move them out, or choose another path` };
  }
  const legacy = options.legacy;
  if (legacy !== undefined && entries.length === names.length && entries.every((e) => e.isFile() && names.includes(e.name)) && names.includes(legacy.file)) {
    let head = '';
    try {
      head = readFileSync(join(dir, legacy.file), 'utf8').slice(0, legacy.prefix.length);
    } catch (e) {
      if (code(e) === 'ENOENT') throw e; // moved away since it was listed: DIR changed, look again
      // unreadable: not recognised
    }
    if (head === legacy.prefix) return { ok: true };
  }
  return {
    ok: false,
    reason: `${shown} is a directory kpc did not write (it has no ${MANIFEST} manifest); kpc replaces only its own bundle directories: choose another path, or remove it first`,
  };
}

function preview(names: string[]): string {
  const sorted = [...names].sort();
  return sorted.length <= 5 ? sorted.join(', ') : `${sorted.slice(0, 5).join(', ')}, and ${sorted.length - 5} more`;
}

/**
 * Remove a bundle directory kpc made (or a link to one): the files its manifest names and the
 * files this write makes (`names`, the only ones an unfinished or older kpc directory holds),
 * then the directory if that emptied it. Anything else in it stays, and so does the directory.
 */
function removeBundleDir(path: string, names: readonly string[]): void {
  try {
    const st = lstatOrUndefined(path);
    if (st === undefined) return;
    if (st.isSymbolicLink()) {
      unlinkSync(path);
      return;
    }
    if (!st.isDirectory()) return;
    const known = new Set([...(manifestNames(path) ?? []), ...names]);
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      // The manifest goes last: a directory interrupted here is still recognised as kpc's.
      if (entry.isFile() && known.has(entry.name) && entry.name !== MANIFEST) unlinkSync(join(path, entry.name));
    }
    if (lstatOrUndefined(join(path, MANIFEST))?.isFile()) {
      if (readdirSync(path).length === 1) unlinkSync(join(path, MANIFEST));
    }
    rmdirSync(path);
  } catch {
    // ENOTEMPTY (something kpc did not write is in it), or gone already: left as it is
  }
}

/** A run killed between the two renames of a migration left DIR missing: put the old one back. */
function recoverMissing(parent: string, name: string): void {
  if (lstatOrUndefined(join(parent, name)) !== undefined) return;
  const pattern = tempPattern(name);
  const aside = readdirSync(parent)
    .map((entry) => ({ entry, m: pattern.exec(entry) }))
    .filter(({ m }) => m !== null && m[2] === 'old' && !processAlive(Number(m[1])))
    .map(({ entry }) => ({ entry, mtime: Number(lstatOrUndefined(join(parent, entry))?.mtimeMs ?? -1) }))
    .filter(({ mtime }) => mtime >= 0)
    .sort((a, b) => b.mtime - a.mtime);
  for (const { entry } of aside) {
    try {
      renameSync(join(parent, entry), join(parent, name));
      return;
    } catch {
      // DIR exists again (another writer), or this one is gone: try the next
    }
  }
}

/** Remove the leftovers of DIR's earlier writers that are gone (see the file comment). */
function sweepStale(parent: string, name: string, names: readonly string[]): void {
  const pattern = tempPattern(name);
  for (const entry of readdirSync(parent)) {
    const m = pattern.exec(entry);
    if (!m || processAlive(Number(m[1]))) continue;
    const path = join(parent, entry);
    const st = lstatOrUndefined(path);
    if (st === undefined) continue;
    switch (m[2]) {
      case 'lnk':
        if (st.isSymbolicLink()) unlinkQuietly(path);
        break;
      case 'tmp':
        // an -o FILE temporary file, or an older kpc's unfinished bundle directory
        if (st.isFile()) unlinkQuietly(path);
        else removeBundleDir(path, names);
        break;
      case 'd':
        // Read DIR's link only now, after the owner is known dead: a dead process renames
        // nothing, so a directory not linked now never will be.
        if (readlinkOrUndefined(join(parent, name)) !== entry) removeBundleDir(path, names);
        break;
      case 'old':
        if (lstatOrUndefined(join(parent, name)) !== undefined) removeBundleDir(path, names);
        break;
    }
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

type State = { mode: 'fresh' } | { mode: 'flip'; old: string } | { mode: 'migrate' };

/**
 * What DIR is now, and how it is replaced; a usage error when it must not be. Another writer
 * may be replacing DIR or removing its previous directory meanwhile: a part that vanishes
 * while it is looked at (ENOENT), or a refusal of something DIR no longer names, means DIR
 * changed, and it is looked at again.
 */
export function inspect(display: string, parent: string, name: string, names: readonly string[], options: BundleOptions): State {
  for (let attempt = 0; ; attempt++) {
    try {
      return inspectOnce(display, parent, name, names, options);
    } catch (e) {
      const changed = e instanceof LookAgain || CHANGED.has(code(e) ?? '');
      if (!changed || attempt >= LOOKS) throw e instanceof LookAgain ? e.refusal : e;
    }
  }
}

/**
 * What a look gets when DIR changes under it: a part gone (ENOENT), a directory that became a
 * link (ELOOP, opened without following) or a file (ENOTDIR), a link that became a directory
 * (EINVAL, from readlink).
 */
const CHANGED = new Set(['ENOENT', 'ELOOP', 'ENOTDIR', 'EINVAL']);

/**
 * How many times DIR is looked at again when it changes. Each concurrent writer changes it at
 * most three times (aside, link, back on a failure); a look takes tens of microseconds, so a
 * look that keeps losing is another program replacing DIR in a loop, reported as a failure.
 */
const LOOKS = 64;

/** A refusal of what DIR named a moment ago, but names no longer: reported only if it persists. */
class LookAgain extends Error {
  constructor(readonly refusal: KpcError) {
    super(refusal.message);
  }
}

/** Refuse `reason` unless DIR changed since `before` was taken of it (then look again). */
function refuse(display: string, path: string, before: { dev: number; ino: number; link?: string }, reason: string): never {
  const error = outputError(`-o ${display}: ${reason}`);
  const now = lstatOrUndefined(path);
  const same = now !== undefined && now.dev === before.dev && now.ino === before.ino && (before.link === undefined || readlinkOrUndefined(path) === before.link);
  throw same ? error : new LookAgain(error);
}

function inspectOnce(display: string, parent: string, name: string, names: readonly string[], options: BundleOptions): State {
  const path = join(parent, name);
  const st = lstatOrUndefined(path);
  if (st === undefined) return { mode: 'fresh' };
  if (st.isSymbolicLink()) {
    const link = readlinkSync(path);
    if (!isOwnLink(name, link)) throw outputError(`-o ${display}: ${path} changed while kpc was writing (it is now a link to ${link}); nothing was replaced`);
    const target = join(parent, link);
    const tst = lstatOrUndefined(target);
    const before = { dev: st.dev, ino: st.ino, link };
    if (tst !== undefined) {
      if (!tst.isDirectory()) refuse(display, path, before, `${target} is not a directory; kpc does not replace it`);
      const v = pinned(target, tst, (at) => replaceable(at, target, names, options, true));
      if (!v.ok) refuse(display, path, before, v.reason);
    }
    return { mode: 'flip', old: link };
  }
  if (st.isDirectory()) {
    const v = pinned(path, st, (at) => replaceable(at, path, names, options, false));
    if (!v.ok) refuse(display, path, st, v.reason);
    return { mode: 'migrate' };
  }
  throw outputError(`-o ${display}: ${path} is not a directory; ipvs mode writes a bundle directory there (without -o it prints apply.sh with the parts inline)`);
}

/** Where an open directory can be read by a path of its own: Linux's /proc; elsewhere none. */
const FD_DIR = ((): string | undefined => {
  try {
    return statSync('/proc/self/fd').isDirectory() ? '/proc/self/fd' : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * `look` at the directory `path` named when `seen` was taken of it, held open and read through
 * /proc/self/fd: another writer renaming it away, or renaming another directory to its name,
 * mid-look cannot make one look read two directories. ENOENT when it is no longer there.
 * Without /proc (macOS, a container that hides it) it is read by its name: a refusal is still
 * reported only if DIR names the same directory afterwards (refuse).
 */
function pinned<T>(path: string, seen: Stats, look: (at: string) => T): T {
  if (FD_DIR === undefined) return look(path);
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const now = fstatSync(fd);
    if (now.dev !== seen.dev || now.ino !== seen.ino) throw Object.assign(new Error(`${path} changed`), { code: 'ENOENT' });
    return look(`${FD_DIR}/${fd}`);
  } finally {
    closeSync(fd);
  }
}

function writeFileIn(dir: string, f: DirectoryFile): void {
  const fd = openSync(join(dir, f.name), 'wx', f.mode);
  try {
    writeAll(fd, f.content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Write `files` as the bundle directory `-o path` (see the file comment). */
export function writeBundleDir(path: string, files: readonly DirectoryFile[], options: BundleOptions): void {
  const target = failingAs('unchanged', () => resolveTarget(path, isOwnLink));
  if (target.kind !== 'missing' && target.kind !== 'directory' && target.kind !== 'own-link') {
    const what = target.kind === 'file' ? 'a regular file' : target.kind === 'fd' ? `kpc's own file descriptor ${target.fd}` : target.kind === 'stream' ? `a ${target.what}` : target.what;
    throw outputError(`-o ${path}: ${named(path, target.path)} is ${what}; ipvs mode writes a bundle directory there (without -o it prints apply.sh with the parts inline)`);
  }
  const parent = dirname(target.path);
  const name = basename(target.path);
  const names = files.map((f) => f.name);
  failingAs('unchanged', () => recoverMissing(parent, name));
  failingAs('unchanged', () => inspect(path, parent, name, names, options)); // refuse before writing anything
  failingAs('unchanged', () => sweepStale(parent, name, names));

  const tag = newTag();
  const dirName = tempName(name, tag, 'd');
  const dir = join(parent, dirName);
  const link = join(parent, tempName(name, tag, 'lnk'));
  const aside = join(parent, tempName(name, tag, 'old'));
  const dest = join(parent, name);
  deferSignalsWhileWriting();
  let old: string | undefined;
  try {
    failingAs('unchanged', () => {
      mkdirSync(dir, { mode: 0o755 });
      for (const f of files) writeFileIn(dir, f);
      writeFileIn(dir, { name: MANIFEST, content: renderManifest(files, options.kind), mode: 0o644 });
      fsyncDirectory(dir);
      symlinkSync(dirName, link);
    });
    old = commit(path, parent, name, names, options, link, aside, dest);
  } catch (e) {
    unlinkQuietly(link);
    removeBundleDir(dir, names);
    throw e;
  } finally {
    releaseScratch();
  }
  // DIR now names the new bundle (or a later writer's).
  try {
    fsyncDirectory(parent);
  } catch {
    // the rename stands
  }
  if (old !== undefined && old !== dir) removeBundleDir(old, names);
  if (readlinkOrUndefined(dest) !== dirName) removeBundleDir(dir, names); // a later writer won
}

/**
 * The rename(s) that put the link at DIR; returns what to remove afterwards (the previous
 * directory, or the one moved aside). Another writer may change DIR at any moment: each step
 * that finds DIR changed looks again (up to LOOKS times; then the failure is reported).
 */
function commit(display: string, parent: string, name: string, names: readonly string[], options: BundleOptions, link: string, aside: string, dest: string): string | undefined {
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= LOOKS;
    const state = failingAs('unchanged', () => inspect(display, parent, name, names, options));
    if (state.mode !== 'migrate') {
      try {
        renameSync(link, dest);
      } catch (e) {
        // EISDIR/ENOTEMPTY: a real directory appeared at DIR meanwhile
        if (!last && (code(e) === 'EISDIR' || code(e) === 'ENOTEMPTY' || code(e) === 'EEXIST')) continue;
        throw new WriteFailure(code(e) ?? 'EIO', 'unchanged');
      }
      return state.mode === 'flip' ? join(parent, state.old) : undefined;
    }
    try {
      renameSync(dest, aside);
    } catch (e) {
      if (!last && code(e) === 'ENOENT') continue; // moved by another writer: look again
      throw new WriteFailure(code(e) ?? 'EIO', 'unchanged');
    }
    // What was moved aside must still be what was inspected (or a kpc link another writer put
    // there meanwhile, which is removed like a previous bundle).
    const st = lstatOrUndefined(aside);
    if (st?.isDirectory()) {
      let v: Verdict;
      try {
        v = replaceable(aside, dest, names, options, false);
      } catch (e) {
        putBack(aside, dest);
        throw new WriteFailure(code(e) ?? 'EIO', 'unchanged');
      }
      if (!v.ok) {
        putBack(aside, dest);
        throw outputError(`-o ${display}: ${v.reason}`);
      }
    }
    try {
      renameSync(link, dest);
    } catch (e) {
      if (putBack(aside, dest)) throw new WriteFailure(code(e) ?? 'EIO', 'unchanged');
      throw new WriteFailure(code(e) ?? 'EIO', 'aside', `${dest} is missing: the previous one is at ${aside}, and the next kpc write to ${display} puts it back`);
    }
    return aside;
  }
}

function putBack(aside: string, dest: string): boolean {
  try {
    renameSync(aside, dest);
    return true;
  } catch {
    return false;
  }
}

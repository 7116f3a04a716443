/**
 * lab.ts — a small network-namespace lab for kpc's tests.
 *
 * Tests that need a real kernel (loading kpc's output with iptables-restore, sending packets
 * through compiled rules) run inside throwaway network namespaces made here. Nothing ever touches
 * the root namespace's interfaces or rules: links are created directly inside our namespaces
 * (`ip -n A link add ... peer ... netns B`) and addresses live only there.
 *
 * Life cycle of a namespace:
 *   - `withNetns(prefix, fn)` creates `kpc-<prefix>-<pid>-<counter>`, brings `lo` up, runs `fn`
 *     and ALWAYS deletes it (finally), after killing every process still inside it (a process
 *     left inside keeps the namespace alive after `ip netns delete`).
 *   - A process 'exit' hook deletes whatever is still open if the worker exits early.
 *   - `sweepStaleNetns()` deletes `kpc-*-<pid>-*` namespaces whose pid is dead (a worker that was
 *     SIGKILLed cannot run its hooks). It runs once per process before the first namespace is made;
 *     test files may also call it in afterAll.
 *
 * Capabilities: `labRequirements()` tells whether this process can run the lab (root, `ip`,
 * the commands asked for, and an actual probe `ip netns add`). `describeLab()` wraps vitest's
 * `describe.skipIf`: missing capabilities SKIP the suite loudly (console.warn says why), except
 * under CI=true, where they FAIL (CI promises root and the packages .ci/run installs).
 *
 * iptables-restore --test on the nf_tables backend (iptables 1.8.9, found on this project's
 * machines; see iptablesRestoreTest below) checks only what userspace can check: syntax, table
 * names, that each match/target extension exists and accepts its options, addresses of the right
 * family. It sends NOTHING to the kernel (xtables-restore aborts the batch instead of committing), so
 * a jump to an undeclared chain, `-A` to an undeclared chain, DNAT in the filter table and a
 * missing nfacct object all PASS `--test`. `iptablesRestoreLoad` does a real load into the
 * throwaway namespace, which the kernel validates; use both.
 *
 * No shell is ever used: every command is an argv array given to child_process.spawn.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { describe, it } from 'vitest';

// ---------------------------------------------------------------------------------------------
// Environment and capabilities
// ---------------------------------------------------------------------------------------------

/** Directories that hold iproute2/iptables even when a non-login PATH lacks them. */
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** PATH used for every command we run (the caller's PATH plus the sbin directories). */
const LAB_PATH = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SBIN_DIRS]
  .filter((d, i, all) => all.indexOf(d) === i)
  .join(delimiter);

/** Environment for child processes: the caller's, with LAB_PATH and the C locale (stable messages). */
const LAB_ENV: NodeJS.ProcessEnv = { ...process.env, PATH: LAB_PATH, LC_ALL: 'C' };

/** True when CI=true (or CI=1): missing capabilities then fail instead of skipping. */
export function isCI(): boolean {
  const ci = (process.env.CI ?? '').toLowerCase();
  return ci === 'true' || ci === '1';
}

/** True when this process runs as uid 0. (Root in a user namespace still fails the netns probe.) */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Absolute path of an executable found on LAB_PATH, or undefined. */
export function findCommand(name: string): string | undefined {
  if (name.includes('/')) return isExecutable(name) ? name : undefined;
  for (const dir of LAB_PATH.split(delimiter)) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** True when `name` is an executable on PATH or in an sbin directory. */
export function hasCommand(name: string): boolean {
  return findCommand(name) !== undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What the lab needs; `commands` are checked in addition to `ip`. */
export interface LabNeeds {
  commands?: readonly string[];
}

/** Result of a capability check: `ok`, or the reasons it is not. */
export interface LabCapability {
  ok: boolean;
  reasons: string[];
}

let netnsProbe: string | undefined | null = null; // null: not probed yet; undefined: works

/**
 * Checks (synchronously, so it can drive `describe.skipIf`) whether this process can run lab
 * tests: root, `ip`, each command in `needs.commands`, and a real `ip netns add`/`delete` probe
 * (root inside an unprivileged container cannot create namespaces).
 */
export function labRequirements(needs: LabNeeds = {}): LabCapability {
  const reasons: string[] = [];
  if (!isRoot()) reasons.push('not running as root (network namespaces need CAP_SYS_ADMIN/CAP_NET_ADMIN)');
  const missing = ['ip', ...(needs.commands ?? [])].filter((c) => !hasCommand(c));
  if (missing.length > 0) {
    reasons.push(`missing command(s): ${missing.join(', ')} (.ci/run installs the Debian packages)`);
  }
  if (reasons.length === 0) {
    if (netnsProbe === null) netnsProbe = probeNetns();
    if (netnsProbe !== undefined) reasons.push(netnsProbe);
  }
  return { ok: reasons.length === 0, reasons };
}

function probeNetns(): string | undefined {
  const name = nextNetnsName('probe');
  const add = spawnSync('ip', ['netns', 'add', name], { env: LAB_ENV, encoding: 'utf8', timeout: 10_000 });
  if (add.status !== 0) {
    return `cannot create a network namespace: ${(add.stderr || add.error?.message || '').trim()}`;
  }
  spawnSync('ip', ['netns', 'delete', name], { env: LAB_ENV, timeout: 10_000 });
  return undefined;
}

/**
 * `describe` for lab suites. When the capabilities are there it is plain `describe`. When they
 * are not, the suite is SKIPPED with a console.warn giving the reasons (never reported as
 * passed); under CI=true it instead FAILS with one test that names what is missing.
 */
export function describeLab(name: string, needs: LabNeeds, fn: () => void): void {
  const cap = labRequirements(needs);
  const why = cap.reasons.join('; ');
  if (!cap.ok && isCI()) {
    describe(name, () => {
      it('has the lab prerequisites that CI promises (root, ip, iptables, ...)', () => {
        throw new Error(`CI=true but the netns lab cannot run: ${why}`);
      });
    });
    return;
  }
  if (!cap.ok) {
    console.warn(`\n*** SKIPPED "${name}": ${why}. Run as root with .ci/run's packages to run it. ***\n`);
  }
  describe.skipIf(!cap.ok)(name, fn);
}

// ---------------------------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------------------------

/** Outcome of a command. `code` is null when it was killed by a signal (e.g. on timeout). */
export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ExecOptions {
  /** Written to the command's stdin, which is then closed (stdin is always closed). */
  input?: string;
  /** Kill (SIGKILL) after this many ms. Default 10 000. */
  timeoutMs?: number;
}

/** Runs argv (no shell) and collects its output; never rejects for a non-zero exit. */
export function exec(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) return Promise.reject(new Error('exec: empty argv'));
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: LAB_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${argv.join(' ')}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
    // A command that exits without reading stdin must not crash us with EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * Runs argv inside namespace `ns` via `ip netns exec` (which execs the command in place, so the
 * timeout kills the command itself). Never rejects for a non-zero exit.
 */
export function nsExec(ns: string, argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  return exec(['ip', 'netns', 'exec', ns, ...argv], opts);
}

/** Like nsExec but throws (with the command's stderr) unless it exits 0. */
export async function nsRun(ns: string, argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const r = await nsExec(ns, argv, opts);
  if (r.code !== 0) throw new Error(describeFailure(`[${ns}] ${argv.join(' ')}`, r));
  return r;
}

/** One-paragraph description of a failed command, for error messages. */
export function describeFailure(what: string, r: ExecResult): string {
  const how = r.timedOut ? 'timed out' : r.code === null ? `killed by ${r.signal}` : `exited ${r.code}`;
  return `${what} ${how}\n--- stderr ---\n${r.stderr.trim()}\n--- stdout ---\n${r.stdout.trim()}`;
}

/**
 * Starts a long-running process inside `ns` (a server, a listener). It is killed when the
 * namespace is deleted by withNetns, or earlier with `.kill()`. Its output is collected in
 * the returned object; `waitForOutput` resolves when a regexp appears on stdout.
 */
export interface BackgroundProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<void>;
  kill(): void;
}

export interface SpawnOptions {
  /**
   * 'pipe' gives the process a stdin (`child.stdin`) to send it commands on; closing it is the
   * usual way to tell a well-behaved agent to exit. Default 'ignore'.
   */
  stdin?: 'pipe' | 'ignore';
}

/**
 * What nsSpawn started, per namespace, until it exits: deleteNetns kills these too, since a
 * process still in `ip netns exec` before its setns is not among `ip netns pids` yet (on a
 * loaded machine it would then outlive the namespace).
 */
const spawned = new Map<string, Set<ChildProcess>>();

export function nsSpawn(ns: string, argv: readonly string[], opts: SpawnOptions = {}): BackgroundProcess {
  const child = spawn('ip', ['netns', 'exec', ns, ...argv], {
    env: LAB_ENV,
    stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  const mine = spawned.get(ns) ?? new Set<ChildProcess>();
  spawned.set(ns, mine);
  mine.add(child);
  child.on('exit', () => mine.delete(child));
  child.stdin?.on('error', () => {}); // a process that died must not crash the test with EPIPE
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.on('error', () => {}); // reported through waitForOutput / the namespace cleanup
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    kill: () => void child.kill('SIGKILL'),
    waitForOutput(re, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const done = (e?: Error) => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.off('exit', onExit);
          if (e) reject(e);
          else resolve();
        };
        const check = () => {
          if (re.test(out)) done();
        };
        const onExit = () => done(new Error(`[${ns}] ${argv.join(' ')} exited before printing ${re}: ${err.trim()}`));
        const timer = setTimeout(() => done(new Error(`[${ns}] ${argv.join(' ')}: no ${re} within ${timeoutMs} ms`)), timeoutMs);
        child.stdout!.on('data', check);
        child.on('exit', onExit);
        check();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Namespaces
// ---------------------------------------------------------------------------------------------

/** `kpc-<prefix>-<pid>-<counter>`; prefix is [a-z0-9]{1,8} so the pid can be parsed back. */
const NAME_RE = /^kpc-([a-z0-9]{1,8})-(\d+)-(\d+)$/;

/** Namespaces this process created and has not deleted yet. */
const live = new Set<string>();

// Counter unique within the process even under vitest's thread pool (threads share the pid).
let counter = threadId * 1_000_000;

function nextNetnsName(prefix: string): string {
  if (!/^[a-z0-9]{1,8}$/.test(prefix)) {
    throw new Error(`netns prefix must be 1-8 characters [a-z0-9], got ${JSON.stringify(prefix)}`);
  }
  return `kpc-${prefix}-${process.pid}-${counter++}`;
}

let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: delete what is still open with spawnSync.
  process.on('exit', () => {
    for (const ns of live) deleteNetnsSync(ns);
  });
}

let swept = false;

/**
 * Creates a fresh namespace, brings its loopback up, runs `fn(ns)` and always deletes the
 * namespace (processes still inside are killed first), whether fn resolves or throws.
 */
export async function withNetns<T>(prefix: string, fn: (ns: string) => Promise<T> | T): Promise<T> {
  const ns = await createNetns(prefix);
  try {
    return await fn(ns);
  } finally {
    await deleteNetns(ns);
  }
}

/** Like withNetns with several namespaces at once (all deleted afterwards). */
export async function withNetnsGroup<T>(
  prefix: string,
  count: number,
  fn: (namespaces: string[]) => Promise<T> | T,
): Promise<T> {
  const made: string[] = [];
  try {
    for (let i = 0; i < count; i++) made.push(await createNetns(prefix));
    return await fn([...made]);
  } finally {
    await Promise.all(made.map((ns) => deleteNetns(ns)));
  }
}

/** Creates `kpc-<prefix>-<pid>-<n>` with `lo` up. Prefer withNetns, which always cleans up. */
export async function createNetns(prefix: string): Promise<string> {
  installExitHook();
  if (!swept) {
    swept = true;
    await sweepStaleNetns();
  }
  const ns = nextNetnsName(prefix);
  const add = await exec(['ip', 'netns', 'add', ns]);
  if (add.code !== 0) throw new Error(describeFailure(`ip netns add ${ns}`, add));
  live.add(ns);
  const lo = await exec(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
  if (lo.code !== 0) {
    await deleteNetns(ns);
    throw new Error(describeFailure(`ip -n ${ns} link set lo up`, lo));
  }
  return ns;
}

/** Kills what nsSpawn started in `ns` and has not exited. */
function killSpawned(ns: string): void {
  for (const child of spawned.get(ns) ?? []) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  spawned.delete(ns);
}

/** Kills every process inside `ns`, then deletes it. Never throws. */
export async function deleteNetns(ns: string): Promise<void> {
  killSpawned(ns);
  const pids = await exec(['ip', 'netns', 'pids', ns]).catch(() => undefined);
  for (const pid of (pids?.stdout ?? '').split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await exec(['ip', 'netns', 'delete', ns]).catch(() => undefined);
  live.delete(ns);
}

function deleteNetnsSync(ns: string): void {
  killSpawned(ns);
  const pids = spawnSync('ip', ['netns', 'pids', ns], { env: LAB_ENV, encoding: 'utf8', timeout: 5_000 });
  for (const pid of (pids.stdout ?? '').split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  spawnSync('ip', ['netns', 'delete', ns], { env: LAB_ENV, timeout: 5_000 });
  live.delete(ns);
}

/** Names of all network namespaces (`ip netns list`), ours or not. */
export async function listNetns(): Promise<string[]> {
  const r = await exec(['ip', 'netns', 'list']);
  // Lines look like "name" or "name (id: 3)".
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

/** Namespaces made by this lab (any process), i.e. named like ours. */
export async function listLabNetns(): Promise<string[]> {
  return (await listNetns()).filter((n) => NAME_RE.test(n));
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Deletes lab namespaces (`kpc-<prefix>-<pid>-<n>`) whose creating process is dead. Namespaces of
 * live processes (other vitest workers) and names not made by this lab are left alone.
 * Returns the names deleted.
 */
export async function sweepStaleNetns(): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await listNetns()) {
    const m = NAME_RE.exec(name);
    if (!m) continue;
    const pid = Number(m[2]);
    if (pid === process.pid || pidAlive(pid)) continue;
    await deleteNetns(name);
    removed.push(name);
  }
  return removed;
}

// ---------------------------------------------------------------------------------------------
// Links and addresses (only inside our namespaces)
// ---------------------------------------------------------------------------------------------

/** Linux IFNAMSIZ is 16 including the NUL: interface names are at most 15 characters. */
export const IFNAME_MAX = 15;

function checkIfName(name: string): void {
  if (name.length === 0 || name.length > IFNAME_MAX || /[\s/:]/.test(name)) {
    throw new Error(`bad interface name ${JSON.stringify(name)} (1-${IFNAME_MAX} chars, no space, '/' or ':')`);
  }
}

export interface VethEnd {
  ns: string;
  /** Interface name inside ns (≤ 15 chars). */
  ifname: string;
  /** Address with prefix length, e.g. "10.250.0.1/24" (optional). */
  address?: string;
}

/**
 * Creates a veth pair between two of our namespaces, directly inside them (never in the root
 * namespace), optionally addresses each end, and sets both up.
 */
export async function addVethPair(a: VethEnd, b: VethEnd): Promise<void> {
  checkIfName(a.ifname);
  checkIfName(b.ifname);
  const steps: string[][] = [
    ['ip', '-n', a.ns, 'link', 'add', a.ifname, 'type', 'veth', 'peer', 'name', b.ifname, 'netns', b.ns],
  ];
  for (const end of [a, b]) {
    if (end.address) steps.push(['ip', '-n', end.ns, 'addr', 'add', end.address, 'dev', end.ifname]);
    steps.push(['ip', '-n', end.ns, 'link', 'set', end.ifname, 'up']);
  }
  for (const argv of steps) {
    const r = await exec(argv);
    if (r.code !== 0) throw new Error(describeFailure(argv.join(' '), r));
  }
}

/**
 * Runs several `ip` commands inside `ns` with one process: `ip -n NS -batch -`, each line one
 * command without the leading `ip` (e.g. `link set eth0 up`, `route add default via 10.0.0.1`).
 * Family-specific options cannot be given per line; `route add ::/0 via ...` selects IPv6 by
 * its addresses. Throws with the failing line's message unless all succeed.
 */
export async function ipBatch(ns: string, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return;
  const r = await exec(['ip', '-n', ns, '-batch', '-'], { input: `${lines.join('\n')}\n`, timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(describeFailure(`[${ns}] ip -batch\n  ${lines.join('\n  ')}\n`, r));
}

/**
 * Sets sysctls inside `ns` (`{'net.ipv4.ip_forward': 1}`); net.* sysctls are per namespace, so
 * the root namespace is untouched. Writes /proc/sys from a process inside the namespace (no
 * dependency on procps). Keys ending in `?` are optional: skipped when the file does not exist
 * (e.g. `net.bridge.bridge-nf-call-iptables?` without br_netfilter).
 */
export async function nsSysctl(ns: string, settings: Record<string, string | number>): Promise<void> {
  const script = `
const fs = require('node:fs');
for (const [key, value] of Object.entries(JSON.parse(process.argv[1]))) {
  const optional = key.endsWith('?');
  const path = '/proc/sys/' + (optional ? key.slice(0, -1) : key).split('.').join('/');
  if (optional && !fs.existsSync(path)) continue;
  fs.writeFileSync(path, String(value));
}`;
  await nsRun(ns, [process.execPath, '-e', script, JSON.stringify(settings)]);
}

// ---------------------------------------------------------------------------------------------
// iptables
// ---------------------------------------------------------------------------------------------

export type IpFamily = 'ipv4' | 'ipv6';

function restoreCommand(family: IpFamily): string {
  return family === 'ipv6' ? 'ip6tables-restore' : 'iptables-restore';
}

/**
 * `iptables-restore --test` (or ip6tables-restore) with `text` on stdin inside `ns`.
 *
 * With the nf_tables backend this is a userspace-only check (see the file header): it catches
 * syntax errors, unknown tables, unknown matches/targets/options and wrong-family addresses, but
 * NOT undeclared chains, table/target mismatches or missing nfacct objects. Needs no kernel
 * modules and no nfacct objects. Pair it with iptablesRestoreLoad.
 */
export function iptablesRestoreTest(ns: string, text: string, family: IpFamily = 'ipv4'): Promise<ExecResult> {
  return nsExec(ns, [restoreCommand(family), '--test'], { input: text, timeoutMs: 20_000 });
}

/** Names of the nfacct objects a ruleset refers to (`-m nfacct --nfacct-name NAME`). */
export function nfacctNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/--nfacct-name\s+("([^"]*)"|\S+)/g)) names.add(m[2] ?? m[1]!);
  return [...names].sort();
}

/**
 * Creates the nfacct objects `text` refers to inside `ns`. Needed for a real load: the kernel's
 * xt_nfacct checkentry fails with ENOENT ("RULE_APPEND failed (No such file or directory)") when
 * the object is missing. nfacct objects are per network namespace, so the root namespace is
 * untouched. Requires the `nfacct` command (Debian package nfacct).
 */
export async function prepareNfacct(ns: string, text: string): Promise<string[]> {
  const names = nfacctNames(text);
  for (const name of names) {
    const r = await nsExec(ns, ['nfacct', 'add', name]);
    // "File exists" when already there is fine.
    if (r.code !== 0 && !/exists/i.test(r.stderr)) throw new Error(describeFailure(`nfacct add ${name}`, r));
  }
  return names;
}

export interface LoadOptions {
  /** `--noflush`, as kube-proxy runs it (default true). */
  noflush?: boolean;
  /** Create the nfacct objects the ruleset names first (default true). */
  nfacct?: boolean;
}

/**
 * Really loads `text` with iptables-restore/ip6tables-restore inside `ns` (a throwaway namespace),
 * so the kernel validates it: chain targets exist, targets are valid in their table, nfacct
 * objects exist, ... By default runs `--noflush` like kube-proxy and creates the nfacct objects
 * the text names.
 */
export async function iptablesRestoreLoad(
  ns: string,
  text: string,
  family: IpFamily = 'ipv4',
  opts: LoadOptions = {},
): Promise<ExecResult> {
  if (opts.nfacct ?? true) await prepareNfacct(ns, text);
  const argv = [restoreCommand(family)];
  if (opts.noflush ?? true) argv.push('--noflush');
  return nsExec(ns, argv, { input: text, timeoutMs: 20_000 });
}

/** `iptables-save` (or ip6tables-save) inside `ns`. */
export function iptablesSave(ns: string, family: IpFamily = 'ipv4'): Promise<ExecResult> {
  return nsExec(ns, [family === 'ipv6' ? 'ip6tables-save' : 'iptables-save']);
}

/** Which check rejected a ruleset: `--test` (userspace) or the real load (kernel). */
export interface RestoreCheck {
  ok: boolean;
  /** The stage that failed, when !ok. */
  failedAt?: 'test' | 'load';
  test: ExecResult;
  load?: ExecResult;
  /** A readable account of the failure ('' when ok). */
  message: string;
}

/**
 * The full loadability check used by the golden tests: `--test` first, then a real load into the
 * (fresh, throwaway) namespace `ns`, with the nfacct objects the text names created first.
 * `before`, when given, is loaded (really, without --noflush) first: the state a `--previous`
 * delta applies to.
 */
export async function checkRestorable(
  ns: string,
  text: string,
  family: IpFamily = 'ipv4',
  before?: string,
): Promise<RestoreCheck> {
  const cmd = restoreCommand(family);
  if (before !== undefined) {
    const base = await iptablesRestoreLoad(ns, before, family, { noflush: false });
    if (base.code !== 0) throw new Error(describeFailure(`${cmd} of the previous state`, base));
  }
  const test = await iptablesRestoreTest(ns, text, family);
  if (test.code !== 0) {
    return { ok: false, failedAt: 'test', test, message: describeFailure(`${cmd} --test`, test) };
  }
  const load = await iptablesRestoreLoad(ns, text, family, { noflush: true });
  if (load.code !== 0) {
    return { ok: false, failedAt: 'load', test, load, message: describeFailure(`${cmd} --noflush (real load)`, load) };
  }
  return { ok: true, test, load, message: '' };
}

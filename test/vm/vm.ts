/**
 * vm.ts — run kpc's IPVS-mode output against a REAL kernel (IPVS, ipset, netfilter) in a
 * throwaway qemu VM. This machine has no ip_vs module; a stock Debian cloud kernel booted under
 * qemu (TCG, software emulation: about 5 s a boot) has everything. Recipe and
 * measurements: shared/spec/ipvs-real-kernel.md; how this harness works: test/vm/README.md.
 *
 * API
 * ---
 *   const results = await runInVM(cases, opts?)   // ONE boot for all cases, in order
 *   const run = await runVM(cases, opts?)         // same, plus kernel, timings, console text
 *
 *   VmCase = {
 *     name: string,
 *     files?: Record<string, string | Uint8Array>,  // e.g. kpc's bundle: apply.sh, ipvs.rules,
 *                      // ipset.rules, iptables.rules, kube-ipvs0.addrs. Relative paths; *.sh are
 *                      // made executable. They are the cwd of `apply` and `script`.
 *     apply?: string | false,     // shell command; default './apply.sh' when files has apply.sh
 *     script?: string,            // bash run after apply (cwd = the files), with the helpers
 *                                 // of guest/lib.sh: kpc_out NAME cmd..., kpc_in NS cmd...,
 *                                 // kpc_dump TAG, kpc_probe ...
 *     nodeIPs?: string[],         // node addresses, put on a dummy eth0 ('192.168.0.10', or
 *                                 // with a prefix); NodePort probes target these
 *     netns?: VmNetns[],          // pods and clients: { name, ips, tcp?: ports, udp?: ports,
 *                                 // reply?, peer? }. Each is a namespace joined to the node by a
 *                                 // routed veth; every port answers each connection/datagram
 *                                 // with one line: `reply` (default: the name), plus the client
 *                                 // address it sees when peer is true
 *     probes?: VmProbe[],         // { name, from?: ns|'node', target: 'IP:PORT'|'[IP6]:PORT',
 *                                 //   proto?: 'tcp'|'udp', count?: 1, waitSec?: 4 }
 *                                 // or { name, from?, cmd: 'shell', timeoutSec? }
 *     sysctls?: Record<string, string | number>,  // node sysctls, over DEFAULT_SYSCTLS
 *     iptables?: 'nft' | 'legacy',               // backend of iptables(-save/-restore); nft
 *     dump?: boolean,             // record the standard read-backs at the end (default true)
 *     stepTimeoutSec?: number,    // apply / script / each command probe (default 30)
 *     timeoutSec?: number,        // the whole case, in the guest (default: computed)
 *   }
 *   VmResult = { name, outputs: Record<string, {code, stdout, stderr}>, error?, seconds?, log? }
 *   opts = { timeoutMs?, cacheDir?, memoryMb?, accel?, keepDir? }
 *
 * Each case runs in a FRESH network namespace "node" inside the VM (its own IPVS table, ipsets,
 * iptables, conntrack and kube-ipvs0), in this order: sysctls, nodeIPs, netns + servers,
 * apply, script, probes, read-backs. Outputs (absent when the step did not run):
 *   apply, script                     the step's stdout/stderr/exit code
 *   probe:<name>                      connect probes: one line per attempt, the answer or
 *                                     "!fail rc=N..." (probeAnswers() splits them); code =
 *                                     number of failed attempts. Command probes: the command's
 *                                     own stdout/stderr/exit code
 *   ipvsadm-save                      `ipvsadm -S -n` (what `ipvsadm-save -n` runs)
 *   ipset-save                        `ipset save -sorted`
 *   iptables-save, ip6tables-save     (of the case's backend)
 *   kube-ipvs0                        `ip -o addr show dev kube-ipvs0`
 *   <NAME>, <dump>@<TAG>              whatever the script recorded with kpc_out / kpc_dump TAG
 * `error` is set when the case did not run to its end (setup failure, guest timeout, VM died);
 * a failing apply is NOT an error: check outputs.apply.code. normalise.ts turns the read-backs
 * and kpc's files into comparable forms.
 *
 * Preparation: vmRequirements() finds qemu and builds/locates the cached kernel + initramfs
 * (build.sh; cache ${KPC_VM_CACHE:-/var/cache/kpc-vm}); describeVM() skips a suite loudly when
 * that fails, and fails it under CI=true. No root is needed to boot.
 *
 * Env: KPC_VM_CACHE (cache dir), KPC_VM_ACCEL=kvm|tcg (default tcg; see chooseAccel),
 * KPC_VM_QEMU (the qemu-system-x86_64 to run),
 * KPC_VM_KEEP=DIR (keep each run's initrd, console.log and result.txt under DIR).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'vitest';

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

export interface VmNetns {
  /** Namespace name: 1-15 of [a-z0-9-], starting with a letter; not "node". */
  name: string;
  /** Its addresses (IPv4 and/or IPv6, no prefix). */
  ips: string[];
  /** TCP ports answering every connection with `reply`. */
  tcp?: number[];
  /** UDP ports answering every datagram with `reply` (needs socat on the host at build time). */
  udp?: number[];
  /** The line the servers send back (default: the name); [A-Za-z0-9._-]+. */
  reply?: string;
  /** Answer "<reply> <client IP as this namespace sees it>" instead (shows SNAT/masquerade;
   * masqueraded traffic appears to come from 169.254.1.1, the node side of every veth). */
  peer?: boolean;
}

export interface VmConnectProbe {
  name: string;
  /** Namespace to connect from; 'node' (default) is the node itself. */
  from?: string;
  /** 'IP:PORT' or '[IPv6]:PORT'. */
  target: string;
  proto?: 'tcp' | 'udp';
  /** Connections to make (default 1), one answer line each. */
  count?: number;
  /** Seconds to wait for each connection/answer (default 4: generous for a busy TCG host; an
   * answer normally takes well under 1 s, a refused connection fails at once, so probes that
   * expect silence (drops) should lower it). */
  waitSec?: number;
}

export interface VmCommandProbe {
  name: string;
  from?: string;
  /** bash command line run in namespace `from`. */
  cmd: string;
  timeoutSec?: number;
}

export type VmProbe = VmConnectProbe | VmCommandProbe;

export interface VmCase {
  name: string;
  files?: Record<string, string | Uint8Array>;
  apply?: string | false;
  script?: string;
  nodeIPs?: string[];
  netns?: VmNetns[];
  probes?: VmProbe[];
  sysctls?: Record<string, string | number>;
  iptables?: 'nft' | 'legacy';
  dump?: boolean;
  stepTimeoutSec?: number;
  timeoutSec?: number;
}

export interface VmOutput {
  code: number;
  stdout: string;
  stderr: string;
}

export interface VmResult {
  name: string;
  outputs: Record<string, VmOutput>;
  /** Set when the case did not run to its end (setup failed, timed out, the VM died). */
  error?: string;
  /** Guest seconds the case took. */
  seconds?: number;
  /** The case driver's own stderr: "T <uptime> <step>" timing lines and set-up errors. */
  log?: string;
}

export interface VmRunOptions {
  /** Host-side limit for the whole VM run (default: boot allowance + the cases' limits). */
  timeoutMs?: number;
  cacheDir?: string;
  memoryMb?: number;
  accel?: 'kvm' | 'tcg';
  /** Keep the run's files (initrd.img, console.log, result.txt) in this directory. */
  keepDir?: string;
}

export interface VmRun {
  results: VmResult[];
  kernel: string;
  accel: 'kvm' | 'tcg';
  /** Host wall time of the qemu process. */
  wallMs: number;
  /** Guest uptime when /init was ready to run cases. */
  readySec?: number;
  /** Guest uptime at the end. */
  doneSec?: number;
  /** Kernel console (ttyS0) and raw result port (ttyS1). */
  console: string;
  raw: string;
  warnings: string[];
}

/** Sysctls set in each case's node namespace before anything else: what kube-proxy sets at
 * start-up in IPVS mode, plus forwarding and no IPv6 DAD (addresses usable at once). */
export const DEFAULT_SYSCTLS: Readonly<Record<string, string>> = {
  'net.ipv4.ip_forward': '1',
  'net.ipv6.conf.all.forwarding': '1',
  'net.ipv4.vs.conntrack': '1',
  'net.ipv4.vs.expire_nodest_conn': '1',
  'net.ipv4.vs.expire_quiescent_template': '1',
  'net.ipv6.conf.all.accept_dad': '0',
  'net.ipv6.conf.default.accept_dad': '0',
};

/** Modules /init loads at boot (kube-proxy's list); the rest load on demand. */
const PRELOAD = ['ip_vs', 'ip_vs_rr', 'ip_vs_wrr', 'ip_vs_sh', 'nf_conntrack', 'veth', 'dummy'];

export class VmError extends Error {
  constructor(
    message: string,
    readonly console = '',
  ) {
    super(message);
    this.name = 'VmError';
  }
}

// ---------------------------------------------------------------------------------------------
// Environment and preparation
// ---------------------------------------------------------------------------------------------

const HERE = dirname(fileURLToPath(import.meta.url));
const BUILD_SH = join(HERE, 'build.sh');
const GUEST_INIT = join(HERE, 'guest', 'init');
const GUEST_LIB = join(HERE, 'guest', 'lib.sh');
const GUEST_PEER_ECHO = join(HERE, 'guest', 'peer-echo.sh');

const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];
const VM_PATH = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SBIN_DIRS]
  .filter((d, i, all) => all.indexOf(d) === i)
  .join(delimiter);
const VM_ENV: NodeJS.ProcessEnv = { ...process.env, PATH: VM_PATH, LC_ALL: 'C' };

export function isCI(): boolean {
  const ci = (process.env.CI ?? '').toLowerCase();
  return ci === 'true' || ci === '1';
}

function findCommand(name: string): string | undefined {
  for (const dir of VM_PATH.split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, fsConstants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** qemu-system-x86_64 on PATH, or the executable KPC_VM_QEMU names. */
function findQemu(): string | undefined {
  const env = process.env.KPC_VM_QEMU;
  if (!env) return findCommand('qemu-system-x86_64');
  try {
    accessSync(env, fsConstants.X_OK);
    return env;
  } catch {
    return env.includes('/') ? undefined : findCommand(env);
  }
}

export function defaultCacheDir(): string {
  return process.env.KPC_VM_CACHE || '/var/cache/kpc-vm';
}

export interface VmImage {
  dir: string;
  vmlinuz: string;
  base: string;
  /** socat segment, appended only when a case needs socat (UDP or peer-reporting servers). */
  socat?: string;
  info: Record<string, string>;
  /** Milliseconds build.sh took in this process (a cache hit costs well under a second). */
  prepareMs: number;
}

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_0-9]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return out;
}

interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Process groups of running children, killed if this process exits first. */
const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

/** Run argv in its own process group; on timeout SIGKILL the whole group (qemu included). */
function execFile(argv: string[], timeoutMs: number, env: NodeJS.ProcessEnv = VM_ENV, killOn?: RegExp): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const pgid = child.pid;
    if (pgid) liveGroups.add(pgid);
    const killGroup = () => {
      if (!pgid) return;
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (killOn?.test(stderr)) killGroup();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const finish = (r: ExecResult) => {
      clearTimeout(timer);
      killGroup(); // nothing of the group may outlive the call
      if (pgid) liveGroups.delete(pgid);
      resolve(r);
    };
    child.on('error', (e) => finish({ code: null, stdout, stderr: stderr + String(e), timedOut }));
    child.on('close', (code) => finish({ code, stdout, stderr, timedOut }));
  });
}

const imagePromises = new Map<string, Promise<VmImage>>();

/** Build (or find in the cache) the kernel + initramfs. Memoised per cache dir. Throws VmError. */
export function prepareVmImage(cacheDir = defaultCacheDir()): Promise<VmImage> {
  let p = imagePromises.get(cacheDir);
  if (!p) {
    p = (async () => {
      const t0 = Date.now();
      const r = await execFile(['bash', BUILD_SH], 15 * 60_000, { ...VM_ENV, KPC_VM_CACHE: cacheDir });
      const m = /^KPC_VM_IMAGE=(.+)$/m.exec(r.stdout);
      if (r.code !== 0 || !m) {
        throw new VmError(
          `test/vm/build.sh failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}): ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`,
        );
      }
      const dir = m[1]!.trim();
      const info = parseEnv(readFileSync(join(dir, 'info.env'), 'utf8'));
      const socat = join(dir, 'socat.cpio.gz');
      return {
        dir,
        vmlinuz: join(dir, 'vmlinuz'),
        base: join(dir, 'base.cpio.gz'),
        ...(existsSync(socat) ? { socat } : {}),
        info,
        prepareMs: Date.now() - t0,
      };
    })();
    imagePromises.set(cacheDir, p);
  }
  return p;
}

export interface VmRequirements {
  ok: boolean;
  reasons: string[];
  image?: VmImage;
  qemu?: string;
  accel: 'kvm' | 'tcg';
}

export function kvmUsable(): boolean {
  try {
    accessSync('/dev/kvm', fsConstants.R_OK | fsConstants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** TCG unless asked for KVM (opts.accel or KPC_VM_ACCEL=kvm). Not automatic: on this project's
 * machines (a Firecracker VM) /dev/kvm exists and opens, but a nested KVM guest never gets to
 * print a byte (qemu hangs, sometimes "KVM internal error ... emulation failure"). */
function chooseAccel(requested?: 'kvm' | 'tcg'): 'kvm' | 'tcg' {
  const env = (process.env.KPC_VM_ACCEL ?? '').toLowerCase();
  return requested ?? (env === 'kvm' ? 'kvm' : 'tcg');
}

/** Can this process boot the test VM? Builds the image on first use (about 10 s, needs the
 * Debian registry for `apt-get download`). Never throws. */
export async function vmRequirements(cacheDir = defaultCacheDir()): Promise<VmRequirements> {
  const reasons: string[] = [];
  const accel = chooseAccel();
  if (process.platform !== 'linux' || process.arch !== 'x64') reasons.push(`needs linux/x64 (this is ${process.platform}/${process.arch})`);
  const qemu = findQemu();
  if (!qemu) reasons.push(`no ${process.env.KPC_VM_QEMU || 'qemu-system-x86_64'} (Debian package qemu-system-x86)`);
  if (!findCommand('timeout')) reasons.push('no timeout (coreutils)');
  if (reasons.length) return { ok: false, reasons, accel };
  try {
    const image = await prepareVmImage(cacheDir);
    return { ok: true, reasons, image, ...(qemu ? { qemu } : {}), accel };
  } catch (e) {
    reasons.push(e instanceof Error ? e.message : String(e));
    return { ok: false, reasons, accel };
  }
}

/**
 * vitest `describe` for VM suites: runs `fn` when `req.ok`; otherwise SKIPS the suite with a
 * loud console.warn, except under CI=true, where a failing test says why (CI promises the
 * packages .ci/run installs and the cached image build.sh makes).
 */
export function describeVM(name: string, req: VmRequirements, fn: () => void): void {
  const why = req.reasons.join('; ');
  if (!req.ok && isCI()) {
    describe(name, () => {
      it('can boot the real-kernel test VM (CI=true promises it)', () => {
        throw new Error(`CI=true but the test VM cannot run: ${why}`);
      });
    });
    return;
  }
  if (!req.ok) {
    console.warn(`\n*** SKIPPED "${name}": the real-kernel VM cannot run here: ${why}. Install .ci/run's packages (qemu-system-x86 busybox-static ipvsadm ipset iproute2 iptables socat) and run test/vm/build.sh. ***\n`);
  }
  describe.skipIf(!req.ok)(name, fn);
}

// ---------------------------------------------------------------------------------------------
// newc cpio writer and ustar reader
// ---------------------------------------------------------------------------------------------

interface CpioEntry {
  name: string;
  mode: number;
  data?: Buffer;
}

function pad4(n: number): number {
  return (4 - (n % 4)) % 4;
}

/** A newc ("070701") archive of the entries plus the trailer, as the kernel's initramfs wants. */
export function cpioNewc(entries: CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  let ino = 1;
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  const add = (name: string, mode: number, data: Buffer) => {
    const nameBuf = Buffer.from(name + '\0');
    const header =
      '070701' +
      [ino++, mode, 0, 0, mode & 0o040000 ? 2 : 1, 0, data.length, 0, 0, 0, 0, nameBuf.length, 0].map(hex).join('');
    parts.push(Buffer.from(header), nameBuf, Buffer.alloc(pad4(110 + nameBuf.length)));
    parts.push(data, Buffer.alloc(pad4(data.length)));
  };
  for (const e of entries) add(e.name, e.mode, e.data ?? Buffer.alloc(0));
  add('TRAILER!!!', 0, Buffer.alloc(0));
  return Buffer.concat(parts);
}

/** Files of a ustar archive (busybox tar), names without "./". Directories are skipped. */
export function untar(buf: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let off = 0;
  let longName: string | undefined;
  const str = (a: number, b: number) => {
    const s = buf.subarray(off + a, off + b);
    const z = s.indexOf(0);
    return (z >= 0 ? s.subarray(0, z) : s).toString('utf8');
  };
  while (off + 512 <= buf.length) {
    if (buf.subarray(off, off + 512).every((b) => b === 0)) break;
    const size = parseInt(str(124, 136).trim() || '0', 8);
    const type = String.fromCharCode(buf[off + 156] ?? 48);
    const prefix = str(345, 500);
    let name = longName ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100));
    longName = undefined;
    const data = buf.subarray(off + 512, off + 512 + size);
    if (type === 'L') {
      longName = data.toString('utf8').replace(/\0.*$/s, '');
    } else if (type === '0' || type === '\0') {
      name = name.replace(/^\.\//, '');
      files.set(name, Buffer.from(data));
    }
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Case scripts
// ---------------------------------------------------------------------------------------------

/** Single-quote for bash. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const NS_NAME = /^[a-z][a-z0-9-]{0,14}$/;
const OUT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,80}$/;

function splitTarget(target: string): { host: string; port: number } {
  const m = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(target) ?? /^([0-9.]+):(\d+)$/.exec(target);
  if (!m) throw new VmError(`probe target ${JSON.stringify(target)} is not IP:PORT or [IPv6]:PORT`);
  return { host: m[1]!, port: Number(m[2]) };
}

function checkCase(c: VmCase): void {
  const where = `VM case ${JSON.stringify(c.name)}`;
  const names = new Set<string>(['node']);
  for (const ns of c.netns ?? []) {
    if (!NS_NAME.test(ns.name)) throw new VmError(`${where}: netns name ${JSON.stringify(ns.name)} must match ${NS_NAME}`);
    if (names.has(ns.name)) throw new VmError(`${where}: netns name ${ns.name} is used twice (or is "node")`);
    names.add(ns.name);
    if (!ns.ips.length) throw new VmError(`${where}: netns ${ns.name} has no ips`);
    for (const ip of ns.ips) if (!/^[0-9a-fA-F:.]+$/.test(ip)) throw new VmError(`${where}: bad address ${ip}`);
    if (ns.reply !== undefined && !/^[A-Za-z0-9._-]+$/.test(ns.reply)) throw new VmError(`${where}: reply must be one word of [A-Za-z0-9._-]`);
    for (const p of [...(ns.tcp ?? []), ...(ns.udp ?? [])]) {
      if (!Number.isInteger(p) || p < 1 || p > 65535) throw new VmError(`${where}: bad port ${p}`);
    }
  }
  const probeNames = new Set<string>();
  for (const p of c.probes ?? []) {
    if (!OUT_NAME.test(p.name)) throw new VmError(`${where}: probe name ${JSON.stringify(p.name)} must match ${OUT_NAME}`);
    if (probeNames.has(p.name)) throw new VmError(`${where}: probe name ${p.name} is used twice`);
    probeNames.add(p.name);
    if (p.from !== undefined && !names.has(p.from)) throw new VmError(`${where}: probe ${p.name} from unknown netns ${p.from}`);
    if ('target' in p) splitTarget(p.target);
  }
  for (const f of Object.keys(c.files ?? {})) {
    if (f.startsWith('/') || f.split('/').some((s) => s === '..' || s === '' || s === '.')) {
      throw new VmError(`${where}: file name ${JSON.stringify(f)} must be a plain relative path`);
    }
  }
  for (const k of Object.keys(c.sysctls ?? {})) {
    if (!/^[a-z0-9_.-]+$/i.test(k)) throw new VmError(`${where}: bad sysctl name ${k}`);
  }
}

/** Does the case need socat (UDP servers, or servers that report the peer)? */
function needsSocat(c: VmCase): boolean {
  return (c.netns ?? []).some((n) => (n.udp ?? []).length > 0 || (n.peer && (n.tcp ?? []).length > 0));
}

/** Seconds the guest lets a case run (setup + steps + probes + dumps), unless given. */
function caseTimeout(c: VmCase): number {
  if (c.timeoutSec) return c.timeoutSec;
  const step = c.stepTimeoutSec ?? 30;
  let t = 30 + (c.netns?.length ?? 0) * 10;
  if (c.files?.['apply.sh'] !== undefined || c.apply) t += step;
  if (c.script) t += step;
  for (const p of c.probes ?? []) t += 'cmd' in p ? (p.timeoutSec ?? step) : (p.count ?? 1) * ((p.waitSec ?? 4) + 3);
  return t;
}

const isV6 = (a: string) => a.includes(':');

/** `ip -batch` lines run in the node: node IPs on a dummy eth0, then per netns: create it and a
 * veth pair (node side kv<i>, netns side eth0), node-side gateway address and host routes. */
export function nodeBatch(c: VmCase): string {
  const L: string[] = [];
  if (c.nodeIPs?.length) {
    L.push('link add eth0 type dummy', 'link set eth0 up');
    for (const a of c.nodeIPs) {
      if (isV6(a)) L.push(`addr add ${a.includes('/') ? a : `${a}/128`} dev eth0 nodad`);
      else L.push(`addr add ${a.includes('/') ? a : `${a}/32`} dev eth0`);
    }
  }
  (c.netns ?? []).forEach((ns, i) => {
    const dev = `kv${i}`;
    L.push(`netns add ${ns.name}`, `link add ${dev} type veth peer name eth0 netns ${ns.name}`, `link set ${dev} up`);
    if (ns.ips.some((a) => !isV6(a))) L.push(`addr add 169.254.1.1/32 dev ${dev}`);
    if (ns.ips.some(isV6)) L.push(`addr add fe80::1/64 dev ${dev} nodad`);
    for (const a of ns.ips) L.push(isV6(a) ? `route add ${a}/128 dev ${dev}` : `route add ${a}/32 dev ${dev}`);
  });
  return L.length ? L.join('\n') + '\n' : '';
}

/** `ip -n NAME -batch` lines: the namespace's addresses (/32, /128) on eth0 and default routes
 * via the node side (169.254.1.1, fe80::1). */
export function netnsBatch(ns: VmNetns): string {
  const L = ['link set lo up', 'link set eth0 up'];
  for (const a of ns.ips) L.push(isV6(a) ? `addr add ${a}/128 dev eth0 nodad` : `addr add ${a}/32 dev eth0`);
  if (ns.ips.some((a) => !isV6(a))) L.push('route add 169.254.1.1/32 dev eth0 scope link', 'route add 0.0.0.0/0 via 169.254.1.1 dev eth0');
  if (ns.ips.some(isV6)) L.push('route add ::/0 via fe80::1 dev eth0');
  return L.join('\n') + '\n';
}

function caseScript(c: VmCase, idx: string): string {
  const step = c.stepTimeoutSec ?? 30;
  const L: string[] = [
    '#!/bin/bash',
    `# generated by test/vm/vm.ts for case ${JSON.stringify(c.name).replace(/\n/g, ' ')}`,
    `export KPC_I=${idx} KPC_DIR=/kpc/cases/${idx}`,
    'export KPC_FILES=$KPC_DIR/files KPC_OUT=/kpc/out/$KPC_I',
    '. /kpc/lib.sh',
    'mkdir -p "$KPC_FILES" "$KPC_OUT"',
    'kpc_failed=0',
    'fail() { echo "setup failed: $*" >&2; kpc_failed=1; }',
    'T() { echo "T $(kpc_up) $*" >&2; }',
    'T start',
    'ip link set lo up || fail "lo up"',
    `kpc_iptables_backend ${c.iptables ?? 'nft'}`,
  ];
  const sysctls = { ...DEFAULT_SYSCTLS, ...Object.fromEntries(Object.entries(c.sysctls ?? {}).map(([k, v]) => [k, String(v)])) };
  L.push(`kpc_sysctl ${Object.entries(sysctls).map(([k, v]) => shq(`${k}=${v}`)).join(' ')} || fail sysctl`);
  if (nodeBatch(c)) L.push('ip -batch "$KPC_DIR/node.batch" || fail "node network (node.batch)"');
  for (const ns of c.netns ?? []) {
    L.push(`ip -n ${shq(ns.name)} -batch "$KPC_DIR/ns-${ns.name}.batch" || fail ${shq(`netns ${ns.name} (ns-${ns.name}.batch)`)}`);
  }
  let servers = 0;
  for (const ns of c.netns ?? []) {
    const reply = ns.reply ?? ns.name;
    const peer = ns.peer ? ' peer' : '';
    for (const p of ns.tcp ?? []) L.push(`kpc_serve ${shq(ns.name)} tcp ${p} ${shq(reply)}${peer} || fail "serve ${ns.name} tcp/${p}"`), servers++;
    for (const p of ns.udp ?? []) L.push(`kpc_serve ${shq(ns.name)} udp ${p} ${shq(reply)}${peer} || fail "serve ${ns.name} udp/${p}"`), servers++;
  }
  if (servers) L.push('kpc_serve_wait || fail servers');
  L.push('T setup done');
  const apply = c.apply === false ? undefined : (c.apply ?? (c.files?.['apply.sh'] !== undefined ? './apply.sh' : undefined));
  if (apply) L.push(`kpc_step apply ${step} bash -c ${shq(apply)}`, 'T apply done');
  if (c.script !== undefined) L.push(`kpc_step script ${step} bash "$KPC_DIR/script.sh"`, 'T script done');
  for (const p of c.probes ?? []) {
    const from = p.from ?? 'node';
    if ('cmd' in p) {
      L.push(`kpc_out ${shq(`probe:${p.name}`)} kpc_in ${shq(from)} timeout -s KILL ${p.timeoutSec ?? step} bash -c ${shq(p.cmd)}`);
    } else {
      const { host, port } = splitTarget(p.target);
      L.push(`kpc_probe ${shq(p.name)} ${shq(from)} ${p.proto ?? 'tcp'} ${shq(host)} ${port} ${p.count ?? 1} ${p.waitSec ?? 4}`);
    }
  }
  L.push('T probes done');
  if (c.dump !== false) L.push('kpc_dump', 'T dump done');
  L.push('exit $kpc_failed', '');
  return L.join('\n');
}

function userScript(script: string): string {
  return ['#!/bin/bash', '. /kpc/lib.sh', 'cd "$KPC_FILES" || exit 99', script, ''].join('\n');
}

/** The per-run initramfs segment: /init, /kpc/{run.env,lib.sh}, /kpc/cases/NNN/... */
function runSegment(cases: VmCase[], nonce: string): Buffer {
  const entries: CpioEntry[] = [];
  const dirs = new Set<string>();
  const dir = (d: string) => {
    const parts = d.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const p = parts.slice(0, i).join('/');
      if (!dirs.has(p)) {
        dirs.add(p);
        entries.push({ name: p, mode: 0o040755 });
      }
    }
  };
  const file = (name: string, data: string | Uint8Array, exec = false) => {
    dir(name.split('/').slice(0, -1).join('/'));
    entries.push({ name, mode: exec ? 0o100755 : 0o100644, data: Buffer.from(data) });
  };
  file('init', readFileSync(GUEST_INIT), true);
  file('kpc/lib.sh', readFileSync(GUEST_LIB));
  file('kpc/peer-echo.sh', readFileSync(GUEST_PEER_ECHO), true);
  file('kpc/run.env', `KPC_NONCE=${nonce}\nKPC_PRELOAD="${PRELOAD.join(' ')}"\n`);
  dir('kpc/out');
  cases.forEach((c, i) => {
    const idx = String(i).padStart(3, '0');
    const base = `kpc/cases/${idx}`;
    dir(`${base}/files`);
    file(`${base}/case.sh`, caseScript(c, idx), true);
    file(`${base}/timeout`, `${caseTimeout(c)}\n`);
    const nb = nodeBatch(c);
    if (nb) file(`${base}/node.batch`, nb);
    for (const ns of c.netns ?? []) file(`${base}/ns-${ns.name}.batch`, netnsBatch(ns));
    if (c.script !== undefined) file(`${base}/script.sh`, userScript(c.script), true);
    for (const [name, data] of Object.entries(c.files ?? {})) file(`${base}/files/${name}`, data, name.endsWith('.sh'));
  });
  return cpioNewc(entries);
}

// ---------------------------------------------------------------------------------------------
// Result parsing
// ---------------------------------------------------------------------------------------------

interface ParsedRun {
  kernel?: string;
  readySec?: number;
  doneSec?: number;
  started: Map<number, number>;
  finished: Map<number, { uptime: number; files: Map<string, Buffer> }>;
  warnings: string[];
  done: boolean;
}

export function parseResultText(raw: string, nonce: string): ParsedRun {
  const out: ParsedRun = { started: new Map(), finished: new Map(), warnings: [], done: false };
  const mark = `=====KPC-${nonce} `;
  let collecting: { idx: number; uptime: number; b64: string[] } | undefined;
  for (const line of raw.split('\n')) {
    if (!line.startsWith(mark)) {
      if (collecting) collecting.b64.push(line.trim());
      continue;
    }
    const body = line.slice(mark.length).replace(/=====\s*$/, '');
    const [word, ...rest] = body.split(' ');
    const kv = Object.fromEntries(rest.filter((r) => r.includes('=')).map((r) => [r.slice(0, r.indexOf('=')), r.slice(r.indexOf('=') + 1)]));
    switch (word) {
      case 'BOOT':
        out.kernel = kv.kernel;
        break;
      case 'READY':
        out.readySec = Number(kv.uptime);
        break;
      case 'WARN':
        out.warnings.push(rest.join(' '));
        break;
      case 'START':
        out.started.set(Number(rest[0]), Number(kv.uptime));
        break;
      case 'CASE':
        collecting = { idx: Number(rest[0]), uptime: Number(kv.uptime), b64: [] };
        break;
      case 'END':
        if (collecting && collecting.idx === Number(rest[0])) {
          let files = new Map<string, Buffer>();
          try {
            files = untar(Buffer.from(collecting.b64.join(''), 'base64'));
          } catch (e) {
            out.warnings.push(`case ${collecting.idx}: cannot read its output archive: ${String(e)}`);
          }
          out.finished.set(collecting.idx, { uptime: collecting.uptime, files });
        }
        collecting = undefined;
        break;
      case 'DONE':
        out.doneSec = Number(kv.uptime);
        out.done = true;
        break;
    }
  }
  return out;
}

function outputsOf(files: Map<string, Buffer>): Record<string, VmOutput> {
  const outputs: Record<string, VmOutput> = {};
  const names = new Set<string>();
  for (const f of files.keys()) {
    const m = /^(.*)\.(stdout|stderr|rc)$/.exec(f);
    if (m) names.add(m[1]!);
  }
  for (const n of [...names].sort()) {
    const rc = files.get(`${n}.rc`)?.toString().trim();
    outputs[n] = {
      code: rc === undefined || rc === '' ? -1 : Number(rc),
      stdout: files.get(`${n}.stdout`)?.toString('utf8') ?? '',
      stderr: files.get(`${n}.stderr`)?.toString('utf8') ?? '',
    };
  }
  return outputs;
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

/** Boot once, run every case, return the results and run details. Throws VmError when the VM
 * cannot be prepared or never got as far as running a case. */
export async function runVM(cases: VmCase[], opts: VmRunOptions = {}): Promise<VmRun> {
  if (!cases.length) throw new VmError('runInVM: no cases');
  cases.forEach(checkCase);
  const cacheDir = opts.cacheDir ?? defaultCacheDir();
  let image = await prepareVmImage(cacheDir);
  if (!existsSync(image.base) || !existsSync(image.vmlinuz)) {
    // another process rebuilt the cache (build.sh or a tool version changed) and removed ours
    imagePromises.delete(cacheDir);
    image = await prepareVmImage(cacheDir);
  }
  const qemu = findQemu();
  if (!qemu) throw new VmError(`no ${process.env.KPC_VM_QEMU || 'qemu-system-x86_64'} (Debian package qemu-system-x86)`);
  const accel = chooseAccel(opts.accel);
  const needSocat = cases.some(needsSocat);
  if (needSocat && !image.socat) throw new VmError('a case serves UDP or peer answers but the image has no socat (install socat, rerun test/vm/build.sh)');

  const nonce = randomBytes(6).toString('hex');
  const work = mkdtempSync(join(tmpdir(), 'kpc-vm-'));
  const initrd = join(work, 'initrd.img');
  const consolePath = join(work, 'console.log');
  const resultPath = join(work, 'result.txt');
  try {
    const segs = [readFileSync(image.base)];
    if (needSocat && image.socat) segs.push(readFileSync(image.socat));
    segs.push(gzipSync(runSegment(cases, nonce), { level: 1 }));
    writeFileSync(initrd, Buffer.concat(segs));
    writeFileSync(resultPath, '');

    const bootAllowance = accel === 'kvm' ? 30 : 90;
    const timeoutMs = opts.timeoutMs ?? (bootAllowance + cases.reduce((s, c) => s + caseTimeout(c), 0) + 10) * 1000;
    const args = [
      '-machine', `pc,accel=${accel}`,
      '-cpu', 'max',
      '-smp', '1',
      '-m', String(opts.memoryMb ?? 384),
      '-nodefaults', '-no-user-config', '-display', 'none', '-monitor', 'none', '-no-reboot',
      '-nic', 'none',
      '-serial', `file:${consolePath}`,
      '-chardev', `file,id=res,path=${resultPath}`,
      '-device', 'isa-serial,chardev=res',
      '-kernel', image.vmlinuz,
      '-initrd', initrd,
      '-append', 'console=ttyS0 quiet loglevel=1 panic=-1 cryptomgr.notests',
    ];
    // coreutils timeout is the backstop should this process die before its timer fires.
    const secs = Math.ceil(timeoutMs / 1000) + 5;
    const t0 = Date.now();
    const r = await execFile(['timeout', '-s', 'KILL', String(secs), qemu, ...args], timeoutMs, VM_ENV, /KVM internal error/);
    const wallMs = Date.now() - t0;
    const raw = readFileSync(resultPath, 'utf8');
    const consoleText = existsSync(consolePath) ? readFileSync(consolePath, 'utf8') : '';
    const parsed = parseResultText(raw, nonce);
    const tail = consoleText.split('\n').slice(-15).join('\n');
    if (!parsed.started.size) {
      throw new VmError(
        `the VM ran no case (qemu exit ${r.code}${r.timedOut ? `, killed after ${timeoutMs} ms` : ''}; ${r.stderr.trim().slice(0, 500)}). Console tail:\n${tail}`,
        consoleText,
      );
    }
    const why = r.timedOut ? `the VM was killed after ${timeoutMs} ms` : `the VM stopped early (qemu exit ${r.code})`;
    const results: VmResult[] = cases.map((c, i) => {
      const fin = parsed.finished.get(i);
      if (!fin) {
        const started = parsed.started.has(i);
        return {
          name: c.name,
          outputs: {},
          error: `${started ? 'case did not finish' : 'case never started'}: ${why}. Console tail:\n${tail}`,
        };
      }
      const outputs = outputsOf(fin.files);
      const driver = outputs._case;
      delete outputs._case;
      const started = parsed.started.get(i);
      const res: VmResult = {
        name: c.name,
        outputs,
        ...(started !== undefined ? { seconds: +(fin.uptime - started).toFixed(2) } : {}),
        ...(driver ? { log: driver.stderr } : {}),
      };
      if (!driver) res.error = 'case left no record';
      else if (driver.code === 137) res.error = `case timed out in the guest after ${caseTimeout(c)} s; ${driver.stderr.trim()}`;
      else if (driver.code !== 0) res.error = `case setup failed (exit ${driver.code}): ${driver.stderr.replace(/^T .*\n/gm, '').trim()}`;
      return res;
    });
    return {
      results,
      kernel: parsed.kernel ?? image.info.KVER ?? '?',
      accel,
      wallMs,
      ...(parsed.readySec !== undefined ? { readySec: parsed.readySec } : {}),
      ...(parsed.doneSec !== undefined ? { doneSec: parsed.doneSec } : {}),
      console: consoleText,
      raw,
      warnings: parsed.warnings,
    };
  } finally {
    const keep = opts.keepDir ?? process.env.KPC_VM_KEEP;
    if (keep) {
      mkdirSync(keep, { recursive: true });
      for (const f of ['initrd.img', 'console.log', 'result.txt']) {
        if (existsSync(join(work, f))) writeFileSync(join(keep, f), readFileSync(join(work, f)));
      }
    }
    rmSync(work, { recursive: true, force: true });
  }
}

/** Boot once, run the cases in order, return one result per case (see the module header). */
export async function runInVM(cases: VmCase[], opts: VmRunOptions = {}): Promise<VmResult[]> {
  return (await runVM(cases, opts)).results;
}

/** The answers of a connect probe's output, one per attempt ('!fail rc=N' for failures). */
export function probeAnswers(out: VmOutput | undefined): string[] {
  if (!out) return [];
  return out.stdout.split('\n').filter((l) => l !== '');
}

/**
 * The `kpc dns` golden cases (fixtures/dns/<case>/: case.yaml, input/, expected.zone,
 * expected.err) and what the DNS-server tests need: a reader for the expected zone text (the
 * test's own, not kpc's), a reader for dig's output, and an nsd started in a network namespace.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { FIXTURES_ROOT } from '../helpers/fixtures.js';
import { findCommand } from '../netns/lab.js';

export const DNS_FIXTURES = join(FIXTURES_ROOT, 'dns');

export interface ResolveExpectation {
  name: string;
  type: string;
  from: string;
  outcome: 'answer' | 'NXDOMAIN' | 'NODATA' | 'upstream';
  answeredBy?: number;
  /** Only CoreDNS can answer it (pod names): not asked of the zone files. */
  oracleOnly?: boolean;
}

export interface DnsCase {
  name: string;
  dir: string;
  description: string;
  /** argv after `kpc` (starts with `dns`); the runner appends `-f input -R`. */
  args: string[];
  expectedZone: string;
  expectedErr: string[];
  absent: string[];
  resolve: ResolveExpectation[];
}

export function loadDnsCases(root = DNS_FIXTURES): DnsCase[] {
  return readdirSync(root)
    .sort()
    .map((n) => join(root, n))
    .filter((dir) => statSync(dir).isDirectory() && existsSync(join(dir, 'case.yaml')))
    .map((dir): DnsCase => {
      const spec = parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as Record<string, unknown>;
      const err = join(dir, 'expected.err');
      return {
        name: dir.slice(root.length + 1),
        dir,
        description: String(spec.description ?? ''),
        args: (spec.args as unknown[]).map(String),
        expectedZone: readFileSync(join(dir, 'expected.zone'), 'utf8'),
        expectedErr: existsSync(err) ? readFileSync(err, 'utf8').split('\n').filter((l) => l.trim() !== '') : [],
        absent: ((spec.absent as unknown[] | undefined) ?? []).map(String),
        resolve: ((spec.resolve as ResolveExpectation[] | undefined) ?? []).map((r) => ({ ...r, name: String(r.name), type: String(r.type), from: String(r.from) })),
      };
    });
}

export function caseArgv(c: DnsCase, extra: string[] = []): string[] {
  return [...c.args, ...extra, '-f', join(c.dir, 'input'), '-R'];
}

/** The value of `--flag` in a case's args. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

// ---------------------------------------------------------------------------------------------
// The expected zone text, read as a master file (the subset the fixtures use)
// ---------------------------------------------------------------------------------------------

export interface ZoneRecord {
  /** Absolute owner, lower case. */
  name: string;
  ttl: number;
  type: string;
  /** RDATA as written, single spaces. */
  data: string;
}

export interface ExpectedZone {
  origin: string;
  records: ZoneRecord[];
  /** The zone's text as one file (kpc dns -o DIR writes it so). */
  text: string;
}

/** Split kpc dns's stdout (zones separated by a blank line, each starting `; zone `) into zones. */
export function splitZones(text: string): string[] {
  const starts: number[] = [];
  const re = /^; zone /gm;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index);
  return starts.map((s, i) => {
    const chunk = text.slice(s, i + 1 < starts.length ? starts[i + 1] : undefined);
    return i + 1 < starts.length ? chunk.replace(/\n\n$/, '\n') : chunk;
  });
}

export function readZone(text: string): ExpectedZone {
  let origin = '';
  let ttl = 0;
  const records: ZoneRecord[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s;.*$/, '').trim();
    if (line === '' || line.startsWith(';')) continue;
    const f = line.split(/\s+/);
    if (f[0] === '$ORIGIN') {
      origin = f[1]!.toLowerCase();
      continue;
    }
    if (f[0] === '$TTL') {
      ttl = Number(f[1]);
      continue;
    }
    const owner = f[0] === '@' ? origin : f[0]!.endsWith('.') ? f[0]! : `${f[0]}.${origin}`;
    let i = 1;
    let recTTL = ttl;
    if (/^\d+$/.test(f[i]!)) recTTL = Number(f[i++]);
    if (f[i] === 'IN') i++;
    const type = f[i++]!;
    records.push({ name: owner.toLowerCase(), ttl: recTTL, type, data: f.slice(i).join(' ') });
  }
  return { origin, records, text };
}

export function expectedZones(c: DnsCase): ExpectedZone[] {
  return splitZones(c.expectedZone).map(readZone);
}

/** The zone of the loaded set that holds `name` (longest origin). */
export function zoneOf(zones: readonly ExpectedZone[], name: string): ExpectedZone | undefined {
  return [...zones].filter((z) => name === z.origin || name.endsWith(`.${z.origin}`)).sort((a, b) => b.origin.length - a.origin.length)[0];
}

export interface Answer {
  rcode: string;
  /** `name ttl IN TYPE data`, sorted. */
  answer: string[];
}

function rrLine(r: ZoneRecord): string {
  return `${r.name} ${r.ttl} IN ${r.type} ${r.data}`;
}

/**
 * What an authoritative server loaded with these zones answers (RFC 1034 §4.3.2, without
 * delegations or wildcards): the RRset; a CNAME, followed inside its zone; NODATA for a name that
 * exists (with records or names below it); NXDOMAIN otherwise.
 */
export function authoritativeAnswer(zones: readonly ExpectedZone[], name: string, type: string): Answer | undefined {
  const z = zoneOf(zones, name);
  if (!z) return undefined;
  const chain: ZoneRecord[] = [];
  let current = name;
  for (let hops = 0; hops < 8; hops++) {
    const at = z.records.filter((r) => r.name === current);
    const want = at.filter((r) => r.type === type);
    if (want.length > 0) return { rcode: 'NOERROR', answer: [...chain, ...want].map(rrLine).sort() };
    const cname = at.find((r) => r.type === 'CNAME');
    if (cname && type !== 'CNAME') {
      chain.push(cname);
      const target = cname.data.toLowerCase();
      if (!(target === z.origin || target.endsWith(`.${z.origin}`))) return { rcode: 'NOERROR', answer: chain.map(rrLine).sort() };
      current = target;
      continue;
    }
    const exists = at.length > 0 || z.records.some((r) => r.name.endsWith(`.${current}`));
    return { rcode: exists ? 'NOERROR' : 'NXDOMAIN', answer: chain.map(rrLine).sort() };
  }
  return { rcode: 'SERVFAIL', answer: [] };
}

/** Names below a zone that hold no record but have names below them (empty non-terminals). */
export function emptyNonTerminals(z: ExpectedZone): string[] {
  const owners = new Set(z.records.map((r) => r.name));
  const out = new Set<string>();
  for (const o of owners) {
    let n = o;
    while (n !== z.origin) {
      n = n.slice(n.indexOf('.') + 1);
      if (n === z.origin || !n.endsWith(`.${z.origin}`)) break;
      if (!owners.has(n)) out.add(n);
    }
  }
  return [...out].sort();
}

// ---------------------------------------------------------------------------------------------
// dig and nsd
// ---------------------------------------------------------------------------------------------

function command(name: string): string {
  const path = findCommand(name);
  if (!path) throw new Error(`${name} not found (.ci/run installs nsd and bind9-dnsutils)`);
  return path;
}

/** Parse `dig +noall +question +answer +comments` output of one or several queries. */
export function parseDig(out: string): { name: string; type: string; rcode: string; answer: string[] }[] {
  const res: { name: string; type: string; rcode: string; answer: string[] }[] = [];
  let cur: { name: string; type: string; rcode: string; answer: string[] } | undefined;
  let section = '';
  for (const line of out.split('\n')) {
    const h = /->>HEADER<<- opcode: \w+, status: (\w+)/.exec(line);
    if (h) {
      cur = { name: '', type: '', rcode: h[1]!, answer: [] };
      res.push(cur);
      section = '';
      continue;
    }
    const s = /^;; (\w+) SECTION:/.exec(line);
    if (s) {
      section = s[1]!;
      continue;
    }
    if (!cur) continue;
    if (section === 'QUESTION' && line.startsWith(';') && !line.startsWith(';;')) {
      const f = line.slice(1).trim().split(/\s+/);
      cur.name = f[0]!.toLowerCase();
      cur.type = f[2]!;
      continue;
    }
    if (section === 'ANSWER' && line.trim() !== '' && !line.startsWith(';')) {
      const f = line.trim().split(/\s+/);
      cur.answer.push(`${f[0]!.toLowerCase()} ${f[1]} ${f[2]} ${f[3]} ${f.slice(4).join(' ')}`);
    }
  }
  for (const r of res) r.answer.sort();
  return res;
}

export interface NsdServer {
  netns: string;
  /** Ask every (name, type); answers in the same order. */
  query(qs: readonly { name: string; type: string }[]): Answer[];
  stop(): Promise<void>;
}

function nsdConf(dir: string, zones: readonly string[]): string {
  return [
    'server:',
    '  ip-address: 127.0.0.1',
    '  port: 53',
    '  username: ""',
    '  chroot: ""',
    `  zonesdir: "${dir}"`,
    '  database: ""',
    `  zonelistfile: "${dir}/zone.list"`,
    `  xfrdfile: "${dir}/xfrd.state"`,
    `  xfrdir: "${dir}"`,
    `  pidfile: "${dir}/nsd.pid"`,
    `  logfile: "${dir}/nsd.log"`,
    '  server-count: 1',
    '  verbosity: 1',
    // Response rate limiting (on by default, 200/s per client) would drop the batch of queries.
    '  rrl-ratelimit: 0',
    '  rrl-whitelist-ratelimit: 0',
    'remote-control:',
    '  control-enable: no',
    ...zones.flatMap((z) => ['zone:', `  name: "${z}"`, `  zonefile: "${z}.zone"`]),
    '',
  ].join('\n');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Serve the zone files of `zoneDir` (`<zone>.zone` each) with nsd on 127.0.0.1:53 inside the
 * network namespace `netns` (created and brought up by the caller).
 */
export async function startNsd(netns: string, zoneDir: string): Promise<NsdServer> {
  const zones = readdirSync(zoneDir)
    .filter((f) => f.endsWith('.zone'))
    .map((f) => f.slice(0, -'.zone'.length))
    .sort();
  const work = mkdtempSync(join(tmpdir(), 'kpc-nsd-'));
  for (const z of zones) writeFileSync(join(work, `${z}.zone`), readFileSync(join(zoneDir, `${z}.zone`)));
  writeFileSync(join(work, 'nsd.conf'), nsdConf(work, zones));
  for (const z of zones) {
    const check = spawnSync(command('nsd-checkzone'), [z, join(work, `${z}.zone`)], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`nsd-checkzone ${z}: ${check.stdout}${check.stderr}`);
  }
  const child: ChildProcess = spawn(command('ip'), ['netns', 'exec', netns, command('nsd'), '-d', '-c', join(work, 'nsd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const dig = (args: string[], input?: string) =>
    spawnSync(command('ip'), ['netns', 'exec', netns, command('dig'), '@127.0.0.1', '+norec', '+tries=1', '+time=2', ...args], { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = dig(['+short', 'SOA', zones[0]!]);
    if (r.status === 0 && r.stdout.trim() !== '') break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGTERM');
      throw new Error(`nsd did not start: ${log}${existsSync(join(work, 'nsd.log')) ? readFileSync(join(work, 'nsd.log'), 'utf8') : ''}`);
    }
    await sleep(100);
  }
  return {
    netns,
    query(qs) {
      if (qs.length === 0) return [];
      const file = join(work, 'queries.txt');
      writeFileSync(file, qs.map((q) => `${q.name} ${q.type}`).join('\n') + '\n');
      const r = dig(['+noall', '+question', '+answer', '+comments', '-f', file]);
      if (r.status !== 0) throw new Error(`dig failed: ${r.stderr}`);
      const parsed = parseDig(r.stdout);
      if (parsed.length !== qs.length) throw new Error(`dig answered ${parsed.length} of ${qs.length} queries:\n${r.stdout}`);
      return parsed.map((p, i) => {
        if (p.name !== qs[i]!.name.toLowerCase() || p.type !== qs[i]!.type) throw new Error(`dig answer ${i} is for ${p.name} ${p.type}, asked ${qs[i]!.name} ${qs[i]!.type}`);
        return { rcode: p.rcode, answer: p.answer };
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The query model of a case, built through the library (for the per-query sweep)
// ---------------------------------------------------------------------------------------------

/** The DnsCluster `kpc dns <args>` builds for a case (only the flags the fixtures use). */
export async function clusterFor(c: DnsCase): Promise<import('../../src/dns/model.js').DnsCluster> {
  const { loadInput, partitionObjects, releaseOf } = await import('../../src/cli/pipeline.js');
  const { buildDnsCluster } = await import('../../src/dns/model.js');
  const { parseDomain } = await import('../../src/dns/names.js');
  const args = c.args.slice(1);
  const opts = { clusterDomain: 'cluster.local', ttl: 5, serial: 1, dnsService: 'kube-system/kube-dns', dnsPodIp: [] as string[] };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i]!, args[i + 1]!];
    if (flag === '--cluster-domain') opts.clusterDomain = value;
    else if (flag === '--ttl') opts.ttl = Number(value);
    else if (flag === '--serial') opts.serial = Number(value);
    else if (flag === '--dns-service') opts.dnsService = value;
    else if (flag === '--dns-pod-ip') opts.dnsPodIp.push(value);
    else throw new Error(`clusterFor: flag ${flag} not handled`);
  }
  const loaded = loadInput(
    { filename: [join(c.dir, 'input')], recursive: true, namespace: 'default', ipValidation: 'legacy', serviceNodePortRange: '30000-32767' },
    () => new Uint8Array(),
  );
  const input = partitionObjects(loaded.objects, { release: releaseOf({}) });
  const namespaces = new Set(loaded.objects.map((o) => o.object.metadata.namespace).filter((n) => n !== ''));
  const [namespace, name] = opts.dnsService.split('/') as [string, string];
  return buildDnsCluster(
    { services: input.services, slices: input.slices, namespaces },
    { zone: parseDomain(opts.clusterDomain), ttl: opts.ttl, serial: opts.serial, pods: 'insecure', dnsService: { namespace, name }, ...(opts.dnsPodIp.length > 0 ? { dnsPodIPs: opts.dnsPodIp } : {}) },
  );
}

/** The name a resolver asks for an address (`dig -x`), computed here independently of kpc. */
export function reverseOf(text: string): string | undefined {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(text)) return `${text.split('.').reverse().join('.')}.in-addr.arpa.`;
  if (!text.includes(':')) return undefined;
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const nibbles = groups.map((g) => g.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa.`;
}

/**
 * The names a glibc resolver tries for `name` from a Pod in `ns` (search <ns>.svc.<zone>
 * svc.<zone> <zone>, ndots:5), in order: written here from resolv(5) and res_search, not from kpc.
 */
export function searchCandidates(name: string, ns: string, zone: string): string[] {
  if (name.endsWith('.')) return [name];
  const z = zone.replace(/\.$/, '');
  const search = [`${ns}.svc.${z}`, `svc.${z}`, z].map((d) => `${name}.${d}.`);
  const dots = name.split('.').length - 1;
  return dots >= 5 ? [`${name}.`, ...search] : [...search, `${name}.`];
}

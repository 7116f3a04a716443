/**
 * The block-YAML reader (src/parser/yaml-block.ts) against the path it stands in front of
 * (yaml-fast.ts: js-yaml under kpc's SCHEMA plus the cleanliness check). On every input the
 * reader either gives up or gives exactly what that path gives: the same non-empty documents,
 * the same values (Object.is on every scalar, so -0 and NaN count; keys in the same order) and
 * the same spans on every object. The expected side is js-yaml, not the reader.
 *
 * Inputs: bench/gen's YAML, every YAML file under fixtures/, hand-written kubectl-style
 * documents with quoting edge cases, documents emitted from random values in random styles,
 * and random mutations of all of these (seeded, so a failure reproduces).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCluster, renderCluster } from '../../bench/gen.js';
import { LIMITS } from '../../src/parser/raw-objects.js';
import { openDocuments, readDocuments } from '../../src/parser/documents.js';
import type { ReadResult } from '../../src/parser/raw-objects.js';
import { blockDocuments, obviousPlain, openYAMLBlock, parseYAMLBlock } from '../../src/parser/yaml-block.js';
import { readYAMLWithoutBlockReader } from '../../src/parser/yaml-documents.js';
import { anchorTokens, mayHoldDirectives, parseYAMLFast, resolvePlainScalar, UNCLEAN, type FastDocument } from '../../src/parser/yaml-fast.js';

type Outcome = { accepted: true } | { accepted: false } | { accepted: true; difference: string };

/** The first difference between the two readers' documents, or '' when there is none. */
function difference(mine: FastDocument[], theirs: FastDocument[] | undefined): string {
  if (theirs === undefined) return 'js-yaml path gives up (or refuses) where the block reader accepts';
  const docs = theirs.filter((d) => d.value !== null && d.value !== undefined);
  if (docs.length !== mine.length) return `${mine.length} documents against ${docs.length}`;
  for (let d = 0; d < docs.length; d++) {
    const found = compare(mine[d]!.value, docs[d]!.value, mine[d]!.spans, docs[d]!.spans, `doc[${d}]`);
    if (found) return found;
  }
  return '';
}

function compare(a: unknown, b: unknown, sa: FastDocument['spans'], sb: FastDocument['spans'], path: string): string {
  if (a === null || typeof a !== 'object' || b === null || typeof b !== 'object') {
    return Object.is(a, b) ? '' : `${path}: ${String(a)} (${typeof a}) against ${String(b)} (${typeof b})`;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array against non-array`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: prototypes differ`;
  const spanA = JSON.stringify(sa.get(a));
  const spanB = JSON.stringify(sb.get(b));
  if (spanA !== spanB) return `${path}: span ${spanA} against ${spanB}`;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.join('\u0000') !== kb.join('\u0000')) return `${path}: keys ${JSON.stringify(ka)} against ${JSON.stringify(kb)}`;
  for (const k of ka) {
    const found = compare((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], sa, sb, `${path}.${k}`);
    if (found) return found;
  }
  return '';
}

function check(text: string): Outcome {
  const mine = parseYAMLBlock(text, LIMITS);
  if (mine === undefined) return { accepted: false };
  const found = difference(mine, parseYAMLFast(text, LIMITS));
  return found ? { accepted: true, difference: found } : { accepted: true };
}

function expectSame(text: string): boolean {
  const out = check(text);
  if ('difference' in out) expect.fail(`${out.difference}\n--- input ---\n${text}`);
  return out.accepted;
}

/** A seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One random edit of `text`: an insert from `inserts` (a share `insertShare` of the edits), a
 * cut of 1 to 4 characters, or a line's indentation moved by one space.
 */
function mutated(text: string, random: () => number, inserts: readonly string[], insertShare: number): string {
  const at = Math.floor(random() * text.length);
  const r = random();
  if (r < insertShare) return text.slice(0, at) + inserts[Math.floor(random() * inserts.length)] + text.slice(at);
  if (r < 0.8) return text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 4));
  const ls = text.lastIndexOf('\n', at - 1) + 1;
  return random() < 0.5 ? `${text.slice(0, ls)} ${text.slice(ls)}` : text.slice(0, ls) + text.slice(ls).replace(/^ /, '');
}

const genYAML = (services: number, seed: number, format: 'yaml' | 'yaml-anchors' = 'yaml') => [...renderCluster(generateCluster({ services, seed }), format)].join('');

/** kubectl-style documents with the quoting and layout cases the reader must get right. */
const KUBECTL = `apiVersion: v1
items:
- apiVersion: v1
  kind: Service
  metadata:
    annotations:
      example.com/on: "on"
      example.com/yes: 'yes'
      example.com/mode: "0755"
      example.com/exp: "1e3"
      example.com/inf: ".inf"
      example.com/tilde: "~"
      example.com/null: "null"
      example.com/quote: 'it''s'
      example.com/escapes: "tab\\tnl\\nq\\"bs\\\\ slash\\/ \\u00e9 \\x41 \\U0001F600 \\e\\0 \\_"
      example.com/hash: "a # b"
      example.com/empty: ""
      example.com/single-empty: ''
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"v1","kind":"Service","metadata":{"annotations":{},"name":"web","namespace":"default"}}
    creationTimestamp: "2024-01-02T03:04:05Z"
    labels:
      app: web
      "quoted key": x
      'single: key': yy
      a:b: colon-in-key
      "on": quoted-on-key
      "123": numeric-key
      1.0: float-key
      0x1F: hex-key
    name: web
    namespace: default
    resourceVersion: "1234"
    uid: 0b7e4f2c-1d2e-4f3a-9b8c-7d6e5f4a3b2c
  spec:
    clusterIP: 10.96.0.10
    clusterIPs:
    - 10.96.0.10
    - 2001:db8::1
    externalName: 10.0.0.1:80
    internalTrafficPolicy: Cluster
    ipFamilies:
    - IPv4
    ipFamilyPolicy: SingleStack
    ports:
    - name: http
      port: 80
      protocol: TCP
      targetPort: 8080
    - name: "https"
      nodePort: 30443
      port: 443
      protocol: TCP
      targetPort: https   # a comment after a value
    selector:
      app: web
    sessionAffinity: None
    type: ClusterIP
    weights: [] # empty
    extra: {}
    nothing:
    tilde: ~
    nul: null
    t: true
    f: false
    neg: -1
    zero: 0
    float: 1.5
    exp: 1e3
    inf: .inf
    ninf: -.inf
    nan: .nan
    hex: 0x1F
    big: 123456789012345678901234567890
    negzero: -0
    dotted: 1.2.3.4
    plus: +12
    value with spaces: a b  c
    trailing: x
    hash: a#b
    url: http://example.com/a?b=c#frag
  status:
    loadBalancer: {}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  addressType: IPv4
  endpoints:
  - addresses:
    - 10.0.3.4
    conditions:
      ready: true
      serving: true
      terminating: false
    nodeName: node-0
    targetRef:
      kind: Pod
      name: web-0
      namespace: default
  metadata:
    labels:
      kubernetes.io/service-name: web
    name: web-abc12
    namespace: default
  ports:
  - name: http
    port: 8080
    protocol: TCP
kind: List
metadata:
  resourceVersion: ""
`;

/** Hand-written streams: several documents, comments, literal block scalars, CRLF. */
const STREAMS: string[] = [
  KUBECTL,
  `# leading comment\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n...\n`,
  `---\napiVersion: v1\nkind: ConfigMap\ndata:\n  script: |\n    #!/bin/sh\n    echo hi\n\n    # not a comment\n  strip: |-\n    a\n    b\n\n  keep: |+\n    kept\n\n\n  after: x\n`,
  `a: 1\r\nb:\r\n  c: "x"\r\n  d:\r\n  - 1\r\n  - two\r\n# c\r\ne: |\r\n  line\r\n\r\n  more\r\n`,
  `a: 1\nb: 2`,
  `a: |\n  text\n  `,
  `a: |+\n  text\n  `,
  `list:\n  - a\n  - b\nmap:\n    deep: 1\n`,
  `- a\n- b: 1\n  c: 2\n- {}\n- []\n- "q"\n- 'q'\n- |\n  lit\n`,
  `key:    spaced\nother:   # comment\n  nested: 1\n`,
  `a:\n  b:\n    c:\n      d:\n        e: 1\n`,
  `a: x\n  # indented comment\nb: y\n`,
  `a: x\n    # deeper comment\n  \nb: y\n`,
  '',
  '# only a comment\n',
  '\n\n',
  '---\n',
  `a: 'x' # c\nb: "y"   \nc: z   \n`,
  `"a": 1\n'b': 2\n`,
  `a: ""\nb: ''\n`,
  `a: "\\u00"\n`,
  `a: on\n`,
  `a: 0755\n`,
  `a: 1_000\n`,
  `a: 1:30\n`,
  `a: yes\n`,
  `on: 1\n`,
  `a: &x 1\nb: *x\n`,
  `a: !!str 1\n`,
  `a: {b: 1}\n`,
  `a: [1, 2]\n`,
  `? a\n: b\n`,
  `a:\tb\n`,
  `a: b\n  c\n`,
  `a: "b\n  c"\n`,
  `a: >\n  folded\n`,
  `a: |2\n   x\n`,
  `a: 1\na: 2\n`,
  `__proto__: 1\n`,
  `<<: {}\n`,
  `a: b: c\n`,
  `- - a\n`,
  `-\n  a: 1\n`,
  `a:\n- 1\n - 2\n`,
  `a:\n  - 1\n - 2\n`,
  `a: 1\n - 2\n`,
  ` a: 1\n`,
  `%YAML 1.2\n---\na: 1\n`,
  `a: 1\rb: 2\n`,
  '\uFEFFa: 1\n',
  `a: "x\u0085y"\n`,
  `a: x\u2028y\n`,
  `a: caf\u00e9 \u{1F600}\n`,
  `caf\u00e9\u{1F600}: "\u{1F600}x"\n'\u{1F600}': '\u00e9'\nb: |\n  \u{1F600} \u00e9\n`,
  `a: x\uD83Dy\n`,
  `a: x\uDE00y\n`,
  `a: "x\uD83D"\n`,
  `\uD83D: 1\n`,
  `a: 1 # \u0085 \t \uFEFF \u2028 \x7f\n# \x01 \uD800\nb: 2\n`,
  `a: 1 # c\x00\n`,
  `a: x\x7fy\n`,
  `a: 'x\x9fy'\n`,
  `a: |\n  x\ty\n`,
  `a: |\n  x\x85y\n`,
  `a: 1\n\t\nb: 2\n`,
  `a: 1\n  \t# c\nb: 2\n`,
  `a: "\uFEFF"\n`,
  `a: 1\n# \r comment with a lone CR\nb: 2\n`,
  `a: --- x\n`,
  `---x: 1\n`,
  `--- a\n`,
  `--- # c\na: 1\n`,
  `a: 1 # c: d\n`,
  `a: -\n`,
  `a: - b\n`,
  `a: |\n\n  x\n`,
  `a: |\n  \n  x\n`,
  `a: |\nx\n`,
  `a: |#\n  x\n`,
  `a: | # comment\n  x\n`,
  `a: "x"y\n`,
  `a: "x"#y\n`,
  `a: b #c\n  #d\n  e\n`,
  `- a\n  # c\n- b\n`,
  `a:\n  b: 1\n  - c\n`,
  `a:\n  b: 1\n c: 2\n`,
  `x: 1\n...\n`,
  `a: 1.0\nb: +.5\nc: .5\nd: 1e+3\ne: -0.0\nf: 0b101\ng: 0o7\nh: 1.2e-3\ni: 01.5\n`,
  `1: a\n-1: b\n.inf: c\n~: d\nnull: e\ntrue: f\n1e3: g\n0o7: h\n`,
];

describe('the block-YAML reader builds what js-yaml builds, or gives up', () => {
  it('accepts bench/gen YAML and agrees on every value and span', () => {
    for (const seed of [1, 2, 3]) expect(expectSame(genYAML(150, seed))).toBe(true);
  });

  it('gives up on bench/gen YAML with anchors (the mixed path reads it)', () => {
    expect(check(genYAML(150, 1, 'yaml-anchors')).accepted).toBe(false);
  });

  it('agrees on every YAML file under fixtures/', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.ya?ml$/.test(name)) files.push(p);
      }
    };
    walk('fixtures');
    expect(files.length).toBeGreaterThan(500);
    let accepted = 0;
    for (const f of files) if (expectSame(readFileSync(f, 'utf8'))) accepted++;
    // Most fixtures are kubectl-style; the others hold flow sequences with content
    // (`clusterIPs: [10.96.0.10]`), multi-line quoted scalars, anchors or errors.
    expect(accepted / files.length).toBeGreaterThan(0.6);
  });

  it('accepts the kubectl-style cases with quoting edge cases, and agrees', () => {
    expect(expectSame(KUBECTL)).toBe(true);
    expect(expectSame(KUBECTL.replace(/\n/g, '\r\n'))).toBe(true);
    expect(expectSame(STREAMS[2]!)).toBe(true);
    expect(expectSame(STREAMS[3]!)).toBe(true);
    // Non-ASCII in keys and scalars, and odd characters in comments (which js-yaml skips too).
    expect(expectSame(`caf\u00e9\u{1F600}: "\u{1F600}x"\n'\u{1F600}': '\u00e9'\nb: |\n  \u{1F600} \u00e9\n`)).toBe(true);
    expect(expectSame(`a: 1 # \u0085 \t \uFEFF \u2028 \x7f\n# \x01 \uD800\nb: 2\n`)).toBe(true);
  });

  it('agrees (or gives up) on every hand-written stream', () => {
    for (const s of STREAMS) expectSame(s);
  });

  it('gives up where js-yaml or kpc would read it differently or refuse it', () => {
    for (const s of [`a: on\n`, `a: 0755\n`, `on: 1\n`, `a: &x 1\nb: *x\n`, `a: 1\na: 2\n`, `a: b\n  c\n`, `a:\tb\n`, `__proto__: 1\n`, `a: 1\rb: 2\n`, `a: "\\u00"\n`]) {
      expect(check(s).accepted, s).toBe(false);
    }
  });

  it('resolves obvious plain scalars as js-yaml does', () => {
    const random = rng(7);
    const alphabet = '0123456789.-+eExXoOb_:abnNtTfFyYlLuUsS~ ';
    const words = ['null', 'Null', 'NULL', 'nULL', 'true', 'True', 'TRUE', 'tRUE', 'false', 'False', 'FALSE', 'fALSE', 'y', 'Y', 'yes', 'Yes', 'YES', 'yES', 'n', 'N', 'no', 'No', 'NO', 'nO', 'on', 'On', 'ON', 'oN', 'off', 'Off', 'OFF', 'oFF', 'o', 'of', 'nul', 'tru', 'fals', 'ye', 'trues', 'nulls'];
    const samples = [...words, '0', '00', '01', '10', '999999999999999', '9999999999999999', '1.2', '1.2.3', '1..2', '1.2.', '10.0.0.1', '2001:db8::1', '10.0.0.1:80', '1:30', '1:3a', '1:', '1e3:x', '2001:DB8::', '1_0:5'];
    const hexish = '0123456789abcdefABCDEF:._+-xXoObB';
    for (let k = 0; k < 20000; k++) {
      let s = String(1 + Math.floor(random() * 9));
      const n = Math.floor(random() * 8);
      for (let i = 0; i < n; i++) s += hexish[Math.floor(random() * hexish.length)];
      samples.push(s);
    }
    for (let k = 0; k < 20000; k++) {
      let s = '';
      const n = 1 + Math.floor(random() * 8);
      for (let i = 0; i < n; i++) s += alphabet[Math.floor(random() * alphabet.length)];
      samples.push(s.trim() || 'x');
    }
    for (const s of samples) {
      const obvious = obviousPlain(s);
      if (obvious === undefined) continue;
      const resolved = resolvePlainScalar(s);
      expect(resolved === UNCLEAN ? 'UNCLEAN' : resolved, s).toStrictEqual(obvious);
    }
  });

  it('agrees on documents emitted from random values in random styles', () => {
    const random = rng(Number(process.env.KPC_YAML_FUZZ_SEED ?? 11));
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const scalars = ['on', 'yes', 'no', 'y', 'n', 'off', '0755', '010', '1e3', '.inf', '-.inf', '.nan', '~', 'null', 'Null', 'true', 'False', '2001:db8::1', '10.0.0.1:80', '10.0.0.1', 'a: b', 'a #b', 'a#b', '#x', '', ' ', 'x ', ' x', "it's", 'say "hi"', 'back\\slash', 'tab\tx', 'é', '\u{1F600}', '1_000', '1:30', '0x1F', '0o17', '0b101', '-0', '+1', '1.0', '1.', '.5', '123456789012345678', 'line1\nline2\n', 'line1\nline2', 'trail\n\n', '-', '- x', '?', ':x', 'x:', '[]', '{}', '[a]', '&a', '*a', '!a', '|', '>', '%', '@', '`', '---', '...', 'a\u0085b'];
    const scalar = (): unknown => {
      const r = random();
      if (r < 0.15) return Math.floor(random() * 70000);
      if (r < 0.2) return random() < 0.5;
      if (r < 0.23) return null;
      if (r < 0.28) return (random() - 0.5) * 1e6;
      return pick(scalars);
    };
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 4 || r < 0.45) return scalar();
      if (r < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      const o: Record<string, unknown> = {};
      const n = Math.floor(random() * 5);
      for (let i = 0; i < n; i++) o[random() < 0.8 ? `k${Math.floor(random() * 6)}` : String(pick(scalars))] = value(depth + 1);
      return o;
    };
    const quote = (s: string): string => {
      const r = random();
      if (r < 0.4 && /^[A-Za-z0-9][A-Za-z0-9 ._/:#-]*$/.test(s) && !/[: ]$/.test(s)) return s; // plain, possibly wrong (ambiguous): fine
      if (r < 0.7 && !/[\n\t]/.test(s)) return `'${s.replace(/'/g, "''")}'`;
      return JSON.stringify(s);
    };
    const emit = (v: unknown, indent: string): string => {
      if (Array.isArray(v)) {
        if (v.length === 0) return ' []\n';
        let out = '\n';
        for (const item of v) {
          const body = emit(item, `${indent}  `);
          out += `${indent}- ${body.startsWith('\n') ? body.slice(indent.length + 3) : body.trimStart()}`;
        }
        return out;
      }
      if (v !== null && typeof v === 'object') {
        const entries = Object.entries(v);
        if (entries.length === 0) return ' {}\n';
        let out = '\n';
        for (const [k, x] of entries) out += `${indent}${quote(k)}:${emit(x, `${indent}  `)}`;
        return out;
      }
      if (typeof v === 'string') {
        if (v.includes('\n') && !v.startsWith(' ') && random() < 0.7) {
          const chomp = v.endsWith('\n\n') ? '+' : v.endsWith('\n') ? '' : '-';
          const lines = (chomp === '+' ? v.slice(0, -1) : chomp === '' ? v.slice(0, -1) : v).split('\n');
          return ` |${chomp}\n${lines.map((l) => (l ? `${indent}${l}` : '')).join('\n')}\n${chomp === '+' ? '\n' : ''}`;
        }
        return ` ${quote(v)}\n`;
      }
      return ` ${v === null ? pick(['null', '~', '']) : String(v)}\n`;
    };
    let accepted = 0;
    const N = Number(process.env.KPC_YAML_FUZZ_N ?? 3000);
    for (let k = 0; k < N; k++) {
      const root: Record<string, unknown> = { apiVersion: 'v1', kind: 'Thing' };
      root.data = value(0);
      root.items = [value(1), value(1)];
      const text = emit(root, '').slice(1);
      if (expectSame(text)) accepted++;
    }
    if (process.env.KPC_YAML_FUZZ_REPORT) console.log(`random documents: ${N}, read by the block reader: ${accepted}`);
    expect(accepted).toBeGreaterThan(N * 0.2);
  }, 900_000);

  it('never gives a value js-yaml does not give, on random mutations of valid documents', () => {
    const random = rng(Number(process.env.KPC_YAML_FUZZ_SEED ?? 1234));
    const seeds = [...STREAMS.filter((s) => check(s).accepted && s.length > 20), genYAML(3, 5), genYAML(2, 9).replace(/\n/g, '\r\n')];
    expect(seeds.length).toBeGreaterThanOrEqual(10);
    const inserts = [' ', '  ', '\n', '\r\n', '\r', '\t', ':', ': ', '-', '- ', '#', ' #', "'", '"', '\\', '|', '|-', '|+', '>', '{', '}', '[', ']', '{}', '[]', ',', '?', '&a', '*a', '!', '%', '@', '---', '...', '~', '0', '1', '.', 'e', 'x', 'on', 'yes', '\\u0041', '\\x', '\u00e9', '\u0085', '\uFEFF', '\u{1F600}', '\uD83D', '\uDE00', '\u0000', '\u007f', '\u2028', 'null', '__proto__', '<<'];
    let accepted = 0;
    let changed = 0;
    const N = Number(process.env.KPC_YAML_FUZZ_N ?? 6000); // KPC_YAML_FUZZ_N=200000 for a long run
    for (let k = 0; k < N; k++) {
      let text = seeds[Math.floor(random() * seeds.length)]!;
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (text.length + 1));
        const r = random();
        if (r < 0.35) text = text.slice(0, at) + inserts[Math.floor(random() * inserts.length)] + text.slice(at);
        else if (r < 0.6) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 3));
        else if (r < 0.75) {
          // Indent or outdent a line.
          const ls = text.lastIndexOf('\n', at - 1) + 1;
          text = random() < 0.5 ? `${text.slice(0, ls)}  ${text.slice(ls)}` : text.slice(0, ls) + text.slice(ls).replace(/^ {1,2}/, '');
        } else if (r < 0.88) {
          // Duplicate a line.
          const ls = text.lastIndexOf('\n', at - 1) + 1;
          const le = text.indexOf('\n', at);
          const line = text.slice(ls, le < 0 ? text.length : le + 1);
          text = text.slice(0, ls) + line + text.slice(ls);
        } else {
          // Replace a character.
          text = text.slice(0, at) + inserts[Math.floor(random() * inserts.length)] + text.slice(at + 1);
        }
      }
      const out = check(text);
      if ('difference' in out) expect.fail(`mutation ${k}: ${out.difference}\n--- input ---\n${JSON.stringify(text)}`);
      if (out.accepted) accepted++;
      changed++;
    }
    if (process.env.KPC_YAML_FUZZ_REPORT) console.log(`mutations: ${N}, read by the block reader: ${accepted}`);
    expect(changed).toBe(N);
    // The fuzzing is not vacuous: many mutants are still read by the block reader.
    expect(accepted).toBeGreaterThan(N * 0.15);
  }, 900_000);
});

/**
 * What the loader gets: readDocuments (a List item by item, other input in full) against the
 * js-yaml path alone, as kpc read YAML before the block reader — the objects, their values,
 * every diagnostic, and the position each object's locator gives for a set of field paths.
 */
type FieldPathLike = Array<string | number>;

/** readDocuments of `text` gives what the reader before the block reader gives: values, diagnostics, the positions of `paths`. */
function expectSameAsWithoutBlockReader(text: string, paths: readonly FieldPathLike[]): void {
  const bytes = new TextEncoder().encode(text);
  const mine = readDocuments({ name: 'in.yaml', bytes });
  // The text readDocuments decodes (TextDecoder drops a byte-order mark).
  const theirs = readYAMLWithoutBlockReader('in.yaml', new TextDecoder().decode(bytes));
  const fail = (why: string) => expect.fail(`${why}\n--- input ---\n${JSON.stringify(text).slice(0, 3000)}`);
  if (JSON.stringify(mine.diagnostics) !== JSON.stringify(theirs.diagnostics)) fail(`diagnostics ${JSON.stringify(mine.diagnostics)} against ${JSON.stringify(theirs.diagnostics)}`);
  if (mine.objects.length !== theirs.objects.length) fail(`${mine.objects.length} objects against ${theirs.objects.length}`);
  const none = new WeakMap<object, { start: number; end: number }>();
  mine.objects.forEach((o, i) => {
    const t = theirs.objects[i]!;
    const found = compare(o.value, t.value, none, none, `object[${i}]`);
    if (found) fail(found);
    if (o.origin.file !== t.origin.file) fail('file differs');
    for (const path of paths) {
      const a = JSON.stringify(o.origin.locate(path));
      const b = JSON.stringify(t.origin.locate(path));
      if (a !== b) fail(`object[${i}] at ${JSON.stringify(path)}: ${a} against ${b}`);
    }
  });
}

describe('YAML input reads as before the block reader (objects, diagnostics, positions)', () => {
  const PATHS = [[], ['metadata'], ['metadata', 'name'], ['metadata', 'labels', 'app'], ['spec'], ['spec', 'ports', 0, 'port'], ['spec', 'ports', 1], ['spec', 'nothing', 'here'], ['endpoints', 0, 'addresses', 0], ['status']];

  function sameRead(text: string): void {
    if (/^[ \t\r\n]*\{/.test(text)) return; // JSON input (documents.ts), not this reader's
    expectSameAsWithoutBlockReader(text, PATHS);
  }

  it('takes a kubectl List item by item', () => {
    const block = openYAMLBlock(genYAML(50, 2), LIMITS);
    expect(block && 'list' in block && block.list.count).toBe(genYAML(50, 2).split('\n- ').length - 1);
  });

  it('reads an item the block reader gives up on with js-yaml alone, the others item by item', () => {
    // A flow sequence with content, a multi-line plain scalar, a multi-line quoted one, a folded
    // block scalar, a deeper comment: js-yaml reads each; the file stays a List read item by item.
    const odd = [
      '  spec:\n    clusterIPs: [10.96.0.10, "2001:db8::1"]\n',
      '  metadata:\n    annotations:\n      description: a long text\n        folded onto two lines\n    name: x\n',
      '  metadata:\n    name: "a\n      b"\n',
      '  data:\n    text: >\n      folded\n      text\n\n',
      '  a: 1\n      # deeper comment\n  b: {c: [1, 2]}\n',
      '  a: 1\n  b: 2\n',
    ];
    for (const tail of odd) {
      const text = `apiVersion: v1\nitems:\n- kind: Service\n  metadata:\n    name: a\n- kind: Service\n${tail}# between\n- kind: Node\n  metadata:\n    name: node-1\nkind: List\n`;
      const block = openYAMLBlock(text, LIMITS);
      expect(block && 'list' in block && block.list.count).toBe(3);
      // Every item is taken (the odd one by js-yaml), none spoils the file.
      const opened = openDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(text) });
      expect('json' in opened).toBe(true);
      if ('json' in opened) for (let i = 0; i < 3; i++) expect('failed' in opened.json.take(i), `${tail} item ${i}`).toBe(false);
      sameRead(text);
      sameRead(text.replace(/\n/g, '\r\n'));
      sameRead(text.replace(/\nkind: List\n$/, '\nkind: List'));
    }
  });

  it('agrees on bench/gen YAML, the kubectl-style cases and every YAML fixture', () => {
    for (const seed of [1, 2]) sameRead(genYAML(60, seed));
    sameRead(genYAML(30, 3, 'yaml-anchors'));
    sameRead(KUBECTL);
    sameRead(KUBECTL.replace(/\n/g, '\r\n'));
    for (const s of STREAMS) sameRead(s);
    const walk = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : /\.ya?ml$/.test(n) ? [join(dir, n)] : []));
    for (const f of walk('fixtures')) sameRead(readFileSync(f, 'utf8'));
  }, 300_000);

  it('agrees on mutations of a List (items read, given up on, or spoiling the whole file)', () => {
    const random = rng(Number(process.env.KPC_YAML_FUZZ_SEED ?? 77));
    const base = [KUBECTL, genYAML(4, 8)];
    const inserts = ['\n', '  ', '- ', '-', '#', ' # c', '\n#c\n', '\n- x\n', '\n  - y\n', '\nz: 1\n', '---\n', ':', '"', "'", '|', '{}', '&a', 'on', '\t'];
    const N = Number(process.env.KPC_YAML_FUZZ_N ?? 200);
    for (let k = 0; k < N; k++) {
      let text = base[Math.floor(random() * base.length)]!;
      text = mutated(text, random, inserts, 0.5);
      sameRead(text);
    }
  }, 900_000);
});

/**
 * A List whose items hold anchors and aliases (yaml-anchored-list.ts), and a stream whose documents
 * hold some (readYAMLMixed, documents cut by yaml-block.ts blockDocuments): read item by item (the
 * block reader for the items without, js-yaml and the precise path for the groups of items tied
 * to anchors) against the path before it, readYAMLMixed (js-yaml over the whole file first):
 * the same objects, values, diagnostics and positions (sameRead above), on hand-written and
 * generated Lists and their mutations. Where the reader gives up, the file is read by that path.
 */
describe('YAML with anchors reads item by item (a List) and document by document (a stream) as the whole-file mixed path reads it', () => {
  const PATHS = [[], ['metadata'], ['metadata', 'name'], ['spec'], ['spec', 'ports', 0, 'port'], ['spec', 'ports', 1], ['spec', 'nothing'], ['data', 'a']];

  /** Which reader took the file: the anchored List reader (every item taken), or the whole-file path. */
  function readerOf(text: string): 'items' | 'whole' | 'failed' {
    const opened = openDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(text) });
    if (!('json' in opened) || opened.json.constructor.name !== 'AnchoredListObjects') return 'whole';
    for (let i = 0; i < opened.json.count; i++) if ('failed' in opened.json.take(i)) return 'failed';
    return 'items';
  }

  function sameAnchoredRead(text: string): 'items' | 'whole' | 'failed' {
    expectSameAsWithoutBlockReader(text, PATHS);
    return readerOf(text);
  }

  const svc = (name: string, ports: string, extra = '') =>
    `- apiVersion: v1\n  kind: Service\n  metadata:\n    name: ${name}\n    namespace: default\n  spec:\n    clusterIP: 10.96.0.${name.length}\n    ports:${ports}\n${extra}`;
  const PORTS = '\n    - name: http\n      port: 80\n      protocol: TCP\n    - name: https\n      port: 443\n      protocol: TCP';
  const list = (...items: string[]) => `apiVersion: v1\nitems:\n${items.join('')}kind: List\nmetadata:\n  resourceVersion: ""\n`;

  /** Lists the item-by-item reader takes, and what it must agree on. */
  const GOOD = [
    // An anchor in one item, aliases in later ones; plain items between.
    list(svc('a', PORTS), svc('b', ` &p${PORTS}`), svc('c', PORTS), svc('d', ' *p'), svc('e', PORTS), svc('f', ' *p')),
    // Two anchors, groups interleaved; an anchor on a scalar and on a mapping inside a port.
    list(svc('a', ` &p${PORTS}`), svc('b', ` &q\n    - name: xx\n      port: &n 8080\n      protocol: TCP`), svc('c', ' *p'), svc('d', '\n    - name: yy\n      port: *n'), svc('e', ' *q')),
    // Anchors without aliases; an item the block reader gives up on (flow content) between.
    list(svc('a', ` &p${PORTS}`), svc('b', ' [{name: h, port: 80}]'), svc('c', ` &r${PORTS}`)),
    // Comments and blank lines between items; CRLF.
    list(svc('a', ` &p${PORTS}`), '# between\n\n', svc('b', ' *p')).replace(/\n/g, '\r\n'),
    // No newline at the end; the last item an alias user.
    list(svc('a', ` &p${PORTS}`), svc('b', ' *p')).replace(/\n$/, ''),
    // A typed List (items take its kind).
    `apiVersion: v1\nitems:\n- metadata:\n    name: a\n  spec:\n    ports: &p${PORTS}\n- metadata:\n    name: b\n  spec:\n    ports: *p\nkind: ServiceList\n`,
    // A tag with the anchor (the block reader gives up on tags; js-yaml and the precise path read it).
    list(svc('a', ` !!seq &p${PORTS}`), svc('b', ' *p')),
    // `&` and `*` inside scalars (false alarms), with a real anchor elsewhere.
    list(svc('a', ` &p${PORTS}`, '    selector:\n      xx: "a &b"\n'), svc('b', ' *p', '    selector:\n      yy: a *p\n')),
  ];

  /** Lists it gives up on (the whole-file path decides: a diagnostic, or the same objects). */
  const BAD = [
    // A merge key (`<<:`): js-yaml (core schema) keeps `<<` as a key, the precise path merges as
    // kubectl's reader does; the values differ, so the whole file is read precisely (as before).
    list(
      `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: base\n    labels: &l\n      app: web\n      tier: fe\n  data:\n    a: "1"\n`,
      svc('x', PORTS),
      `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: over\n    labels:\n      <<: *l\n      tier: be\n  data:\n    a: "2"\n`,
    ),
    // An alias with no anchor, and one before its anchor.
    list(svc('a', ' *p'), svc('b', ` &p${PORTS}`)),
    list(svc('a', PORTS), svc('b', ' *nothing')),
    // A name anchored in two items of different groups, then aliased.
    list(svc('a', ` &p${PORTS}`), svc('b', ` &p\n    - name: other\n      port: 1`), svc('c', ' *p')),
    list(svc('a', ` &p${PORTS}`), svc('b', ' *p'), svc('c', ` &p\n    - port: 2`), svc('d', ' *p')),
    // An alias bomb: more expansions of one anchor than the budget.
    list(svc('a', ` &p${PORTS}`), ...Array.from({ length: 101 }, (_, i) => svc(`b${i}`, ' *p'))),
    // An ambiguous scalar, a duplicate key, a syntax error in a tied item.
    list(svc('a', ` &p${PORTS}`, '    selector:\n      on: yes\n'), svc('b', ' *p')),
    list(svc('a', ` &p${PORTS}`, '    selector:\n      x: 1\n      x: 2\n'), svc('b', ' *p')),
    list(svc('a', ` &p${PORTS}`), svc('b', ' *p', '    selector: {x: 1\n')),
    // The same in an item tied to nothing.
    list(svc('a', ` &p${PORTS}`), svc('c', PORTS, '    selector:\n      on: yes\n'), svc('b', ' *p')),
    list(svc('a', ` &p${PORTS}`), svc('c', PORTS, '    selector: [1\n'), svc('b', ' *p')),
    list(svc('a', ` &p${PORTS}`), svc('c', PORTS, '    selector:\n      x: 1\n      x: 2\n'), svc('b', ' *p')),
    // Anchors in the List's own fields; a whole item anchored and aliased; a scalar item.
    `apiVersion: v1\nmetadata: &m\n  resourceVersion: ""\nitems:\n${svc('a', ` &p${PORTS}`)}${svc('b', ' *p')}kind: List\nx: *m\n`,
    `apiVersion: v1\nitems:\n- &i\n  kind: Service\n  metadata:\n    name: a\n- *i\nkind: List\n`,
    list(svc('a', ` &p${PORTS}`), '- just a scalar\n', svc('b', ' *p')),
    // A directive; two documents.
    `%YAML 1.2\n---\n${list(svc('a', ` &p${PORTS}`), svc('b', ' *p'))}`,
    `${list(svc('a', ` &p${PORTS}`), svc('b', ' *p'))}---\n${list(svc('c', PORTS))}`,
    // Not a List: documents with anchors.
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports: &p${PORTS.replace(/\n    /g, '\n  ')}\n---\nx: *p\n`,
  ];

  /** Streams of documents, anchors in some (read document by document: readYAMLMixed, documentsOneByOne). */
  const doc = (name: string, ports: string, extra = '') => svc(name, ports, extra).replace(/^- /, '').replace(/\n  /g, '\n');
  const STREAMS_WITH_ANCHORS = [
    `${doc('a', PORTS)}---\n${doc('b', ` &p${PORTS}`, 'status:\n  x: *p\n')}---\n${doc('c', PORTS)}`,
    `---\n${doc('a', ` &p${PORTS}`, 'z: *p\n')}--- # second\n${doc('b', ' [{port: 1}]')}---\n---\n${doc('c', PORTS)}# end\n`,
    `${doc('a', PORTS)}---\n${list(svc('b', ` &p${PORTS}`), svc('c', PORTS), svc('d', ' *p'))}---\n${doc('e', ` &q${PORTS}`)}`,
    `${doc('a', PORTS)}---\n${doc('b', ` &p${PORTS}`, 'z: *p\n')}`.replace(/\n/g, '\r\n'),
    // Anchors across documents (an alias cannot see another document's anchor), a bad alias.
    `${doc('a', ` &p${PORTS}`)}---\n${doc('b', ' *p')}`,
    `${doc('a', PORTS)}---\n${doc('b', ' *nothing')}`,
    // What blockDocuments refuses to cut (js-yaml reads the whole text).
    `${doc('a', ` &p${PORTS}`, 'z: *p\n')}...\n---\n${doc('b', PORTS)}`,
    `${doc('a', ` &p${PORTS}`, 'z: *p\n')}--- {x: 1}\n`,
    `${doc('a', ` &p${PORTS}`, 'z: *p\n')}---x: 1\n`,
  ];

  it('cuts a stream into documents read by the block reader where it can', () => {
    const pieces = blockDocuments(STREAMS_WITH_ANCHORS[0]!, LIMITS)!;
    expect(pieces.map((p) => (p.doc === undefined ? 'given up' : p.doc === null ? 'empty' : 'read'))).toEqual(['read', 'given up', 'read']);
    const second = blockDocuments(STREAMS_WITH_ANCHORS[1]!, LIMITS)!;
    expect(second.map((p) => (p.doc === undefined ? 'given up' : p.doc === null ? 'empty' : 'read'))).toEqual(['empty', 'given up', 'given up', 'empty', 'read']);
    for (const s of STREAMS_WITH_ANCHORS.slice(6)) expect(blockDocuments(s, LIMITS), s).toBeUndefined();
    // What a piece the reader reads gives is what js-yaml gives for that document of the whole text.
    let compared = 0;
    for (const s of [...STREAMS, STREAMS_WITH_ANCHORS[0]!.replace(/ &p| \*p/g, ''), KUBECTL]) {
      const cut = blockDocuments(s, LIMITS);
      if (!cut || cut.some((p) => p.doc === undefined)) continue;
      expect(difference(cut.flatMap((p) => (p.doc ? [p.doc] : [])), parseYAMLFast(s, LIMITS)), JSON.stringify(s)).toBe('');
      compared++;
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('reads streams with anchors in some documents as the whole-file path reads them', () => {
    for (const text of STREAMS_WITH_ANCHORS) sameAnchoredRead(text);
  }, 60_000);

  it('agrees on mutations of streams with anchors in some documents', () => {
    const random = rng(Number(process.env.KPC_YAML_FUZZ_SEED ?? 23));
    const inserts = ['\n', '  ', '- ', '#', ' # c', '\n---\n', '---\n', '...\n', ':', '"', '|', '{}', '&a ', '*a', '&p ', ' *p', 'on', '\t', '%', '[1', '\r'];
    const N = Number(process.env.KPC_YAML_FUZZ_N ?? 300);
    let cut = 0;
    for (let k = 0; k < N; k++) {
      let text = STREAMS_WITH_ANCHORS[Math.floor(random() * 6)]!;
      for (let e = 1 + Math.floor(random() * 2); e > 0; e--) {
        const at = Math.floor(random() * text.length);
        const r = random();
        if (r < 0.6) text = text.slice(0, at) + inserts[Math.floor(random() * inserts.length)] + text.slice(at);
        else text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 4));
      }
      if (blockDocuments(text, LIMITS)?.some((p) => p.doc)) cut++;
      sameAnchoredRead(text);
    }
    if (process.env.KPC_YAML_FUZZ_REPORT) console.log(`stream mutations: ${N}, some document read by the block reader: ${cut}`);
    expect(cut).toBeGreaterThan(N * 0.3);
  }, 900_000);

  it('finds the tokens the expression finds, and directives as /^%/m does', () => {
    const reference = (text: string) => {
      const re = /(?:^|[\s[{,:-])([&*])([^\s,[\]{}]+)/g;
      const out: Array<{ offset: number; alias: boolean; name: string }> = [];
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        const offset = m.index + m[0].length - m[2]!.length - 1;
        out.push({ offset, alias: m[1] === '*', name: m[2]! });
        re.lastIndex = offset + 1;
      }
      return out;
    };
    const random = rng(19);
    const alphabet = ['&', '*', '&&', '**', '&*', ' ', '\n', '\r', '\t', '-', ':', ',', '[', ']', '{', '}', 'a', 'b1', '%', '\u00a0', '\u2028', '\u2029', '\ufeff', '\u3000', '\u0085', '\u{1F600}', '#', '"'];
    let tokens = 0;
    let directives = 0;
    for (let k = 0; k < 3000; k++) {
      let text = '';
      const n = 1 + Math.floor(random() * 12);
      for (let i = 0; i < n; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(anchorTokens(text), JSON.stringify(text)).toEqual(reference(text));
      expect(mayHoldDirectives(text), JSON.stringify(text)).toBe(/^%/m.test(text));
      tokens += reference(text).length;
      if (/^%/m.test(text)) directives++;
    }
    const big = genYAML(40, 3, 'yaml-anchors');
    expect(anchorTokens(big)).toEqual(reference(big));
    expect(tokens).toBeGreaterThan(500);
    expect(directives).toBeGreaterThan(50);
  });

  it('reads the good Lists item by item, as the whole-file path reads them', () => {
    for (const text of GOOD) expect(sameAnchoredRead(text), text).toBe('items');
  }, 60_000);

  it('gives up on the others, which the whole-file path reads (diagnostics and all) as before', () => {
    for (const text of BAD) expect(sameAnchoredRead(text), text).not.toBe('items');
    // The whole-file path reports these with their positions.
    const bomb = readDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(BAD[5]!) });
    expect(bomb.diagnostics.map((d) => d.message)).toEqual(['YAML: more than 100 alias expansions (an alias bomb?)']);
    const merged = readDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(BAD[0]!) });
    expect(merged.diagnostics).toEqual([]);
    expect((merged.objects[2]!.value as { metadata: { labels: unknown } }).metadata.labels).toEqual({ app: 'web', tier: 'be' });
  }, 60_000);

  it('reads bench/gen yaml-anchors item by item, with the values of the JSON of the same cluster', () => {
    const text = genYAML(200, 1, 'yaml-anchors');
    expect(anchorTokens(text).filter((t) => t.alias).length).toBeGreaterThan(10);
    expect(sameAnchoredRead(text)).toBe('items');
    const json = JSON.parse([...renderCluster(generateCluster({ services: 200, seed: 1 }), 'json')].join('')) as { items: unknown[] };
    expect(readDocuments({ name: 'in.yaml', bytes: new TextEncoder().encode(text) }).objects.map((o) => o.value)).toEqual(json.items);
  }, 300_000);

  it('agrees on mutations of Lists with anchors (items read, given up on, or spoiling the whole file)', () => {
    const random = rng(Number(process.env.KPC_YAML_FUZZ_SEED ?? 191));
    const base = [...GOOD, genYAML(12, 3, 'yaml-anchors')];
    const inserts = ['\n', '  ', '- ', '#', ' # c', '\n- x\n', '\nz: 1\n', '---\n', ':', '"', '|', '{}', '&a ', '*a', '&p ', ' *p', '<<: *p\n', 'on', '\t', '%'];
    const N = Number(process.env.KPC_YAML_FUZZ_N ?? 300);
    const seen = { items: 0, whole: 0, failed: 0 };
    for (let k = 0; k < N; k++) {
      let text = base[Math.floor(random() * base.length)]!;
      for (let e = 1 + Math.floor(random() * 2); e > 0; e--) {
        text = mutated(text, random, inserts, 0.55);
      }
      seen[sameAnchoredRead(text)]++;
    }
    if (process.env.KPC_YAML_FUZZ_REPORT) console.log(`anchored mutations: ${JSON.stringify(seen)}`);
    // Not vacuous: many mutants are still read item by item, and some are given up on.
    expect(seen.items).toBeGreaterThan(N * 0.15);
    expect(seen.whole + seen.failed).toBeGreaterThan(N * 0.05);
  }, 900_000);
});

export type { ReadResult };

/**
 * What a Pod's resolver does with a name: the search list and ndots of the resolv.conf the
 * kubelet writes for dnsPolicy ClusterFirst (pkg/kubelet/network/dns/dns.go:
 * `search <ns>.svc.<zone> svc.<zone> <zone>` then the node's own search domains,
 * `options ndots:5`), walked the way glibc's res_search does (resolv/res_query.c
 * __res_context_search), each candidate answered by coredns.ts.
 *
 * glibc: a name with a trailing dot is asked as is, only. A name with at least ndots dots is
 * asked as is first. Then each search domain is appended in turn (NXDOMAIN and NODATA go on
 * to the next; an answer ends the search). A name not yet asked as is is asked last. When
 * nothing answered, a NODATA seen on the way is what the caller gets, else the last error.
 * (musl, in Alpine images, differs: it stops at the first NODATA; not modelled.)
 */

import { parseIP } from '../net/ip.js';
import { serve, type Rcode, type Served } from './coredns.js';
import type { DnsCluster } from './model.js';
import { parseDomain, reverseName } from './names.js';
import { rrJSON, type RR, type RRType } from './rr.js';

export interface ResolveOptions {
  fromNamespace: string;
  ndots: number;
  /** Search domains after the cluster's three (the node's resolv.conf; unknown offline). */
  extraSearch: readonly string[];
}

export interface Step {
  name: string;
  type: RRType;
  /** How the resolver came to ask it. */
  reason: 'as-is' | 'search' | 'as-is-last';
  served: Served;
}

export interface Resolution {
  /** `asked`: the name the resolver starts from (an address asked for PTR becomes its reverse name). */
  query: { name: string; asked: string; type: RRType; fromNamespace: string; search: string[]; ndots: number };
  steps: Step[];
  /** The step whose answer the application gets, if cluster DNS gave one. */
  answeredBy?: number;
  /**
   * What the application gets: an answer; NXDOMAIN or NODATA from cluster DNS on every name
   * tried; or `upstream`: no answer from cluster DNS, and at least one name tried went to the
   * upstream resolver, whose answer kpc cannot know.
   */
  outcome: 'answer' | 'NXDOMAIN' | 'NODATA' | 'upstream';
  hints: string[];
}

function dots(name: string): number {
  return name.split('.').length - 1;
}

/** The answered step or the one to report: did this candidate answer? */
function answered(s: Served): boolean {
  return s.answer.length > 0 && s.rcode === 'NOERROR';
}

/** The search list the kubelet writes for a Pod in `ns` (ClusterFirst). */
export function podSearchList(zone: string, ns: string, extra: readonly string[]): string[] {
  const z = zone.slice(0, -1);
  return [`${ns}.svc.${z}`, `svc.${z}`, z, ...extra];
}

/**
 * The name a user typed, as the resolver takes it: an IP address asked for PTR becomes its
 * reverse name (as `dig -x` does).
 */
export function questionName(text: string, type: RRType): string {
  if (type === 'PTR') {
    const ip = parseIP(text);
    if (ip) return reverseName(ip.ip);
  }
  return text;
}

export function resolveFromPod(c: DnsCluster, rawName: string, type: RRType, o: ResolveOptions): Resolution {
  const search = podSearchList(c.options.zone, o.fromNamespace, o.extraSearch);
  const name = questionName(rawName, type);
  const trailingDot = name.endsWith('.');
  const n = dots(trailingDot ? name.slice(0, -1) : name);
  const steps: Step[] = [];
  const ask = (candidate: string, reason: Step['reason']): Step => {
    const fq = parseDomain(candidate);
    const step: Step = { name: fq, type, reason, served: serve(c, fq, type) };
    steps.push(step);
    return step;
  };
  let done: Step | undefined;
  let triedAsIs = false;
  if (trailingDot || n >= o.ndots) {
    const s = ask(name, 'as-is');
    triedAsIs = true;
    if (answered(s.served) || trailingDot) done = s;
  }
  if (!done) {
    for (const domain of search) {
      const s = ask(`${name}.${domain}`, 'search');
      if (answered(s.served)) {
        done = s;
        break;
      }
      // SERVFAIL goes on too; any other error ends the search (CoreDNS answers none here).
    }
  }
  if (!done && !triedAsIs) {
    const s = ask(name, 'as-is-last');
    if (answered(s.served)) done = s;
  }
  const resolution: Resolution = {
    query: { name: rawName, asked: name, type, fromNamespace: o.fromNamespace, search, ndots: o.ndots },
    steps,
    outcome: 'NXDOMAIN',
    hints: [],
  };
  if (done && answered(done.served)) {
    resolution.answeredBy = steps.indexOf(done);
    resolution.outcome = 'answer';
  } else if (steps.some((s) => s.served.forwarded)) resolution.outcome = 'upstream';
  else if (steps.some((s) => s.served.rcode === 'NOERROR' && s.served.answer.length === 0)) resolution.outcome = 'NODATA';
  else resolution.outcome = 'NXDOMAIN';
  resolution.hints = hints(c, name, type, o, resolution);
  return resolution;
}

function hints(c: DnsCluster, name: string, type: RRType, o: ResolveOptions, r: Resolution): string[] {
  const out: string[] = [];
  if (r.outcome === 'answer') {
    const i = r.answeredBy!;
    if (i > 0) out.push(`answered on try ${i + 1}: the ${i} name${i > 1 ? 's' : ''} before it cost a round trip each (ndots:${o.ndots}); a trailing dot (${r.steps[i]!.name}) asks once`);
    return out;
  }
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  const labels = bare.split('.');
  const zone = c.options.zone.slice(0, -1);
  // A Service of that name elsewhere?
  const first = labels[0]!.toLowerCase();
  const elsewhere = c.services.filter((s) => s.name === first && s.namespace !== o.fromNamespace);
  if (labels.length === 1 && elsewhere.length > 0) {
    for (const s of elsewhere) out.push(`Service ${s.namespace}/${s.name} exists: from namespace ${o.fromNamespace} ask for ${s.name}.${s.namespace} (or ${s.name}.${s.namespace}.svc.${zone}); the search list only adds ${o.fromNamespace}.svc.${zone}`);
  }
  if (labels.length === 2 && !c.namespaces.has(labels[1]!.toLowerCase())) {
    const same = c.services.filter((s) => s.name === first);
    out.push(`no namespace ${labels[1]} in the input${same.length > 0 ? `; Service ${first} is in ${same.map((s) => s.namespace).join(', ')}` : ''}`);
  }
  const headless = c.services.find((s) => s.name === first && (labels.length === 1 ? s.namespace === o.fromNamespace : s.namespace === labels[1]) && s.headless);
  if (headless) {
    const eps = c.endpointsByIndex.get(`${headless.name}.${headless.namespace}`) ?? [];
    const ready = eps.reduce((n, e) => n + e.addresses.length, 0);
    const notReady = eps.reduce((n, e) => n + e.notReady.length, 0);
    if (ready === 0) out.push(`${headless.namespace}/${headless.name} is headless with no ready endpoints: its name does not exist (NXDOMAIN) until one is ready${notReady > 0 ? ` (${notReady} not ready)` : ''}`);
  }
  if (type === 'SRV' && !labels[0]!.startsWith('_')) out.push(`SRV names of named ports are _<port>._<protocol>.<service>.<namespace>.svc.${zone}`);
  return out;
}

/** The JSON view (kpc dns resolve -o json). */
export function resolutionJSON(r: Resolution): unknown {
  return {
    query: r.query,
    steps: r.steps.map((s) => ({
      name: s.name,
      type: s.type,
      reason: s.reason,
      rcode: s.served.forwarded && !s.served.zone ? null : s.served.rcode,
      answer: s.served.answer.map(rrJSON),
      ...(s.served.extra.length > 0 ? { extra: s.served.extra.map(rrJSON) } : {}),
      ...(s.served.forwarded ? { forwarded: s.served.forwarded } : {}),
      ...(s.served.unknown ? { unknown: s.served.unknown } : {}),
      why: s.served.why,
    })),
    outcome: r.outcome,
    ...(r.answeredBy !== undefined ? { answeredBy: r.answeredBy } : {}),
    hints: r.hints,
  };
}

function status(s: Served): string {
  if (s.forwarded && !s.zone) return 'forwarded upstream (not known offline)';
  if (s.forwarded && s.rcode === 'NXDOMAIN') return 'not in cluster DNS: forwarded upstream (fallthrough; not known offline)';
  if (s.rcode !== 'NOERROR') return s.rcode as Rcode;
  if (s.answer.length === 0) return 'NODATA (the name exists, no records of this type)';
  return `${s.answer.length} record${s.answer.length > 1 ? 's' : ''}`;
}

function rrLine(rr: RR): string {
  return `${rr.name} ${rr.ttl} IN ${rr.data.type} ${rrJSON(rr).data}`;
}

/** The human view. */
export function renderResolution(r: Resolution): string {
  const q = r.query;
  const lines: string[] = [];
  lines.push(`${q.name} ${q.type} from a Pod in namespace ${q.fromNamespace}`);
  lines.push(`  resolv.conf: search ${q.search.join(' ')}; options ndots:${q.ndots}`);
  lines.push('');
  r.steps.forEach((s, i) => {
    const how = s.reason === 'search' ? '' : s.reason === 'as-is' ? ' (as is: ' + (q.asked.endsWith('.') ? 'trailing dot' : `${q.ndots}+ dots`) + ')' : ' (as is, last)';
    lines.push(`${i + 1}. ${s.name} ${s.type}${how}: ${status(s.served)}`);
    for (const w of s.served.why) lines.push(`     ${w}`);
    for (const rr of s.served.answer) lines.push(`     ${rrLine(rr)}`);
    for (const f of s.served.forwarded ?? []) if (f.name !== s.name) lines.push(`     + ${f.name} ${f.type}: ${f.why}`);
    if (s.served.unknown) lines.push(`     (${s.served.unknown})`);
  });
  lines.push('');
  switch (r.outcome) {
    case 'answer':
      lines.push(`answer: from try ${r.answeredBy! + 1}, ${r.steps[r.answeredBy!]!.name}${r.steps[r.answeredBy!]!.served.forwarded ? ' (and what the upstream resolver adds, not known offline)' : ''}`);
      break;
    case 'NODATA':
      lines.push('answer: none (NODATA: a name exists, without records of this type)');
      break;
    case 'NXDOMAIN':
      lines.push('answer: none (NXDOMAIN on every name tried)');
      break;
    case 'upstream': {
      const up = r.steps.filter((s) => s.served.forwarded).map((s) => s.name);
      lines.push(`answer: none from cluster DNS; the upstream resolver's answer for ${up.join(', ')} is not known offline`);
      break;
    }
  }
  for (const h of r.hints) lines.push(`hint: ${h}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The human view of `kpc explain` (plain text; the CLI passes a style for colour on a TTY).
 */

import type { EntryPoint, ExplainedEndpoint, ExplainedPort, Explanation, Reach } from './explain.js';

export interface ExplainStyle {
  heading?: (text: string) => string;
  entry?: (text: string) => string;
  endpoint?: (text: string) => string;
  bad?: (text: string) => string;
  dim?: (text: string) => string;
}

const id = (s: string) => s;

function percent(p: number): string {
  return `${Number((p * 100).toFixed(2))}%`;
}

function conditions(e: ExplainedEndpoint): string {
  const parts: string[] = [];
  if (e.ready) parts.push(e.terminating ? 'ready, terminating' : 'ready');
  else parts.push(e.serving ? (e.terminating ? 'not ready, serving, terminating' : 'not ready') : e.terminating ? 'not ready, not serving, terminating' : 'not ready, not serving');
  return parts.join(', ');
}

function renderReach(r: Reach, style: Required<ExplainStyle>, out: string[]): void {
  const who = `${r.clients} (${r.policy === 'Local' ? 'Local' : 'Cluster'} policy)`;
  switch (r.outcome) {
    case 'endpoints':
      out.push(`    ${who}: ${r.endpoints.map((e) => `${style.endpoint(e.address)} ${percent(e.probability)}`).join(', ')}`);
      out.push(`      masquerade: ${r.masquerade}`);
      break;
    case 'REJECT':
      out.push(`    ${who}: ${style.bad('REJECT')} (no usable endpoint anywhere in the cluster)`);
      break;
    case 'DROP':
      out.push(`    ${who}: ${style.bad('DROP')} (endpoints exist, but none this policy may use on this node)`);
      break;
    case 'ACCEPT':
      out.push(`    ${who}: ACCEPT`);
      break;
  }
  if (r.excluded.length > 0 && r.outcome !== 'ACCEPT') {
    out.push('      not used:');
    const w = Math.max(...r.excluded.map((x) => x.address.length));
    for (const x of r.excluded) out.push(`        ${x.address.padEnd(w)}  ${style.dim(x.reason)}`);
  }
}

function renderEntry(e: EntryPoint, style: Required<ExplainStyle>, out: string[]): void {
  out.push('', `  ${style.entry(e.title)}`);
  for (const n of e.notes) out.push(`    ${style.dim(n)}`);
  for (const r of e.reaches) renderReach(r, style, out);
  if (e.rules.length > 0 || e.sharedChains.length > 0) {
    out.push('    rules:');
    for (const r of e.rules) out.push(`      ${r.table.padEnd(6)}  ${r.text}`);
    for (const s of e.sharedChains) out.push(`      ${s.table.padEnd(6)}  ${style.dim(`${s.chain}: listed under ${s.listedUnder}`)}`);
  } else {
    out.push(`    rules: ${style.dim('none')}`);
  }
}

function renderPort(p: ExplainedPort, style: Required<ExplainStyle>, out: string[]): void {
  out.push('', style.heading(`${p.spn}  ${p.protocol} port ${p.port}, cluster IP ${p.clusterIP}`));
  const facts = [`internalTrafficPolicy ${p.internalPolicy}`];
  if (p.externalPolicy) facts.push(`externalTrafficPolicy ${p.externalPolicy}`);
  if (p.sessionAffinitySeconds !== undefined) facts.push(`session affinity ClientIP ${p.sessionAffinitySeconds}s`);
  facts.push(`topology ${p.topologyMode === '' ? 'none' : p.topologyMode}`);
  out.push(`  ${facts.join(', ')}`);
  if (p.endpoints.length === 0) {
    out.push('  endpoints: none');
  } else {
    out.push('  endpoints:');
    const w = Math.max(...p.endpoints.map((e) => e.address.length));
    const c = Math.max(...p.endpoints.map((e) => conditions(e).length));
    for (const e of p.endpoints) {
      const where = e.isLocal ? `on this node (${e.nodeName})` : e.nodeName !== undefined ? `node ${e.nodeName}` : 'no nodeName';
      const extra = [e.zone !== undefined ? `zone ${e.zone}` : '', e.hints ? `hints: ${e.hints}` : ''].filter((s) => s !== '').join(', ');
      out.push(`    ${e.address.padEnd(w)}  ${conditions(e).padEnd(c)}  ${where}${extra ? `, ${extra}` : ''}`);
    }
  }
  for (const e of p.entries) renderEntry(e, style, out);
  if (p.otherRules.length > 0) {
    out.push('', '  other rules of this port:');
    for (const r of p.otherRules) out.push(`      ${r.table.padEnd(6)}  ${r.text}`);
  }
}

export function renderExplanation(x: Explanation, style: ExplainStyle = {}): string {
  const s: Required<ExplainStyle> = {
    heading: style.heading ?? id,
    entry: style.entry ?? id,
    endpoint: style.endpoint ?? id,
    bad: style.bad ?? id,
    dim: style.dim ?? id,
  };
  const out: string[] = [];
  const node = `node ${x.node.name}${x.node.zone ? ` (zone ${x.node.zone})` : ''}${x.node.ips.length ? `, addresses ${x.node.ips.join(', ')}` : ''}`;
  out.push(s.heading(`Service ${x.namespace}/${x.name}, ${x.family}, on ${node}`));
  for (const n of x.notes) out.push(s.dim(`note: ${n}`));
  for (const p of x.ports) renderPort(p, s, out);
  return out.join('\n') + '\n';
}

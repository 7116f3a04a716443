/**
 * The human view of a trace (plain text; the CLI passes a style that colours it on a TTY):
 *
 *   tcp 10.0.0.2 -> 172.30.0.41:80, a new connection from the network
 *
 *     nat/PREROUTING                         -j KUBE-SERVICES  (kube-proxy's jump, assumed)
 *     nat/KUBE-SERVICES #1                   "ns1/svc1:p80 cluster IP"  -j KUBE-SVC-…
 *
 *     branch 1 of 2 (50%): 10.180.0.1:80, ACCEPT
 *       nat/KUBE-SVC-… #2                    "ns1/svc1:p80 -> 10.180.0.1:80"  random 0.5000000000  -j KUBE-SEP-…
 *       …
 *
 *   endpoints:
 *     10.180.0.1:80  50%
 *   masquerade: no
 *   verdict: ACCEPT
 *
 * Steps all branches share are printed once; then each branch's own steps.
 */

import type { TraceBranch, TraceResult, TraceStep, Verdict } from './result.js';

export interface TraceStyle {
  verdict?: (text: string, verdict: Verdict) => string;
  endpoint?: (text: string) => string;
  heading?: (text: string) => string;
  dim?: (text: string) => string;
}

const id = (s: string) => s;

/** 1 → "100%", 0.5 → "50%", 1/3 → "33.33%", 0.0001 → "0.01%", smaller with 4 significant digits. */
export function formatPercent(p: number): string {
  const pct = p * 100;
  if (pct !== 0 && Math.abs(pct) < 0.01) return `${Number(pct.toPrecision(4))}%`;
  return `${Number(pct.toFixed(2))}%`;
}

function stepKey(s: TraceStep): string {
  return `${s.table}/${s.chain}#${s.rule?.index ?? 'p'}:${s.rule?.line ?? ''}:${s.action}`;
}

function commonPrefix(branches: readonly TraceBranch[]): number {
  if (branches.length <= 1) return branches[0]?.steps.length ?? 0;
  let n = 0;
  for (;;) {
    const first = branches[0]!.steps[n];
    if (!first) return n;
    const key = stepKey(first);
    if (!branches.every((b) => b.steps[n] !== undefined && stepKey(b.steps[n]!) === key)) return n;
    n++;
  }
}

interface DisplayLine {
  where: string;
  text: string;
}

/**
 * Steps as lines. A jump into a chain where nothing matched is folded: kube-proxy's assumed
 * jumps from one built-in chain become one "no match in A, B" line, other empty jumps say so.
 */
function displayLines(steps: readonly TraceStep[], next: readonly TraceStep[], dim: (s: string) => string): DisplayLine[] {
  const out: DisplayLine[] = [];
  let folded: { where: string; chains: string[] } | undefined;
  const flush = () => {
    if (folded) out.push({ where: folded.where, text: dim(`no match in ${folded.chains.join(', ')}`) });
    folded = undefined;
  };
  steps.forEach((step, k) => {
    // What comes next: the following step, or after the shared steps each branch's first one.
    const following = steps[k + 1] ? [steps[k + 1]!] : next;
    const jumpTo = /^-[jg] (\S+)$/.exec(step.action)?.[1];
    const empty = jumpTo !== undefined && !following.some((f) => f.table === step.table && f.chain === jumpTo);
    const where = `${step.table}/${step.chain}${step.rule && !step.rule.implicit ? ` #${step.rule.index}` : ''}`;
    if (empty && step.rule?.implicit) {
      if (folded && folded.where === where) folded.chains.push(jumpTo!);
      else {
        flush();
        folded = { where, chains: [jumpTo!] };
      }
      return;
    }
    flush();
    const parts: string[] = [];
    if (step.rule?.comment !== undefined) parts.push(`"${step.rule.comment}"`);
    if (step.probability !== undefined) parts.push(`random ${step.probability}`);
    if (!step.rule && step.table === 'nat' && step.action === 'policy ACCEPT') parts.push(dim('end of chain (no NAT here)'));
    else parts.push(step.action);
    if (empty) parts.push(dim('(nothing matched there)'));
    if (step.rule?.implicit) parts.push(dim("(kube-proxy's jump, assumed)"));
    out.push({ where, text: parts.join('  ') });
  });
  flush();
  return out;
}

export function renderTrace(result: TraceResult, style: TraceStyle = {}): string {
  const verdictStyle = style.verdict ?? ((t: string) => t);
  const endpointStyle = style.endpoint ?? id;
  const heading = style.heading ?? id;
  const dim = style.dim ?? id;
  const p = result.packet;
  const dest = p.destination.includes(':') ? `[${p.destination}]:${p.port}` : `${p.destination}:${p.port}`;
  const lines: string[] = [];
  const from = p.origin === 'node' ? 'from the node itself (nat OUTPUT)' : 'from the network (nat PREROUTING)';
  lines.push(heading(`${p.protocol} ${p.source} -> ${dest}, a new connection ${from}`));
  lines.push('');

  const branches = result.branches;
  const prefix = commonPrefix(branches);
  const first = branches[0];
  const blocks: Array<{ header?: string; lines: DisplayLine[] }> = [];
  if (first) {
    const next = branches.map((b) => b.steps[prefix]).filter((x): x is TraceStep => x !== undefined);
    blocks.push({ lines: displayLines(first.steps.slice(0, prefix), next, dim) });
  }
  if (branches.length > 1) {
    branches.forEach((b, k) => {
      const where = b.dnat ? b.destination : `${b.destination} (not DNATed)`;
      blocks.push({
        header: `branch ${k + 1} of ${branches.length} (${formatPercent(b.probability)}): ${where}, ${verdictStyle(b.verdict, b.verdict)}${b.masquerade ? ', masqueraded' : ''}`,
        lines: displayLines(b.steps.slice(prefix), [], dim),
      });
    });
  }
  const width = Math.min(48, Math.max(0, ...blocks.flatMap((b) => b.lines.map((l) => l.where.length))));
  for (const block of blocks) {
    const indent = block.header ? '    ' : '  ';
    if (block.header) lines.push('', `  ${block.header}`);
    for (const l of block.lines) lines.push(`${indent}${l.where.padEnd(width)}  ${l.text}`);
  }
  lines.push('');

  if (result.endpoints.length > 0) {
    lines.push('endpoints:');
    const w = Math.max(...result.endpoints.map((e) => e.address.length));
    for (const e of result.endpoints) {
      lines.push(`  ${endpointStyle(e.address.padEnd(w))}  ${formatPercent(e.probability).padStart(7)}${e.masquerade && !result.endpoints.every((x) => x.masquerade) ? '  masqueraded' : ''}`);
    }
  } else if (result.verdicts.ACCEPT !== undefined) {
    lines.push(`endpoints: none (no DNAT: the packet goes on to ${dest} unchanged)`);
  } else {
    lines.push('endpoints: none');
  }
  lines.push(`masquerade: ${result.masquerade ? 'yes (SNAT to the node address on the way out)' : 'no'}`);
  const mixed = Object.keys(result.verdicts).length > 1;
  const breakdown = mixed
    ? ` (${(Object.entries(result.verdicts) as Array<[Verdict, number]>).map(([v, q]) => `${v} ${formatPercent(q)}`).join(', ')})`
    : '';
  const decidedBy = !mixed && first ? `, by ${[...new Set(branches.map((b) => b.verdictBy))].join(' / ')}` : '';
  lines.push(`verdict: ${verdictStyle(result.verdict, result.verdict)}${breakdown}${decidedBy}`);
  for (const a of result.affinity) {
    const back = a.endpoint ? `goes back to ${a.endpoint}` : 'goes back to the same endpoint';
    lines.push(`session affinity: a client seen in the last ${a.seconds ?? '?'}s ${back} (recent list ${a.name}, ${a.rule}); this trace is a first connection`);
  }
  for (const n of result.notes) lines.push(dim(`note: ${n}`));
  return lines.join('\n') + '\n';
}

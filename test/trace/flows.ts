/**
 * The packet-flow fixtures (fixtures/packet-flow/<Test>/flows.yaml): kube-proxy's packet-flow
 * tests as data. See fixtures/packet-flow/README.md for the format.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { FIXTURES_ROOT } from '../helpers/fixtures.js';
import type { Protocol, Verdict } from '../../src/trace/index.js';

export const PACKET_FLOW_ROOT = join(FIXTURES_ROOT, 'packet-flow');

export interface Flow {
  name: string;
  source: string;
  /** `ip:port` or `[ip6]:port`. */
  destination: string;
  protocol?: Protocol;
  /** kube-proxy's expected tracer output, verbatim: "ip:port, ip:port", "DROP", "REJECT", "ACCEPT" or "". */
  output: string;
  masq: boolean;
  endpoints: string[];
  verdict: Verdict;
  golden?: string;
}

export interface FlowCase {
  name: string;
  input?: string[];
  args?: string[];
  note?: string;
  flows: Flow[];
}

export interface FlowFixture {
  test: string;
  dir: string;
  description: string;
  source: string;
  derived: boolean;
  rules?: string;
  args: string[];
  nodeIPs: string[];
  cases: FlowCase[];
}

export function loadFlowFixtures(): FlowFixture[] {
  return readdirSync(PACKET_FLOW_ROOT)
    .sort()
    .filter((d) => existsSync(join(PACKET_FLOW_ROOT, d, 'flows.yaml')))
    .map((d) => {
      const dir = join(PACKET_FLOW_ROOT, d);
      const raw = parse(readFileSync(join(dir, 'flows.yaml'), 'utf8')) as Record<string, unknown>;
      return {
        test: String(raw.test),
        dir,
        description: String(raw.description ?? ''),
        source: String(raw.source ?? ''),
        derived: raw.derived === true,
        ...(typeof raw.rules === 'string' ? { rules: raw.rules } : {}),
        args: ((raw.args as unknown[]) ?? []).map(String),
        nodeIPs: ((raw.nodeIPs as unknown[]) ?? []).map(String),
        cases: (raw.cases as FlowCase[]).map((c) => ({ ...c, name: String(c.name ?? '') })),
      };
    });
}

/** The compile argv of one case: its args (or the fixture's) and its input files (or input/). */
export function caseArgv(f: FlowFixture, c: FlowCase): string[] {
  const argv = [...(c.args ?? f.args)];
  if (c.input) for (const file of c.input) argv.push('-f', join(f.dir, file));
  else argv.push('-f', join(f.dir, 'input'), '-R');
  return argv;
}

/** What kube-proxy's tracer output means in kpc trace's terms. */
export function expectationOf(output: string): { endpoints: string[]; verdict: Verdict } {
  if (output === '' || output === 'ACCEPT') return { endpoints: [], verdict: 'ACCEPT' };
  if (output === 'DROP' || output === 'REJECT') return { endpoints: [], verdict: output };
  return { endpoints: output.split(', '), verdict: 'ACCEPT' };
}

/** `1.2.3.4:80` → ['1.2.3.4', 80]; `[fd00::1]:80` → ['fd00::1', 80]. */
export function splitHostPort(text: string): [string, number] {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  if (!m) throw new Error(`"${text}" is not ip:port`);
  return [m[1]!, Number(m[2])];
}

/**
 * `kpc diff` and `kpc compile --previous` against a real node's `iptables-save`: for every golden
 * case that prints a whole iptables ruleset (exit 0, no `chain:`, `compile`, iptables mode), load
 * kpc's output of the case (`--standalone`, so the built-in chains hold kube-proxy's jumps as on a
 * node) into a network namespace, capture `iptables-save` (and `iptables-save -c`), and ask kpc
 * about the same manifests with that capture as `--previous`:
 *
 *   kpc diff            → exit 0, "no differences" (against `iptables-save`; for IPv6 and the
 *                         larger cases also against `iptables-save -c`, and `-o json`: changed
 *                         false, no ports; kpc runs in process and costs most of the time)
 *   kpc compile --prev  → an empty delta
 *
 * Anything else is a false difference between kpc's text and what the kernel prints back
 * (src/diff/canonical.ts). A control shows the same path reports a real difference.
 *
 * Run alone: `npx vitest run test/diff/iptables/diff-save.test.ts` (root, iptables, nfacct).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { caseArgv, loadGoldenCases, type GoldenCase } from '../../helpers/fixtures.js';
import { runKpc } from '../../helpers/run-kpc.js';
import { describeLab, listLabNetns, nsRun, withNetns, withNetnsGroup, type IpFamily } from '../../netns/lab.js';
import { cleanupTmp, load, save, writeText } from './harness.js';

function flag(args: readonly string[], name: string): string | undefined {
  let v: string | undefined;
  args.forEach((a, i) => {
    if (a === name) v = args[i + 1];
    else if (a.startsWith(`${name}=`)) v = a.slice(name.length + 1);
  });
  return v;
}

/** Cases whose stdout is a whole iptables-restore ruleset. */
function wholeRulesetCases(): { c: GoldenCase; family: IpFamily }[] {
  const out: { c: GoldenCase; family: IpFamily }[] = [];
  for (const c of loadGoldenCases()) {
    if (c.chain || c.exit !== 0 || c.args[0] !== 'compile' || c.expectedOut === undefined) continue;
    if (flag(c.args, '-o') ?? flag(c.args, '--output') ?? flag(c.args, '--previous')) continue;
    let mode = flag(c.args, '--proxy-mode');
    if (mode === undefined && c.hasConfig) {
      const config = (parseYaml(readFileSync(join(c.dir, 'config.yaml'), 'utf8')) ?? {}) as Record<string, unknown>;
      if (typeof config.mode === 'string' && config.mode !== '') mode = config.mode;
    }
    if (mode !== undefined && mode !== 'iptables') continue;
    out.push({ c, family: flag(c.args, '--ip-family') === 'ipv6' ? 'ipv6' : 'ipv4' });
  }
  return out;
}

const CASES = wholeRulesetCases();
/** Cases whose (non-standalone) output declares filter/KUBE-FIREWALL, and the others. */
const WITH_FIREWALL = CASES.filter((x) => /^:KUBE-FIREWALL /m.test(x.c.expectedOut!.split('*nat')[0]!));
const WITHOUT_FIREWALL = CASES.filter((x) => !WITH_FIREWALL.includes(x));

afterAll(async () => {
  cleanupTmp();
  const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
  expect(mine, 'network namespaces left behind').toEqual([]);
});

describeLab('kpc diff against iptables-save of the same manifests: no difference', { commands: ['iptables-restore', 'iptables-save', 'ip6tables-restore', 'ip6tables-save', 'nfacct'] }, () => {
  it('finds the golden cases', () => {
    console.info(`diff-save: ${CASES.length} golden case(s) print a whole ruleset`);
    expect(CASES.length).toBeGreaterThan(40);
  });

  /**
   * One case: load, capture (plain and -c), ask kpc. Returns the problems found.
   */
  async function checkCase(ns: string, c: GoldenCase, family: IpFamily, json: boolean): Promise<string[]> {
    const failures: string[] = [];
    const argv = caseArgv(c);
    const compiled = await runKpc([...argv, '--standalone']);
    if (compiled.code !== 0) return [`${c.name}: compile --standalone exited ${compiled.code}: ${compiled.stderr}`];
    // A plain restore replaces filter and nat of this family: the previous case is gone.
    await load(ns, compiled.stdout, family, false, c.name);
    for (const counters of json ? [false, true] : [false]) {
      const text = counters ? await saveWithCounters(ns, family) : await save(ns, family);
      const prev = writeText(text, `save-${c.name}`, counters ? 'iptables-save-c.txt' : 'iptables-save.txt');
      const what = `${c.name} (${family}${counters ? ', iptables-save -c' : ''})`;
      const diff = await runKpc(['diff', ...argv.slice(1), '--previous', prev]);
      if (diff.code !== 0 || diff.stdout !== 'no differences\n') failures.push(`${what}: kpc diff exited ${diff.code}:\n${diff.stdout}`);
      if (!counters && json) {
        const j = await runKpc(['diff', ...argv.slice(1), '--previous', prev, '-o', 'json']);
        if (j.code !== 0 || JSON.stringify(JSON.parse(j.stdout)) !== '{"changed":false,"servicePorts":[]}') failures.push(`${what}: kpc diff -o json exited ${j.code}: ${j.stdout}`);
      }
      if (!counters) {
        const delta = await runKpc([...argv, '--previous', prev]);
        if (delta.code !== 0 || delta.stdout !== '') failures.push(`${what}: the delta is not empty (exit ${delta.code}):\n${delta.stdout}${delta.stderr}`);
      }
    }
    return failures;
  }

  /** Runs the cases on `workers` namespaces at once; returns every problem. */
  async function checkAll(cases: typeof CASES, workers = 3): Promise<string[]> {
    const failures: string[] = [];
    const queue = [...cases];
    await withNetnsGroup('dsave', Math.min(workers, Math.max(1, cases.length)), (namespaces) =>
      Promise.all(
        namespaces.map(async (ns) => {
          for (let next = queue.shift(); next; next = queue.shift()) failures.push(...(await checkCase(ns, next.c, next.family, next.family === 'ipv6' || /TestOverall|loadbalancer|affinity/i.test(next.c.name))));
        }),
      ),
    );
    return failures;
  }

  it(`every such golden case whose output has filter/KUBE-FIREWALL (${WITH_FIREWALL.length}): kpc diff exits 0 and the delta is empty`, { timeout: 120_000 }, async () => {
    const started = Date.now();
    const failures = await checkAll(WITH_FIREWALL);
    console.info(`diff-save: ${WITH_FIREWALL.length} cases in ${Date.now() - started} ms`);
    expect(failures, failures.join('\n\n')).toEqual([]);
  });

  // BUG (reported to the lead): when the new output writes no filter/KUBE-FIREWALL (IPv6,
  // --iptables-localhost-nodeports=false, --nodeport-addresses without 127.0.0.1), a node
  // still has the chain (kube-proxy's and kubelet's startup jumps INPUT/OUTPUT -> KUBE-FIREWALL;
  // kpc --standalone declares it too), and `kpc diff` reports "- chain filter/KUBE-FIREWALL"
  // (exit 1) although nothing differs; the delta is empty. Remove `.fails` once fixed.
  it(`the cases whose output has no filter/KUBE-FIREWALL (${WITHOUT_FIREWALL.length}): a node that still has the chain is no difference`, { timeout: 60_000 }, async () => {
    expect(WITHOUT_FIREWALL.length).toBeGreaterThan(0);
    const failures = await checkAll(WITHOUT_FIREWALL);
    console.info(`diff-save (known bug): ${failures.length} problem(s), e.g.\n${failures.slice(0, 1).join('')}`);
    expect(failures, failures.join('\n\n')).toEqual([]);
  });

  it('control: a node whose rules lost one endpoint is reported (exit 1, the endpoint and its chain named)', { timeout: 20_000 }, async () => {
    const c = CASES.find((x) => x.c.name === 'kube-proxy/iptables/TestSyncProxyRulesRepeated-07-add-svc3-endpoint')!;
    expect(c, 'the control case exists').toBeDefined();
    const argv = caseArgv(c.c);
    const text = await withNetns('dsave', async (ns) => {
      await load(ns, (await runKpc([...argv, '--standalone'])).stdout, 'ipv4', false, 'the state');
      return save(ns, 'ipv4');
    });
    // Remove one DNAT rule from the node's rules, as a hand edit on the node would.
    const lines = text.split('\n');
    const k = lines.findIndex((l) => / -j DNAT --to-destination 10\.0\.3\.2:80/.test(l));
    expect(k).toBeGreaterThan(0);
    lines.splice(k, 1);
    const prev = writeText(lines.join('\n'), 'control', 'iptables-save.txt');
    const diff = await runKpc(['diff', ...argv.slice(1), '--previous', prev]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(/^ns3\/svc3:p80\n {2}\+ endpoint 10\.0\.3\.2:80\n {2}~ chain nat\/KUBE-SEP-\S+\n {6}\+ .*-j DNAT --to-destination 10\.0\.3\.2:80\n$/);
    const delta = await runKpc([...argv, '--previous', prev]);
    expect(delta.stdout).toMatch(/^\*nat\n:KUBE-SEP-\S+ - \[0:0\]\n-A KUBE-SEP-\S+ .* -s 10\.0\.3\.2 -j KUBE-MARK-MASQ\n-A KUBE-SEP-\S+ .*-j DNAT --to-destination 10\.0\.3\.2:80\nCOMMIT\n$/);
  });
});

async function saveWithCounters(ns: string, family: IpFamily): Promise<string> {
  const r = await nsRun(ns, [family === 'ipv6' ? 'ip6tables-save' : 'iptables-save', '-c']);
  return r.stdout;
}



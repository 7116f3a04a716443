/**
 * apply.sh, run for real inside throwaway network namespaces. ipset, iptables and ip are the
 * real tools; ipvsadm (no IPVS module here) and sysctl (net.ipv4.vs.* needs ip_vs) are stubs
 * that serve a prepared `ipvsadm -S -n` table and record what would be restored and set.
 */

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFiles, emitIpvs, renderApplyScript, applyScriptOptions } from '../../src/emit/ipvs/index.js';
import type { ProxyIR } from '../../src/ir/model.js';
import { describeLab, describeFailure, nsExec, withNetns, type ExecResult } from '../netns/lab.js';
import { FIXTURES_ROOT, loadGoldenCases } from '../helpers/fixtures.js';
import { compileCaseIR } from './helpers/compile-case.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpc-apply-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const STUB_IPVSADM = `#!/bin/sh
# test stub: -S prints the prepared table, -R records its input
case "$1" in
  -S) cat "$KPC_STUB_DIR/current.rules" ;;
  -R) cat > "$KPC_STUB_DIR/restored.rules" ;;
  *) echo "ipvsadm stub: unexpected $*" >&2; exit 1 ;;
esac
`;
const STUB_SYSCTL = `#!/bin/sh
# test stub: record the settings
echo "$*" >> "$KPC_STUB_DIR/sysctl.log"
`;

let counter = 0;
function stubDir(current = ''): string {
  const dir = join(tmp, `stub-${counter++}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'current.rules'), current);
  for (const [name, text] of [['ipvsadm', STUB_IPVSADM], ['sysctl', STUB_SYSCTL]] as const) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

function runScript(ns: string, script: string, stubs: string): Promise<ExecResult> {
  return nsExec(ns, ['env', `PATH=${stubs}:/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin`, `KPC_STUB_DIR=${stubs}`, 'sh', script], { timeoutMs: 30_000 });
}

function writeScript(text: string): string {
  const path = join(tmp, `apply-${counter++}.sh`);
  writeFileSync(path, text);
  return path;
}

async function caseIR(name: string): Promise<ProxyIR> {
  const c = loadGoldenCases(FIXTURES_ROOT, { bundles: true }).find((x) => x.name === name);
  if (!c) throw new Error(`no fixture ${name}`);
  return compileCaseIR(c);
}

/**
 * kube-ipvs0 for a test: a dummy link as kube-proxy makes it, or, on kernels without the dummy
 * driver (this project's test machines), an ifb link, which holds addresses the same way.
 */
async function addKubeIpvs0(ns: string): Promise<'dummy' | 'ifb'> {
  if ((await nsExec(ns, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'dummy'])).code === 0) return 'dummy';
  await sh(ns, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'ifb']);
  return 'ifb';
}

let dummySupported: boolean | undefined;
async function hasDummy(): Promise<boolean> {
  if (dummySupported === undefined) {
    dummySupported = await withNetns('dummy', async (ns) => (await nsExec(ns, ['ip', 'link', 'add', 'kpc-probe0', 'type', 'dummy'])).code === 0);
    if (!dummySupported) console.info('apply.sh test: this kernel has no dummy links; kube-ipvs0 is pre-created as an ifb link, so `ip link add kube-ipvs0 type dummy` itself is not exercised');
  }
  return dummySupported;
}

async function sh(ns: string, argv: string[]): Promise<string> {
  const r = await nsExec(ns, argv);
  if (r.code !== 0) throw new Error(describeFailure(argv.join(' '), r));
  return r.stdout;
}

describe('apply.sh text', () => {
  it('is a POSIX sh script whose embedded parts are quoted here-documents', async () => {
    const ir = await caseIR('features-ipvs/standalone');
    const script = renderApplyScript(emitIpvs(ir, { standalone: true }), applyScriptOptions(ir, { inline: true, standalone: true }));
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    for (const part of ['IPVS_RULES', 'IPSET_RULES', 'IPTABLES_RULES', 'KUBE_IPVS0_ADDRS']) expect(script).toContain(`<<'KPC_END_OF_${part}'`);
    const { spawnSync } = await import('node:child_process');
    const check = spawnSync('sh', ['-n', writeScript(script)], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
  });

  it('refuses a part whose line would end the here-document', () => {
    const bundle = { ipvsRules: 'KPC_END_OF_IPVS_RULES\n', ipsetRules: '', iptablesRules: '', addresses: '' };
    expect(() => renderApplyScript(bundle, { inline: true, family: 'IPv4', standalone: false })).toThrow(/terminator/);
  });

  it('refuses control characters and non-ASCII in an embedded part', () => {
    const bundle = { ipvsRules: '-A -t 10.0.0.1:80 -s rr\u0007\n', ipsetRules: '', iptablesRules: '', addresses: '' };
    expect(() => renderApplyScript(bundle, { inline: true, family: 'IPv4', standalone: false })).toThrow(/unsafe/);
  });

  it('refuses an exclude CIDR that is not canonical', () => {
    const bundle = { ipvsRules: '', ipsetRules: '', iptablesRules: '', addresses: '' };
    expect(() => renderApplyScript(bundle, { inline: false, family: 'IPv4', standalone: false, excludeCIDRs: ["10.0.0.0/8' ; rm -rf / ; '"] })).toThrow(/unsafe/);
  });
});

describeLab('apply.sh in a network namespace', { commands: ['ipset', 'iptables-restore', 'ip6tables-restore', 'awk', 'sed', 'grep'] }, () => {
  it('standalone, inline: creates kube-ipvs0, loads sets, rules and addresses, hands ipvs.rules to ipvsadm -R; a second run changes nothing', { timeout: 60_000 }, async () => {
    const ir = await caseIR('features-ipvs/standalone');
    const bundle = emitIpvs(ir, { standalone: true });
    const script = writeScript(renderApplyScript(bundle, applyScriptOptions(ir, { inline: true, standalone: true })));
    const dummy = await hasDummy();
    await withNetns('apply', async (ns) => {
      if (!dummy) await addKubeIpvs0(ns);
      const stubs = stubDir();
      const first = await runScript(ns, script, stubs);
      expect(first.code, describeFailure('apply.sh', first)).toBe(0);
      expect(await sh(ns, ['ip', '-o', '-4', 'address', 'show', 'dev', 'kube-ipvs0'])).toContain('inet 10.96.0.20/32');
      expect((await sh(ns, ['ipset', 'list', '-n'])).trim().split('\n')).toHaveLength(17);
      expect(await sh(ns, ['ipset', 'list', 'KUBE-CLUSTER-IP'])).toContain('10.96.0.20,tcp:80');
      expect(readFileSync(join(stubs, 'restored.rules'), 'utf8')).toBe(bundle.ipvsRules);
      const sysctls = readFileSync(join(stubs, 'sysctl.log'), 'utf8');
      for (const s of ['net.ipv4.ip_forward=1', 'net.ipv4.conf.all.arp_ignore=1', 'net.ipv4.conf.all.arp_announce=2', 'net.ipv4.vs.conntrack=1', 'net.ipv4.vs.expire_nodest_conn=1', 'net.ipv4.vs.expire_quiescent_template=1']) {
        expect(sysctls).toContain(s);
      }
      const saveOnce = await sh(ns, ['iptables-save']);
      expect(saveOnce).toContain('-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
      expect(saveOnce).toContain('-A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER');

      // Second run against the state the first left (the stub now lists the restored table).
      writeFileSync(join(stubs, 'current.rules'), bundle.ipvsRules);
      const second = await runScript(ns, script, stubs);
      expect(second.code, describeFailure('apply.sh (again)', second)).toBe(0);
      const saveTwice = await sh(ns, ['iptables-save']);
      const count = (text: string, needle: string) => text.split('\n').filter((l) => l === needle).length;
      expect(count(saveTwice, '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES')).toBe(1);
      expect(count(saveTwice, '-A FORWARD -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL')).toBe(1);
      // Existing services and destinations are edited, not re-added.
      expect(readFileSync(join(stubs, 'restored.rules'), 'utf8')).toBe('-E -t 10.96.0.20:80 -s rr\n-e -t 10.96.0.20:80 -r 10.244.2.7:8080 -m -w 1\n');
    });
  });

  it('turns the current table into a delta: stale destinations and services go, except excluded, other-family and fwmark ones; stale addresses are unbound', { timeout: 60_000 }, async () => {
    const ir = await caseIR('features-ipvs/standalone');
    const bundle = emitIpvs(ir, { standalone: true });
    const current = [
      '-A -t 10.96.0.20:80 -s wlc',
      '-a -t 10.96.0.20:80 -r 10.244.2.7:8080 -m -w 0',
      '-a -t 10.96.0.20:80 -r 10.244.9.9:8080 -m -w 1',
      '-A -t 10.96.0.99:80 -s rr',
      '-a -t 10.96.0.99:80 -r 10.244.9.9:8080 -m -w 1',
      '-A -u 10.250.3.4:53 -s rr',
      '-A -t [fd00::1]:80 -s rr',
      '-A -f 5 -s rr',
      '',
    ].join('\n');
    const script = writeScript(renderApplyScript(bundle, applyScriptOptions(ir, { inline: true, standalone: true })));
    await withNetns('apply', async (ns) => {
      await addKubeIpvs0(ns);
      await sh(ns, ['ip', 'address', 'add', '10.96.0.99/32', 'dev', 'kube-ipvs0']);
      const stubs = stubDir(current);
      const r = await runScript(ns, script, stubs);
      expect(r.code, describeFailure('apply.sh', r)).toBe(0);
      const restored = readFileSync(join(stubs, 'restored.rules'), 'utf8').trim().split('\n');
      expect(restored).toEqual([
        '-E -t 10.96.0.20:80 -s rr',
        '-e -t 10.96.0.20:80 -r 10.244.2.7:8080 -m -w 1',
        '-d -t 10.96.0.20:80 -r 10.244.9.9:8080',
        '-D -t 10.96.0.99:80',
      ]);
      const addrs = await sh(ns, ['ip', '-o', '-4', 'address', 'show', 'dev', 'kube-ipvs0']);
      expect(addrs).toContain('10.96.0.20/32');
      expect(addrs).not.toContain('10.96.0.99');
    });
  });

  it('IPv6: keeps services inside an excluded IPv6 CIDR, deletes other stale IPv6 ones, leaves IPv4 alone', { timeout: 60_000 }, async () => {
    const ir = await caseIR('features-ipvs/dual-stack-ipv6-side');
    const withExcl: ProxyIR = { ...ir, knobs: { ...ir.knobs, ipvs: { ...ir.knobs.ipvs, excludeCIDRs: ['fd00:250::/64', '2001:db8:ff00::/40'] } } };
    const bundle = emitIpvs(withExcl, { standalone: true });
    const current = ['-A -t [fd00:250::5]:80 -s rr', '-A -t [fd00:251::5]:80 -s rr', '-A -t [2001:db8:ff12::1]:443 -s rr', '-A -t [2001:db8:1::1]:443 -s rr', '-A -t 10.96.0.99:80 -s rr', ''].join('\n');
    const script = writeScript(renderApplyScript(bundle, applyScriptOptions(withExcl, { inline: true, standalone: true })));
    await withNetns('apply6', async (ns) => {
      await addKubeIpvs0(ns);
      const stubs = stubDir(current);
      const r = await runScript(ns, script, stubs);
      expect(r.code, describeFailure('apply.sh', r)).toBe(0);
      const deletes = readFileSync(join(stubs, 'restored.rules'), 'utf8').split('\n').filter((l) => l.startsWith('-D ')).sort();
      expect(deletes).toEqual(['-D -t [2001:db8:1::1]:443', '-D -t [fd00:251::5]:80']);
      expect(await sh(ns, ['ip', '-o', '-6', 'address', 'show', 'dev', 'kube-ipvs0'])).toContain('fd00:96::20/128');
      expect(await sh(ns, ['ip6tables-save'])).toContain('-A KUBE-SERVICES -s ::1/128 -j RETURN');
    });
  });

  it('-o DIR form: apply.sh reads its sibling files; without --standalone it needs kube-ipvs0', { timeout: 60_000 }, async () => {
    const ir = await caseIR('kube-proxy/ipvs/TestOnlyLocalNodePorts');
    const dir = join(tmp, `bundle-${counter++}`);
    mkdirSync(dir, { recursive: true });
    for (const f of bundleFiles(ir, { standalone: false })) {
      writeFileSync(join(dir, f.name), f.content);
      chmodSync(join(dir, f.name), f.mode);
    }
    expect(existsSync(join(dir, 'apply.sh'))).toBe(true);
    await withNetns('applyo', async (ns) => {
      const stubs = stubDir();
      const missing = await runScript(ns, join(dir, 'apply.sh'), stubs);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('no kube-ipvs0 interface');
      await addKubeIpvs0(ns);
      const r = await runScript(ns, join(dir, 'apply.sh'), stubs);
      expect(r.code, describeFailure('apply.sh', r)).toBe(0);
      expect(readFileSync(join(stubs, 'restored.rules'), 'utf8')).toBe(readFileSync(join(dir, 'ipvs.rules'), 'utf8'));
      expect(await sh(ns, ['ipset', 'list', 'KUBE-NODE-PORT-LOCAL-TCP'])).toContain('3001');
      // Built-in chain jumps are kube-proxy's own business without --standalone.
      expect(await sh(ns, ['iptables-save'])).not.toContain('-A OUTPUT');
    });
  });
});

/**
 * `kpc trace` on the command line: compiling or --rules, text and JSON, colour, exit codes.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDestination } from '../../src/cli/commands/trace.js';
import { KpcError, usageError } from '../../src/errors.js';
import { PACKET_FLOW_ROOT } from './flows.js';
import { runTraceCli } from './run-cli.js';

const FAKE = ['--hostname-override', 'test-node', '--node-ip', '192.168.0.2', '--cluster-cidr', '10.0.0.0/8', '--kube-proxy-version', '1.34', '--nfacct', '--no-masquerade-random-fully', '--service-node-port-range', '1-32767'];
const ETP_LOCAL = ['-f', join(PACKET_FLOW_ROOT, 'TestExternalTrafficPolicyLocal/input'), '-R'];
const SAVE = join(PACKET_FLOW_ROOT, 'iptables-save/TestLoadBalancer.save');

describe('kpc trace', () => {
  it('compiles the input and prints the human view', async () => {
    const run = await runTraceCli(['trace', '--to', '1.2.3.4:80', '--from', '203.0.113.2', ...FAKE, ...ETP_LOCAL]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^tcp 203\.0\.113\.2 -> 1\.2\.3\.4:80, a new connection from the network/);
    expect(run.stdout).toMatch(/endpoints:\n {2}10\.180\.2\.1:80 +100%/);
    expect(run.stdout).toMatch(/verdict: ACCEPT/);
    expect(run.stdout).not.toMatch(/\u001b\[/);
  });

  it('prints the JSON contract with -o json: verdict, endpoints, masquerade, path first', async () => {
    const run = await runTraceCli(['trace', '--to', '192.168.0.2:3001', '--from', '203.0.113.2', ...FAKE, ...ETP_LOCAL, '-o', 'json'], { tty: true });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/\u001b\[/);
    const j = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(j).slice(0, 4)).toEqual(['verdict', 'endpoints', 'masquerade', 'path']);
    expect(j.verdict).toBe('ACCEPT');
    expect(j.endpoints).toEqual([{ address: '10.180.2.1:80', probability: 1, masquerade: false }]);
    expect(j.masquerade).toBe(false);
    expect((j.path as string[])[0]).toBe('nat/PREROUTING');
  });

  it('colours the human view on a TTY', async () => {
    const run = await runTraceCli(['trace', '--to', '1.2.3.4:80', '--from', '203.0.113.2', ...FAKE, ...ETP_LOCAL], { tty: true });
    expect(run.stdout).toMatch(/\u001b\[/);
  });

  it('traces from the node itself when --from is omitted', async () => {
    const run = await runTraceCli(['trace', '--to', '172.30.0.41:80', ...FAKE, ...ETP_LOCAL, '-o', 'json']);
    const j = JSON.parse(run.stdout) as { packet: { source: string; origin: string }; masquerade: boolean };
    expect(j.packet).toMatchObject({ source: '192.168.0.2', origin: 'node' });
    expect(j.masquerade).toBe(true);
  });

  it('traces through an iptables-save file with --rules, without compiling', async () => {
    const run = await runTraceCli(['trace', '--rules', SAVE, '--node-ip', '192.168.0.2', '--to', '1.2.3.4:80', '--from', '203.0.113.130', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ verdict: 'DROP', endpoints: [], masquerade: false });
    // The saved rules declare the built-in chains, so nothing is assumed.
    expect(JSON.parse(run.stdout).notes).toEqual([]);
  });

  it('reads --rules from stdin', async () => {
    const { readFileSync } = await import('node:fs');
    const run = await runTraceCli(['trace', '--rules', '-', '--node-ip', '192.168.0.2', '--to', '1.2.3.4:80', '--from', '203.0.113.2'], { stdin: readFileSync(SAVE, 'utf8') });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/10\.180\.0\.1:80 +100%/);
  });

  it('traces IPv6 (the family follows --to)', async () => {
    const run = await runTraceCli([
      'trace', '--to', '[fd00:172:30::41]:80', '--from', 'fd00:10::2',
      '--hostname-override', 'test-node', '--node-ip', '2001:db8::1', '--cluster-cidr', 'fd00:10::/64', '--service-node-port-range', '1-32767',
      '-f', join(PACKET_FLOW_ROOT, 'TestNodePorts/input/ipv6'), '-R', '-o', 'json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout).endpoints as Array<{ address: string }>).map((e) => e.address)).toEqual(['[fd00:10:180::1]:80', '[fd00:10:180::2:1]:80']);
  });

  const usage: Array<[string[], RegExp]> = [
    [['trace', ...FAKE, ...ETP_LOCAL], /--to/],
    [['trace', '--to', '1.2.3.4', ...FAKE, ...ETP_LOCAL], /not IP:PORT/],
    [['trace', '--to', '1.2.3.4:80/icmp', ...FAKE, ...ETP_LOCAL], /not tcp, udp or sctp/],
    [['trace', '--to', 'fd00::1:80', ...FAKE, ...ETP_LOCAL], /not IP:PORT|\[ADDR\]:PORT/],
    [['trace', '--to', '1.2.3.4:80', '--from', 'fd00::1', ...FAKE, ...ETP_LOCAL], /different IP families/],
    [['trace', '--to', '1.2.3.4:80', '--ip-family', 'ipv6', ...FAKE, ...ETP_LOCAL], /does not match/],
    [['trace', '--to', '1.2.3.4:80', '--rules', '/nonexistent/rules'], /--rules: the path "\/nonexistent\/rules" does not exist/],
    [['trace', '--to', '1.2.3.4:80', '--from', '10.0.0.1'], /no input/],
  ];
  for (const [args, msg] of usage) {
    it(`exits 2: ${args.slice(1, 4).join(' ')}`, async () => {
      const run = await runTraceCli(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(msg);
      expect(run.stdout).toBe('');
    });
  }

  it('exits 2 with the line number for --rules that do not read', async () => {
    const run = await runTraceCli(['trace', '--rules', '-', '--to', '1.2.3.4:80'], { stdin: '*nat\n-A X -j\nCOMMIT\n' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--rules -:2: -j needs a target/);
  });
});

describe('parseDestination', () => {
  it('reads IPv4, IPv6 and protocols', () => {
    expect(parseDestination('10.0.0.1:80')).toEqual({ ip: '10.0.0.1', port: 80, protocol: 'tcp' });
    expect(parseDestination('10.0.0.1:53/UDP')).toEqual({ ip: '10.0.0.1', port: 53, protocol: 'udp' });
    expect(parseDestination('[FD00::0001]:443/sctp')).toEqual({ ip: 'fd00::1', port: 443, protocol: 'sctp' });
    expect(() => parseDestination('10.0.0.1:0')).toThrow(KpcError);
    expect(() => parseDestination('10.0.0.1:65536')).toThrow(KpcError);
    expect(() => parseDestination('[10.0.0.1]:80')).toThrow(KpcError);
  });
});

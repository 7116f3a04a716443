/**
 * --proxy-mode is the same option on every command that compiles: the same choices (every mode
 * kpc compiles), and a mode the command cannot work in yet is refused with kpc's own usage error
 * (exit 2) naming the command and the mode, never commander's "Allowed choices" (which is left
 * for values that are no mode at all). Which modes a command supports comes from the backends
 * (modesWith), so the expectations follow when a backend learns trace or explain.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modesWith, PROXY_MODES } from '../../src/modes/index.js';
import { FIXTURES_ROOT } from '../helpers/fixtures.js';
import { runKpc } from '../helpers/run-kpc.js';

const input = ['-f', join(FIXTURES_ROOT, 'features', 'clusterip-basic', 'input'), '-R', '--hostname-override', 'node-a', '--node-ip', '10.1.0.10', '--cluster-cidr', '10.244.0.0/16'];

/** Each command that takes --proxy-mode, the argv to run it on the input, and the modes it supports. */
const COMMANDS: ReadonlyArray<{ name: string; argv: string[]; supported: readonly string[] }> = [
  { name: 'compile', argv: ['compile', ...input], supported: PROXY_MODES },
  { name: 'validate', argv: ['validate', ...input], supported: PROXY_MODES },
  { name: 'trace', argv: ['trace', ...input, '--to', '10.96.0.10:80'], supported: modesWith('traceRules') },
  { name: 'explain', argv: ['explain', 'demo/web', ...input], supported: modesWith('explainRules') },
];

const choicesLine = (help: string) => help.split('\n').find((l) => l.includes('--proxy-mode <mode>')) ?? '';

describe('--proxy-mode on every command', () => {
  it('every command that compiles lists the same choices', async () => {
    const lists = new Set<string>();
    for (const name of ['compile', 'diff', 'check', 'validate', 'trace', 'explain']) {
      const run = await runKpc([name, '--help']);
      expect(run.code).toBe(0);
      const m = /\(choices: ([^)]*)\)/.exec(choicesLine(run.stdout));
      expect(m, `${name} --help lists --proxy-mode choices`).not.toBeNull();
      lists.add(m![1]!);
    }
    expect([...lists]).toEqual([PROXY_MODES.map((m) => `"${m}"`).join(', ')]);
  });

  it('a command that supports only some modes says which in its help', async () => {
    for (const c of COMMANDS.filter((x) => x.supported.length < PROXY_MODES.length)) {
      const run = await runKpc([c.name, '--help']);
      expect(choicesLine(run.stdout)).toContain(`kpc ${c.name} supports ${c.supported.join(', ')}`);
    }
  });

  for (const c of COMMANDS) {
    for (const mode of PROXY_MODES) {
      const supported = c.supported.includes(mode);
      it(`kpc ${c.name} --proxy-mode ${mode}: ${supported ? 'accepted' : 'refused as not supported yet (exit 2)'}`, async () => {
        const run = await runKpc([...c.argv, '--proxy-mode', mode]);
        expect(run.stderr).not.toMatch(/Allowed choices/);
        if (supported) {
          expect(run.code, run.stderr).toBe(0);
          return;
        }
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toBe(`error: kpc ${c.name} --proxy-mode ${mode}: not supported yet for ${mode} mode; kpc ${c.name} supports --proxy-mode ${c.supported.join(', ')}\n`);
      });
    }
  }

  it('a value that is no mode at all is still commander\'s error, exit 2', async () => {
    const run = await runKpc(['trace', ...input, '--to', '10.96.0.10:80', '--proxy-mode', 'userspace']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/argument 'userspace' is invalid\. Allowed choices are iptables, ipvs, nftables/);
  });
});

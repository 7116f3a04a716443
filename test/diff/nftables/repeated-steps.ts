/**
 * kube-proxy's TestSyncProxyRulesRepeated, ported per release (fixtures/kube-proxy/nftables/
 * vX.Y/TestSyncProxyRulesRepeated-*), as a sequence of states: each step's kpc arguments and
 * input, in the test's order. The kernel delta tests walk it.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FIXTURES_ROOT } from '../../helpers/fixtures.js';

export function repeatedSteps(release: string): Array<{ label: string; args: string[] }> {
  const dir = join(FIXTURES_ROOT, 'kube-proxy', 'nftables', release);
  return readdirSync(dir)
    .filter((d) => d.startsWith('TestSyncProxyRulesRepeated-'))
    .sort()
    .map((d) => {
      const args = (parseYaml(readFileSync(join(dir, d, 'case.yaml'), 'utf8')) as { args: string[] }).args.slice(1);
      return { label: `${release}/${d}`, args: [...args, '-f', join(dir, d, 'input'), '-R'] };
    });
}

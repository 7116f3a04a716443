/**
 * A node in a network namespace of THIS machine, which has no ip_vs module: ipset, iptables and
 * ip (kube-ipvs0, a dummy link) are real, ipvsadm is a stub. The stub answers `ipvsadm -S -n`
 * with the table the node "has" and records what `ipvsadm -R` is given; after each apply.sh the
 * recorded commands are replayed onto the table (src/lang/ipvs/ipvs-table.ts's reader, which
 * refuses `-A` of an existing virtual server, `-d` of a missing real server, ...), so the table
 * evolves as the kernel's would. sysctl is a stub too (net.ipv4.vs.* needs ip_vs).
 */

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readIpvsTable, renderIpvsTable } from '../../../src/diff/ipvs/index.js';
import { describeFailure, nsExec, type ExecResult } from '../../netns/lab.js';
import { writeDir } from './delta-states.js';

const STUB_IPVSADM = `#!/bin/sh
# test stub: -S prints the node's table, -R records its input
case "$1" in
  -S) cat "$KPC_STUB_DIR/current.rules" ;;
  -R) cat >> "$KPC_STUB_DIR/restored.rules" ;;
  *) echo "ipvsadm stub: unexpected $*" >&2; exit 1 ;;
esac
`;
const STUB_SYSCTL = `#!/bin/sh
echo "$*" >> "$KPC_STUB_DIR/sysctl.log"
`;

export interface NodeDumps {
  ipvs: string;
  ipset: string;
  iptables: string;
  addrs: string;
}

export class StubNode {
  private runs = 0;
  readonly stubs: string;

  private constructor(
    readonly ns: string,
    readonly dir: string,
    readonly family: 'ipv4' | 'ipv6',
  ) {
    this.stubs = join(dir, 'stubs');
    mkdirSync(this.stubs, { recursive: true });
    writeFileSync(join(this.stubs, 'current.rules'), '');
    writeFileSync(join(this.stubs, 'restored.rules'), '');
    for (const [name, text] of [['ipvsadm', STUB_IPVSADM], ['sysctl', STUB_SYSCTL]] as const) {
      writeFileSync(join(this.stubs, name), text);
      chmodSync(join(this.stubs, name), 0o755);
    }
  }

  /**
   * A node in `ns`, with kube-ipvs0 made beforehand: a dummy link as kube-proxy makes it, or an
   * ifb link on kernels without dummy links (this project's machines), so apply.sh finds it.
   */
  static async create(ns: string, dir: string, family: 'ipv4' | 'ipv6' = 'ipv4'): Promise<StubNode> {
    if ((await nsExec(ns, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'dummy'])).code !== 0) {
      const r = await nsExec(ns, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'ifb']);
      if (r.code !== 0) throw new Error(describeFailure(`[${ns}] ip link add kube-ipvs0`, r));
    }
    return new StubNode(ns, dir, family);
  }

  /** The IPVS table the node has now (ipvsadm-save form, kpc's order). */
  get table(): string {
    return readFileSync(join(this.stubs, 'current.rules'), 'utf8');
  }

  set table(text: string) {
    writeFileSync(join(this.stubs, 'current.rules'), text);
  }

  /** What the last apply gave `ipvsadm -R`. */
  lastRestored = '';

  /** Write the bundle's files and run its apply.sh; the IPVS table then takes the restored commands. */
  async apply(files: Record<string, string>): Promise<ExecResult> {
    const bundle = writeDir(join(this.dir, `run-${this.runs++}`), files);
    writeFileSync(join(this.stubs, 'restored.rules'), '');
    const r = await nsExec(
      this.ns,
      ['env', `PATH=${this.stubs}:/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin`, `KPC_STUB_DIR=${this.stubs}`, 'sh', join(bundle, 'apply.sh')],
      { timeoutMs: 30_000 },
    );
    if (r.code !== 0) throw new Error(describeFailure(`[${this.ns}] apply.sh of ${bundle}`, r));
    this.lastRestored = readFileSync(join(this.stubs, 'restored.rules'), 'utf8');
    this.table = renderIpvsTable(readIpvsTable(this.table + this.lastRestored));
    return r;
  }

  /**
   * Back to an empty node (cheaper than a new namespace): no iptables rules or chains in filter
   * and nat, no ipsets, no kube-ipvs0 addresses, an empty IPVS table.
   */
  async reset(): Promise<void> {
    const ipt = this.family === 'ipv6' ? 'ip6tables' : 'iptables';
    const steps = [
      ...['filter', 'nat'].flatMap((t) => [
        [ipt, '-w', '-t', t, '-F'],
        [ipt, '-w', '-t', t, '-X'],
      ]),
      ['ipset', 'destroy'],
      ['ip', 'address', 'flush', 'dev', 'kube-ipvs0'],
    ];
    for (const argv of steps) {
      const r = await nsExec(this.ns, argv);
      if (r.code !== 0) throw new Error(describeFailure(`[${this.ns}] ${argv.join(' ')}`, r));
    }
    this.table = '';
  }

  /** What the node's tools print (the IPVS table from the stub). */
  async dumps(): Promise<NodeDumps> {
    const run = async (argv: string[]) => {
      const r = await nsExec(this.ns, argv);
      if (r.code !== 0) throw new Error(describeFailure(`[${this.ns}] ${argv.join(' ')}`, r));
      return r.stdout;
    };
    return {
      ipvs: this.table,
      ipset: await run(['ipset', 'save']),
      iptables: await run([this.family === 'ipv6' ? 'ip6tables-save' : 'iptables-save']),
      addrs: await run(['ip', '-o', 'addr', 'show', 'dev', 'kube-ipvs0']),
    };
  }
}

/** A node's dumps as a `--previous` directory (the bundle's file names). */
export function dumpsAsPrevious(dir: string, d: NodeDumps): string {
  return writeDir(dir, { 'ipvs.rules': d.ipvs, 'ipset.rules': d.ipset, 'iptables.rules': d.iptables, 'kube-ipvs0.addrs': d.addrs });
}

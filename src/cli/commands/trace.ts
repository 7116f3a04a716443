/**
 * `kpc trace --to IP:PORT[/PROTO] [--from IP]`: where does a new connection go on this node?
 * The rules are compiled from the input (as `kpc compile` would print them) or read from
 * `--rules FILE` (kpc's output, or a node's `iptables-save`); the connection is followed
 * through them by src/trace. Exit 0 whatever the verdict; 2 for bad input or usage.
 */

import { isTextSource, oneString, type TextSource } from '../../lang/text-source.js';
import { isDirectoryPath, readNamedTextSource } from '../../parser/input-files.js';
import { backendFor, modesWith } from '../../modes/index.js';
import { Chalk } from 'chalk';
import { Option } from 'commander';
import type { NftFamily } from '../../lang/nftables/index.js';
import type { CommandSpec } from '../command-spec.js';
import { canonicalIP, parseIP } from '../../net/ip.js';
import { reachableServicePorts, renderTrace, type PacketSpec, type Protocol, type TraceResult, type TraceStyle } from '../../trace/index.js';
import { rulesOfText, traceThrough, type TraceRules } from '../../trace/rules.js';
import { renderIpvsStage, type IpvsTraceResult } from '../../trace/ipvs.js';
import { extractInlineBundle, readBundleTexts } from '../../diff/ipvs/index.js';
import { EXIT, isKpcError, usageError } from '../../errors.js';
import type { Io } from '../io.js';
import { compileInput, type CommonFlags } from '../pipeline.js';
import { reportCompiled, reportNotes } from '../report.js';

export interface TraceFlags extends CommonFlags {
  standalone?: boolean;
  to?: string;
  from?: string;
  rules?: string;
  output?: string;
  inInterface?: string;
}

const EXAMPLES = `
Examples:
  # Where does a pod's connection to a cluster IP go on node-a?
  kpc trace -f manifests/ -R --hostname-override node-a --cluster-cidr 10.244.0.0/16 --to 10.96.0.10:53/udp --from 10.244.1.7

  # A connection from outside to a node port (from the node itself when --from is omitted)
  kpc trace -f manifests/ -R --hostname-override node-a --to 192.168.0.2:30080 --from 203.0.113.9

  # Through a node's live rules
  iptables-save > node-a.rules
  kpc trace --rules node-a.rules --node-ip 192.168.0.2 --to 10.96.0.1:443 --from 10.244.1.7 -o json

  # IPVS mode: through a bundle directory (kpc compile --proxy-mode ipvs -o DIR, or a node's
  # ipvsadm-save -n, ipset save, iptables-save and kube-ipvs0 addresses under the bundle's names)
  kpc trace --rules bundle/ --node-ip 192.168.0.2 --to 10.96.0.10:53/udp --from 10.244.1.7
`;

/** `10.0.0.1:80`, `10.0.0.1:80/udp`, `[fd00::1]:53/udp`. */
export function parseDestination(text: string): { ip: string; port: number; protocol: Protocol } {
  const m = /^(?:\[([^\]]+)\]|([^:/[\]]+)):(\d{1,5})(?:\/([A-Za-z]+))?$/.exec(text.trim());
  if (!m) throw usageError(`--to: "${text}" is not IP:PORT[/tcp|udp|sctp] (IPv6 as [ADDR]:PORT)`);
  const ipText = m[1] ?? m[2]!;
  const ip = parseIP(ipText);
  if (!ip || (m[1] !== undefined) !== (ip.ip.family === 'IPv6')) throw usageError(`--to: "${ipText}" is not an IP address${m[1] === undefined && ipText.includes(':') ? ' (write IPv6 as [ADDR]:PORT)' : ''}`);
  const port = Number(m[3]);
  if (port < 1 || port > 65535) throw usageError(`--to: port ${port} is not between 1 and 65535`);
  const proto = (m[4] ?? 'tcp').toLowerCase();
  if (proto !== 'tcp' && proto !== 'udp' && proto !== 'sctp') throw usageError(`--to: protocol "${m[4]}" is not tcp, udp or sctp`);
  return { ip: canonicalIP(ipText)!, port, protocol: proto };
}

/** A --rules text: the inline script kpc prints in IPVS mode (`#!`), or what rulesOfText reads. */
function rulesOfFile(text: TextSource, family: NftFamily): TraceRules {
  const script = text.startsWith('#!') ? oneString(text) : undefined;
  const bundle = script !== undefined ? extractInlineBundle(script) : undefined;
  return bundle ? { form: 'ipvs', bundle } : rulesOfText(text, family);
}

/** ASCII comes as its bytes; other text too long to be a string in pieces (text-source.ts). */
function readRulesFile(path: string, io: Io): TextSource {
  return readNamedTextSource(path, '--rules', io.readStdin);
}

/** The JSON view: the contract's keys first (cli.md), then the detail. */
export function traceJSON(r: TraceResult): string[] {
  const { verdict, endpoints, masquerade, path, ...rest } = r;
  const whole: Record<string, unknown> = { verdict, endpoints, masquerade, path, ...rest };
  const branches = whole.branches;
  if (!Array.isArray(branches) || branches.length === 0) return [JSON.stringify(whole, null, 2) + '\n'];
  // The branches one piece each, the bytes JSON.stringify(whole, null, 2) gives: an nftables
  // trace repeats the numgen rule (a verdict per endpoint) in every branch, and at 5,000
  // endpoints the whole is longer than one string can be.
  const text = JSON.stringify({ ...whole, branches: BRANCHES }, null, 2);
  const at = text.indexOf(`"branches": ${JSON.stringify(BRANCHES)}`) + '"branches": '.length;
  const pieces = [text.slice(0, at), '[\n    '];
  branches.forEach((b, i) => pieces.push((i > 0 ? ',\n    ' : '') + JSON.stringify(b, null, 2).replace(/\n/g, '\n    ')));
  pieces.push('\n  ]', text.slice(at + JSON.stringify(BRANCHES).length), '\n');
  return pieces;
}

/** Where traceJSON puts the branches (no trace holds this string). */
const BRANCHES = '\u0000branches\u0000';

function styleFor(io: Io): TraceStyle {
  const chalk = new Chalk({ level: io.stdoutIsTTY ? 1 : 0 });
  if (!io.stdoutIsTTY) return {};
  return {
    verdict: (t, v) => (v === 'ACCEPT' ? chalk.green(t) : v === 'REJECT' ? chalk.yellow(t) : chalk.red(t)),
    endpoint: (t) => chalk.cyan(t),
    heading: (t) => chalk.bold(t),
    dim: (t) => chalk.dim(t),
  };
}

export function runTrace(flags: TraceFlags, io: Io): number {
  if (flags.to === undefined) throw usageError('--to IP:PORT[/PROTO] is required');
  const dest = parseDestination(flags.to);
  const family = parseIP(dest.ip)!.ip.family;
  if (flags.from !== undefined) {
    const from = parseIP(flags.from);
    if (!from) throw usageError(`--from: "${flags.from}" is not an IP address`);
    if (from.ip.family !== family) throw usageError(`--from ${flags.from} and --to ${flags.to} are of different IP families`);
  }
  const wanted = family === 'IPv4' ? 'ipv4' : 'ipv6';
  if (flags.ipFamily !== undefined && flags.ipFamily !== wanted) {
    throw usageError(`--ip-family ${flags.ipFamily} does not match --to ${flags.to} (an ${family} address)`);
  }
  const format = flags.output ?? 'text';

  const nftFamily = family === 'IPv4' ? 'ip' : 'ip6';
  // A --rules file is read (its text, or a bundle directory) before the input is compiled, and
  // taken apart, by its form, after (its errors name the file).
  let rules: TraceRules | TextSource;
  let nodeIPs: string[];
  if (flags.rules !== undefined) {
    if (flags.rules === '-' && (flags.filename ?? []).includes('-')) throw usageError('--rules - and -f - cannot both read stdin');
    rules = flags.rules !== '-' && isDirectoryPath(flags.rules) ? { form: 'ipvs', bundle: readBundleTexts(flags.rules) } : readRulesFile(flags.rules, io);
    if ((flags.filename ?? []).length > 0) {
      const compiled = compileInput({ ...flags, ipFamily: wanted }, io.readStdin);
      reportCompiled(io, compiled);
      nodeIPs = compiled.settings.proxy.nodeIPs;
    } else {
      nodeIPs = flags.nodeIp ?? [];
      for (const ip of nodeIPs) if (!parseIP(ip)) throw usageError(`--node-ip: "${ip}" is not an IP address`);
      if (nodeIPs.length === 0) reportNotes(io, ['no --node-ip: only loopback addresses count as the node\'s own (addrtype LOCAL)']);
    }
  } else {
    const compiled = compileInput({ ...flags, ipFamily: wanted }, io.readStdin);
    reportCompiled(io, compiled);
    const backend = backendFor(compiled.settings.mode);
    if (!backend.traceRules) throw usageError(`kpc trace follows ${modesWith('traceRules').join(', ')} rules; --proxy-mode ${backend.mode} is not supported yet`);
    // Only the shared chains and the service ports this destination can reach (iptables mode).
    rules = backend.traceRules(compiled.ir, { standalone: flags.standalone ?? false }, reachableServicePorts(dest));
    nodeIPs = compiled.settings.proxy.nodeIPs;
  }

  let result: IpvsTraceResult;
  try {
    const packet: PacketSpec = {
      destination: dest.ip,
      port: dest.port,
      protocol: dest.protocol,
      ...(flags.from !== undefined ? { source: flags.from } : {}),
      ...(flags.inInterface !== undefined ? { inInterface: flags.inInterface } : {}),
    };
    const traced = traceThrough(isTextSource(rules) ? rulesOfFile(rules, nftFamily) : rules, packet, { ips: nodeIPs });
    result = traced.result;
    if (flags.rules !== undefined) reportNotes(io, traced.warnings.map((w) => `--rules ${flags.rules}: ${w}`));
  } catch (e) {
    if (isKpcError(e, 'previous.unreadable')) {
      if (flags.rules !== undefined) throw e.inFile(flags.rules, '--rules');
      throw new Error(`kpc's own rules do not read back: ${e.describe()}`);
    }
    throw e;
  }
  const stage = result.ipvs;
  io.stdout(format === 'json' ? traceJSON(result) : [renderTrace(result, styleFor(io)) + (stage ? '\n' + renderIpvsStage(stage) : '')]);
  return EXIT.ok;
}

export const traceCommand: CommandSpec<TraceFlags> = {
  name: 'trace',
  description: 'follow a new connection through the compiled rules (or --rules FILE) and say where it goes',
  modes: modesWith('traceRules'),
  ipFamily: 'own',
  standalone: 'trace through the --standalone form (the built-in chain jumps written out, not assumed)',
  options(cmd) {
    cmd
      .addOption(new Option('--ip-family <family>', "which family's rules (default: the family of --to)").choices(['ipv4', 'ipv6']))
      .requiredOption('--to <ip:port[/proto]>', 'the destination: IP:PORT, [IPv6]:PORT, optionally /tcp, /udp or /sctp (default tcp)')
      .option('--from <ip>', "the client's address (default: the node itself; a node address also means the node itself)")
      .option('--in-interface <name>', 'the interface a packet from the network arrives on (for -i matches)')
      .option('--rules <file>', "trace through this file instead of compiling: kpc's output, a node's iptables-save or nft list, or an IPVS bundle directory (- for stdin)")
      .addOption(new Option('-o, --output <format>', 'text, or json ({"verdict", "endpoints", "masquerade", "path", ...})').choices(['text', 'json']).default('text'));
  },
  help: [EXAMPLES],
  run: runTrace,
};

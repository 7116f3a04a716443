/**
 * kpc's command line (cli.md is the contract). `main(argv, io)` returns the exit code;
 * only bin/kpc.js touches the process.
 */

import { PathError, readBoundedFd } from '../parser/input-files.js';
import { Command, CommanderError, Option } from 'commander';
import { printDiagnostics, reportNotes } from './report.js';
import { addInputOptions, addKnobOptions, addNodeOptions } from './options.js';
import { EXIT, UsageError } from './exit-codes.js';
import { InputErrors, type CommonFlags } from './pipeline.js';
import type { Io } from './io.js';
import { runCompile, type CompileFlags } from './commands/compile.js';
import { runValidate } from './commands/validate.js';
import { runDiff, type DiffFlags } from './commands/diff.js';
import { runCheck, type CheckFlags } from './commands/check.js';
import { addTraceCommand } from './commands/trace.js';
import { addExplainCommand } from './commands/explain.js';
import { addDnsCommand } from './commands/dns.js';
import { KPC_VERSION, KUBE_PROXY_VERSION } from './version.js';

export function processIo(): Io {
  // A reader that stops early (`kpc compile … | head`) closes the pipe. kpc then stops writing,
  // quietly, and exits with the code it computed; without a listener the EPIPE would surface
  // as a crash with a stack trace.
  let readerGone = false;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    readerGone = true;
  });
  return {
    stdout: (chunks) => {
      for (const c of chunks) {
        if (readerGone) return;
        process.stdout.write(c);
      }
    },
    stderr: (text) => process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
    // Read fd 0 whole: kpc needs every document before it can write anything.
    readStdin: (maxBytes) => readBoundedFd(0, '<stdin>', maxBytes),
  };
}

const EXAMPLES = `
Examples:
  # The rules kube-proxy would write on node-a, from a directory of manifests
  kpc compile -f manifests/ -R --hostname-override node-a --cluster-cidr 10.244.0.0/16

  # From a live cluster's objects, into a file (written atomically)
  kubectl get svc,endpointslices,nodes -A -o yaml | kpc compile -f - --hostname-override node-a -o rules.txt

  # A self-contained ruleset for a fresh network namespace
  kpc compile -f manifests/ --standalone --hostname-override node-a | ip netns exec lab iptables-restore

  # Only what changed since the rules a node has now, for iptables-restore --noflush
  iptables-save > node.txt
  kpc compile -f manifests/ --hostname-override node-a --previous node.txt | iptables-restore --noflush

  # What changed, per Service port (exit 1 when something did)
  kpc diff -f manifests/ --hostname-override node-a --previous node.txt

  # Check manifests the way the API server would
  kpc validate -f manifests/ -R
`;

/** How --previous / --golden work in ipvs mode (compile, diff and check help). */
const IPVS_INCREMENTAL_HELP = `
IPVS mode (--proxy-mode ipvs) with --previous PATH (diff, compile) or --golden PATH (check):
  PATH is a bundle directory (kpc compile -o DIR: ipvs.rules, ipset.rules, iptables.rules,
  kube-ipvs0.addrs), the apply.sh kpc prints without -o, or a node's state captured as
    ipvsadm-save -n > DIR/ipvs.rules; ipset save > DIR/ipset.rules
    iptables-save > DIR/iptables.rules; ip -o addr show dev kube-ipvs0 > DIR/kube-ipvs0.addrs
  compile --previous writes a DELTA bundle (-o DIR2, or apply.sh with the parts inline):
    ipvs.rules        only -A/-E/-D (virtual) and -a/-e/-d (real server) lines, for ipvsadm -R
    ipset.rules       create/add/del (-exist) and destroy lines, for ipset restore
    iptables.rules    the changed IPVS-mode chains, whole, for iptables-restore --noflush
    kube-ipvs0.addrs  the full wanted address list; apply.sh adds and removes the difference
    apply.sh          applies them in a safe order (new things first, removals last)
  A removed TCP real server is quiesced (-e ... -w 0: no new connections, existing ones
  drain), and deleted by the next delta computed from a state that has it at weight 0 (the
  node's dumps), as kube-proxy's graceful termination deletes it once its connections are
  gone; --ipvs-removed-real-servers delete removes it at once. UDP and SCTP real servers are
  deleted at once, as kube-proxy does. --full writes every wanted server, set entry, chain and
  address, plus the deletions.
`;

function commonCommand(program: Command, name: string, description: string): Command {
  const cmd = program.command(name).description(description);
  addInputOptions(cmd);
  addNodeOptions(cmd);
  addKnobOptions(cmd);
  cmd.addOption(new Option('--ip-family <family>', 'which family\'s rules (kube-proxy runs one proxier per family)').choices(['ipv4', 'ipv6']).default('ipv4'));
  return cmd;
}

function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('kpc');
  program
    .description('kpc, the kube-proxy compiler: what would kube-proxy program on this node?')
    .version(`kpc ${KPC_VERSION} (reproduces kube-proxy ${KUBE_PROXY_VERSION})`, '--version')
    .addHelpText('after', EXAMPLES)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout([s]), writeErr: (s) => io.stderr(s) })
    .hook('preAction', (_program, action) => {
      io.quiet = action.opts().quiet === true;
    });

  commonCommand(program, 'compile', 'print the rules kube-proxy would program on one node')
    .option('--standalone', 'also write the jumps from the built-in chains (for a fresh node or namespace)')
    .option('-o, --output <path>', 'write to PATH atomically instead of stdout (a file; in ipvs mode a directory). Unlike kubectl and kpc diff/trace/explain, where -o is a format')
    .option('--previous <path>', 'a previous output or a node\'s iptables-save: print only what must change (for iptables-restore --noflush); ipvs mode: a bundle directory or apply.sh (see below)')
    .option('--full', 'with --previous: print everything, plus the deletions')
    .addOption(
      new Option('--ipvs-removed-real-servers <policy>', 'ipvs mode with --previous: a TCP real server no longer wanted is quiesced (weight 0, deleted by the next delta) or deleted at once (UDP/SCTP: always deleted)')
        .choices(['quiesce', 'delete'])
        .default(undefined, 'quiesce'),
    )
    .addHelpText('after', IPVS_INCREMENTAL_HELP)
    .addHelpText('after', EXAMPLES)
    .exitOverride()
    .action((flags: CompileFlags) => setExit(runCompile(flags, io)));

  commonCommand(program, 'diff', 'show, per Service port, what changed against a previous output (exit 0 same, 1 differs)')
    .requiredOption('--previous <path>', 'a previous output or a node\'s iptables-save; ipvs mode: a bundle directory or apply.sh (see below)')
    .addOption(new Option('-o, --output <format>', 'json for tools (default: a human view, coloured on a terminal)').choices(['text', 'json']))
    .addHelpText('after', IPVS_INCREMENTAL_HELP)
    .exitOverride()
    .action((flags: DiffFlags) => setExit(runDiff(flags, io)));

  commonCommand(program, 'check', 'CI golden check: compile and compare with a committed file (exit 0 same, 1 drift)')
    .requiredOption('--golden <path>', 'the committed output to compare with; ipvs mode: a bundle directory (every file compared) or apply.sh')
    .option('--standalone', 'compare the --standalone form')
    .addHelpText('after', IPVS_INCREMENTAL_HELP)
    .exitOverride()
    .action((flags: CheckFlags) => setExit(runCheck(flags, io)));

  addTraceCommand(program, io, setExit);
  addExplainCommand(program, io, setExit);
  addDnsCommand(program, io, setExit);

  commonCommand(program, 'validate', 'read and validate the manifests; print every problem')
    .addHelpText('after', EXAMPLES)
    .exitOverride()
    .action((flags: CommonFlags) => setExit(runValidate(flags, io)));

  return program;
}

export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (e) {
    return handleError(e, io);
  }
}

export function handleError(e: unknown, io: Io): number {
  if (e instanceof CommanderError) {
    // --help and --version end here too, successfully.
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.ok;
    return EXIT.badInput;
  }
  if (e instanceof InputErrors) {
    printDiagnostics(io, [...e.warnings, ...e.diagnostics]);
    reportNotes(io, e.notes);
    io.stderr(`error: ${e.summary ?? `${e.diagnostics.length} problem(s) in the input`}; nothing was written\n`);
    return EXIT.badInput;
  }
  if (e instanceof UsageError || e instanceof PathError) {
    io.stderr(`error: ${e.message}\n`);
    return EXIT.badInput;
  }
  const err = e as Error;
  io.stderr(`internal error: ${err?.stack ?? String(e)}\nThis is a bug in kpc; nothing was written.\n`);
  return EXIT.internal;
}


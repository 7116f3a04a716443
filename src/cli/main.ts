/**
 * kpc's command line (cli.md is the contract). `main(argv, io)` returns the exit code;
 * only bin/kpc.js touches the process.
 */

import { readBoundedFd } from '../parser/input-files.js';
import { Command, CommanderError, Option } from 'commander';
import { printDiagnostics, reportNotes } from './report.js';
import { addInputOptions, addKnobOptions, addNodeOptions } from './options.js';
import type { CommandSpec } from './command-spec.js';
import { EXAMPLES } from './help.js';
import { EXIT, exitCodeFor, KpcError, usageError } from '../errors.js';
import type { Io } from './io.js';
import { fdStdout } from './write/stdout.js';
import { compileCommand } from './commands/compile.js';
import { validateCommand } from './commands/validate.js';
import { diffCommand } from './commands/diff.js';
import { checkCommand } from './commands/check.js';
import { traceCommand } from './commands/trace.js';
import { explainCommand } from './commands/explain.js';
import { dnsCommand } from './commands/dns.js';
import { endpointSlicesCommand } from './commands/endpointslices.js';
import { watchCommand } from './commands/watch.js';
import { versionText } from './version.js';
import { PROXY_MODES } from '../modes/index.js';

export function processIo(): Io {
  // stdout is fd 1 written directly (write/stdout.ts): a reader that stops early (`kpc
  // compile … | head`) makes kpc stop writing quietly with the exit code it computed; any
  // other failure (> /dev/full, a full disk) is a one-line error, exit 2.
  const out = fdStdout(1);
  // Diagnostics that cannot be written (2> /dev/full) are lost, but must not crash kpc: the
  // exit code still says how the run went.
  process.stderr.on('error', () => {});
  return {
    stdout: (chunks) => out.write(chunks),
    stderr: (text) => process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
    stdoutIsTTY: out.isTTY,
    // Read fd 0 whole: kpc needs every document before it can write anything.
    readStdin: (maxBytes) => readBoundedFd(0, '<stdin>', maxBytes),
  };
}

/** Every command, in the order help lists them. */
const COMMANDS: ReadonlyArray<CommandSpec<any>> = [compileCommand, watchCommand, diffCommand, checkCommand, traceCommand, explainCommand, dnsCommand, endpointSlicesCommand, validateCommand];

/**
 * One command, registered the way every command is: its argument, the shared input flags,
 * for commands that compile the node and knob flags (--proxy-mode listing the modes it
 * supports) and --ip-family, --standalone where it shapes the output, then its own options.
 */
function registerCommand<F>(program: Command, spec: CommandSpec<F>, io: Io, setExit: (code: number) => void): void {
  const cmd = program.command(spec.name, spec.isDefault ? { isDefault: true } : {}).description(spec.description);
  if (spec.subcommands) {
    for (const sub of spec.subcommands) registerCommand(cmd, sub, io, setExit);
    for (const text of spec.help ?? []) cmd.addHelpText('after', text);
    cmd.exitOverride();
    return;
  }
  for (const arg of spec.arguments ?? []) cmd.argument(arg.name, arg.description);
  addInputOptions(cmd);
  if (spec.modes) {
    addNodeOptions(cmd);
    // Every command that compiles takes the same --proxy-mode choices; one it cannot work in yet
    // is refused below with kpc's own usage error, not commander's "Allowed choices".
    addKnobOptions(cmd, PROXY_MODES, spec.modes.length < PROXY_MODES.length ? `kpc ${commandPath(cmd)} supports ${spec.modes.join(', ')}` : undefined);
    if (spec.ipFamily !== 'own') cmd.addOption(new Option('--ip-family <family>', "which family's rules (kube-proxy runs one proxier per family)").choices(['ipv4', 'ipv6']).default('ipv4'));
  }
  if (spec.standalone) cmd.option('--standalone', spec.standalone);
  spec.options(cmd);
  for (const text of spec.help ?? []) cmd.addHelpText('after', text);
  const run = spec.run!;
  cmd.exitOverride().action((...args: unknown[]) => {
    const flags = (args[args.length - 1] as Command).opts() as Record<string, unknown>;
    (spec.arguments ?? []).forEach((arg, i) => (flags[arg.key] = args[i]));
    if (spec.modes) refuseUnsupportedMode(commandPath(cmd), spec.modes, flags.proxyMode);
    setExit(run(flags as F, io));
  });
}

/** `trace`, `dns resolve`: the command's words after `kpc`. */
function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c !== null && c.parent !== null; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/**
 * A --proxy-mode flag the command cannot work in yet: a usage error (exit 2) naming it. (A mode
 * from --config is refused by the command itself once the config is read.)
 */
export function refuseUnsupportedMode(command: string, supported: readonly string[], mode: unknown): void {
  if (typeof mode !== 'string' || supported.includes(mode)) return;
  throw usageError(`kpc ${command} --proxy-mode ${mode}: not supported yet for ${mode} mode; kpc ${command} supports --proxy-mode ${supported.join(', ')}`);
}

function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('kpc');
  program
    .description('kpc, the kube-proxy compiler: what would kube-proxy program on this node?')
    .version(versionText(), '--version')
    .addHelpText('after', EXAMPLES)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout([s]), writeErr: (s) => io.stderr(s) })
    .hook('preAction', (_program, action) => {
      io.quiet = action.opts().quiet === true;
    });
  for (const spec of COMMANDS) registerCommand(program, spec, io, setExit);
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
  if (e instanceof KpcError) return reportError(e, io);
  const err = e as Error;
  io.stderr(`internal error: ${err?.stack ?? String(e)}\nThis is a bug in kpc; nothing was written.\n`);
  return EXIT.internal;
}

/** Every kpc error is told here: the input's diagnostics first, then one `error:` line. */
function reportError(e: KpcError, io: Io): number {
  if (e.report) {
    printDiagnostics(io, [...e.report.warnings, ...e.report.diagnostics]);
    reportNotes(io, e.report.notes);
  }
  if (e.kind === 'internal') {
    io.stderr(`internal error: ${e.describe()}\nThis is a bug in kpc; nothing was written.\n`);
  } else if (e.kind === 'input' && e.report) {
    io.stderr(`error: ${e.message}; nothing was written\n`);
  } else {
    io.stderr(`error: ${e.describe()}\n`);
  }
  return exitCodeFor(e);
}


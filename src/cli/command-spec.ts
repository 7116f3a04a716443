/**
 * How a command is declared: every kpc command is one CommandSpec, registered the same way
 * (main.ts registerCommand). Commands that compile share the input, node, knob and
 * output-shaping flags. Every such command takes the same --proxy-mode choices (all modes);
 * `modes` are those whose backend can do what it needs, and a --proxy-mode outside them is
 * refused with kpc's usage error naming it (main.ts refuseUnsupportedMode), its help saying
 * which modes it supports.
 */

import type { Command } from 'commander';
import type { Io } from './io.js';
import type { ProxyMode } from '../modes/index.js';

export interface CommandSpec<F> {
  name: string;
  description: string;
  /** Positional arguments, e.g. `<service>`, handed to run as flags[key]. */
  arguments?: ReadonlyArray<{ name: string; description: string; key: string }>;
  /** Commands under this one (`kpc dns resolve`); the parent then has no run of its own. */
  subcommands?: ReadonlyArray<CommandSpec<any>>;
  /** The subcommand run when the parent is given alone. */
  isDefault?: boolean;
  /** The modes it works in (others are refused with a usage error); undefined: it compiles nothing (no knob flags). */
  modes?: readonly ProxyMode[];
  /** 'own': the command declares its own --ip-family (trace: the family of --to). */
  ipFamily?: 'own';
  /** --standalone: the output with what kube-proxy installs outside its restore. */
  standalone?: string;
  /** Its own options, after the shared ones. */
  options(cmd: Command): void;
  help?: readonly string[];
  run?(flags: F, io: Io): number;
}

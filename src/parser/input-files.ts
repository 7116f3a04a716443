/**
 * Where manifests come from: `-f` paths (files, directories, `-` for stdin), like kubectl.
 * Reads bytes and turns them into text; knows nothing of YAML.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isUtf8 } from 'node:buffer';
import type { Diagnostic } from './diagnostics.js';

/** One input file's bytes (checked to be UTF-8 text), with the name diagnostics show. */
export interface Source {
  name: string;
  bytes: Uint8Array;
}

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

export class InputFileError extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(`${diagnostic.file}: ${diagnostic.message}`);
    this.name = 'InputFileError';
  }
}

function fileError(file: string, message: string, line = 1, column = 1): InputFileError {
  return new InputFileError({ file, line, column, path: '', message, severity: 'error' });
}

/**
 * Expand `-f` arguments into file paths in a stable order: a directory gives its manifest
 * files sorted by name (and, with `recursive`, those of its subdirectories).
 */
export function expandPaths(paths: readonly string[], recursive: boolean): string[] {
  const out: string[] = [];
  let stdinSeen = false;
  for (const p of paths) {
    if (p === '-') {
      if (stdinSeen) throw fileError('-', 'standard input ("-") may be given only once');
      stdinSeen = true;
      out.push('-');
      continue;
    }
    let st;
    try {
      st = statSync(p);
    } catch {
      throw fileError(p, 'no such file or directory');
    }
    if (st.isDirectory()) out.push(...listDirectory(p, recursive));
    else out.push(p);
  }
  return out;
}

function listDirectory(dir: string, recursive: boolean): string[] {
  const out: string[] = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) out.push(...listDirectory(full, recursive));
    } else if (MANIFEST_EXTENSIONS.some((ext) => e.name.endsWith(ext))) {
      out.push(full);
    }
  }
  return out;
}

/**
 * Check that bytes are text: UTF-8 only, no NUL bytes (binary garbage gets a clear error,
 * not a parse). The text itself is decoded later, piece by piece: a cluster's worth of
 * manifests can be larger than one JavaScript string.
 */
export function checkText(name: string, bytes: Uint8Array): Source {
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw fileError(name, `not a text file: NUL byte at offset ${nul}; manifests are UTF-8 YAML or JSON`);
  if (!isUtf8(bytes)) throw fileError(name, 'not a text file: invalid UTF-8; manifests are UTF-8 YAML or JSON');
  // A byte-order mark is not part of the text.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  return { name, bytes };
}

export function readSource(path: string, readStdin: () => Uint8Array): Source {
  if (path === '-') return checkText('<stdin>', readStdin());
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw fileError(path, `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  return checkText(path, bytes);
}

export function readStdinSync(): Uint8Array {
  return readFileSync(0);
}

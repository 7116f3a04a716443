/**
 * Where manifests come from: `-f` paths (files, directories, `-` for stdin), like kubectl.
 * Reads bytes and turns them into text; knows nothing of YAML.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Diagnostic } from './diagnostics.js';

/** One input file's text, with the name diagnostics show. */
export interface SourceText {
  name: string;
  text: string;
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes to text: UTF-8 only, no NUL bytes (binary garbage gets a clear error, not a parse). */
export function decodeText(name: string, bytes: Uint8Array): SourceText {
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw fileError(name, `not a text file: NUL byte at offset ${nul}; manifests are UTF-8 YAML or JSON`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw fileError(name, 'not a text file: invalid UTF-8; manifests are UTF-8 YAML or JSON');
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { name, text };
}

export function readSource(path: string, readStdin: () => Uint8Array): SourceText {
  if (path === '-') return decodeText('<stdin>', readStdin());
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw fileError(path, `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  return decodeText(path, bytes);
}

export function readStdinSync(): Uint8Array {
  return readFileSync(0);
}

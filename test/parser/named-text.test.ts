/**
 * readNamedText (src/parser/input-files.ts), how --rules, --previous and --golden files are read
 * whole: UTF-8 decoded, and one too long to be a JavaScript string refused with the file's name,
 * not left to crash in the decoder (kpc's nftables output at 100,000 Services is 721 MB).
 */

import { constants } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { oneText, readNamedLineText, readNamedText, readNamedTextSource } from '../../src/parser/input-files.js';
import { PiecedText } from '../../src/lang/pieced-text.js';
import { AsciiBytes } from '../../src/lang/ascii-bytes.js';
import { KpcError } from '../../src/errors.js';

/** A one-byte array that says it is one byte longer than a string can be: it stands in for 512 MiB (the length is what is checked). */
function hugeBytes(): Uint8Array {
  const huge = new Uint8Array(1);
  Object.defineProperty(huge, 'byteLength', { value: constants.MAX_STRING_LENGTH + 1 });
  return huge;
}

/** What `work` throws (undefined when it returns). */
function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('readNamedText', () => {
  it('decodes stdin as UTF-8 text', () => {
    expect(readNamedText('-', '--rules', () => new TextEncoder().encode('*nat\n# é\nCOMMIT\n'))).toBe('*nat\n# é\nCOMMIT\n');
  });

  it('refuses bytes longer than a string can be, naming the input and the option', () => {
    const huge = hugeBytes();
    const error = thrown(() => readNamedText('-', '--rules', () => huge));
    expect(error).toBeInstanceOf(KpcError);
    expect((error as KpcError).message).toContain(`too large to read whole: ${constants.MAX_STRING_LENGTH + 1} bytes`);
    expect((error as KpcError).describe()).toContain('--rules');
  });
});

describe('readNamedTextSource', () => {
  const text = 'add table ip kube-proxy\nadd chain ip kube-proxy é\nadd chain ip kube-proxy services\n';
  const bytes = new TextEncoder().encode(text);

  it('gives ASCII bytes as they are, not decoded, however long', () => {
    const ascii = new TextEncoder().encode('*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n');
    const read = readNamedTextSource('-', '--rules', () => ascii, undefined, 10);
    expect(read).toBeInstanceOf(AsciiBytes);
    expect((read as AsciiBytes).toString()).toBe('*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n');
  });

  it('gives a text no longer than a piece as one string', () => {
    expect(readNamedTextSource('-', '--rules', () => bytes, undefined, bytes.byteLength)).toBe(text);
  });

  it('cuts a longer one after line feeds into pieces of at most maxPiece bytes, decoded as UTF-8', () => {
    const pieced = readNamedTextSource('-', '--rules', () => bytes, undefined, 40);
    expect(pieced).toBeInstanceOf(PiecedText);
    const pieces = (pieced as PiecedText).pieces;
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(new TextEncoder().encode(piece).byteLength).toBeLessThanOrEqual(40);
      expect(piece.endsWith('\n')).toBe(true);
    }
  });

  it('refuses a line longer than a piece, naming the input and the option', () => {
    let error: unknown;
    try {
      readNamedTextSource('-', '--rules', () => bytes, undefined, 10);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KpcError);
    expect((error as KpcError).message).toContain('a line from byte 0 on is longer than 10 bytes');
    expect((error as KpcError).describe()).toContain('--rules');
  });
});

describe('readNamedLineText', () => {
  const ascii = new TextEncoder().encode('add table ip kube-proxy\nadd chain ip kube-proxy services\n');

  it('gives ASCII longer than one string as its bytes, anything else as readNamedText does', () => {
    const long = readNamedLineText('-', '--previous', () => ascii, undefined, 10);
    expect(long).toBeInstanceOf(AsciiBytes);
    expect((long as AsciiBytes).toString()).toBe(new TextDecoder().decode(ascii));
    expect(readNamedLineText('-', '--previous', () => ascii, undefined, ascii.byteLength)).toBe(new TextDecoder().decode(ascii));
    // Not ASCII: decoded (refused only past one string's length).
    expect(readNamedLineText('-', '--previous', () => new TextEncoder().encode('# é\n'), undefined, 1)).toBe('# é\n');
  });

  it('is one string for a reader that needs one, or refused as readNamedText refuses it', () => {
    const long = readNamedLineText('-', '--previous', () => ascii, undefined, 10) as AsciiBytes;
    expect(oneText('-', '--previous', long)).toBe(new TextDecoder().decode(ascii));
    expect(oneText('-', '--previous', 'as it is')).toBe('as it is');
    // The length is what is checked (as above).
    Object.defineProperty(long.bytes, 'byteLength', { value: constants.MAX_STRING_LENGTH + 1 });
    const error = thrown(() => oneText('-', '--previous', long));
    expect(error).toBeInstanceOf(KpcError);
    expect((error as KpcError).message).toContain(`too large to read whole: ${constants.MAX_STRING_LENGTH + 1} bytes`);
    // readNamedText's own words for the same input.
    const huge = hugeBytes();
    const whole = thrown(() => readNamedText('-', '--previous', () => huge));
    expect((error as KpcError).describe()).toBe((whole as KpcError).describe());
    expect((error as KpcError).describe()).toContain('--previous');
  });
});

/**
 * readNamedText (src/parser/input-files.ts), how --rules, --previous and --golden files are read
 * whole: UTF-8 decoded, and one too long to be a JavaScript string refused with the file's name,
 * not left to crash in the decoder (kpc's nftables output at 100,000 Services is 721 MB).
 */

import { constants } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { readNamedText } from '../../src/parser/input-files.js';
import { KpcError } from '../../src/errors.js';

describe('readNamedText', () => {
  it('decodes stdin as UTF-8 text', () => {
    expect(readNamedText('-', '--rules', () => new TextEncoder().encode('*nat\n# é\nCOMMIT\n'))).toBe('*nat\n# é\nCOMMIT\n');
  });

  it('refuses bytes longer than a string can be, naming the input and the option', () => {
    // The length is what is checked: a one-byte array that says it is longer stands in for 512 MiB.
    const huge = new Uint8Array(1);
    Object.defineProperty(huge, 'byteLength', { value: constants.MAX_STRING_LENGTH + 1 });
    let error: unknown;
    try {
      readNamedText('-', '--rules', () => huge);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KpcError);
    expect((error as KpcError).message).toContain(`too large to read whole: ${constants.MAX_STRING_LENGTH + 1} bytes`);
    expect((error as KpcError).describe()).toContain('--rules');
  });
});

/**
 * Plain scalars that YAML 1.1 (what kubectl's go-yaml uses) and YAML 1.2 (what kpc's
 * parsers use) read differently: `yes`/`on`/`y` are booleans in 1.1 and strings in 1.2, `010` is
 * 8 in 1.1 and 10 in 1.2, and so on. kpc refuses to guess which one the user meant.
 */

// Plain scalars YAML 1.1 resolves differently from YAML 1.2's core schema.
const YAML11_BOOL = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;
const YAML11_OCTAL = /^[-+]?0[0-7_]+$/;
const YAML11_BINARY = /^[-+]?0b[01_]+$/;
const YAML12_OCTAL = /^0o[0-7]+$/;
const YAML11_UNDERSCORE_NUMBER = /^[-+]?(0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?)$/;
const YAML11_SEXAGESIMAL = /^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/;

/** How YAML 1.1 reads a plain scalar, when that differs from YAML 1.2; undefined otherwise. */
export function yaml11Reading(source: string): string | undefined {
  if (YAML11_BOOL.test(source)) return `the boolean ${/^(y|yes|on)$/i.test(source)}`;
  if (YAML11_OCTAL.test(source) && /[0-7]/.test(source.slice(1))) return `the octal number ${parseInt(source.replace(/_/g, ''), 8)}`;
  if (YAML11_BINARY.test(source)) return `the binary number ${parseInt(source.replace(/^[-+]?0b/, '').replace(/_/g, ''), 2)}`;
  if (YAML12_OCTAL.test(source)) return 'a string';
  if (source.includes('_') && YAML11_UNDERSCORE_NUMBER.test(source)) return `the number ${source.replace(/_/g, '')}`;
  if (YAML11_SEXAGESIMAL.test(source)) return 'a base-60 number';
  return undefined;
}


export function isYaml11Ambiguous(source: string): boolean {
  return yaml11Reading(source) !== undefined;
}

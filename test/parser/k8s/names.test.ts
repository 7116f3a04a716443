import { describe, expect, it } from 'vitest';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  nameIsDNSSubdomain,
  regexError,
} from '../../../src/parser/k8s/validate/names.js';
import { DNS1035, DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, QUALIFIED_NAME_PART } from './helpers.js';

describe('regexError', () => {
  it('keeps the upstream double space before "or"', () => {
    expect(regexError('m', 'f', 'a', 'b')).toBe("m (e.g. 'a',  or 'b', regex used for validation is 'f')");
    expect(regexError('m', 'f')).toBe("m (regex used for validation is 'f')");
  });
});

describe('DNS names', () => {
  it.each([
    ['a', []],
    ['a-1', []],
    ['1a', []],
    ['a.b', ['must not contain dots']],
    ['-a', [DNS1123_LABEL]],
    ['A', [DNS1123_LABEL]],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['must be no more than 63 characters']],
    ['é', [DNS1123_LABEL]],
  ])('isDNS1123Label(%j)', (v, expected) => expect(isDNS1123Label(v)).toEqual(expected));

  it.each([
    ['a.b.c', []],
    ['a..b', [DNS1123_SUBDOMAIN]],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, []],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, ['must be no more than 253 characters']],
  ])('isDNS1123Subdomain(%j)', (v, expected) => expect(isDNS1123Subdomain(v)).toEqual(expected));

  it.each([
    ['web', []],
    ['1web', [DNS1035]],
    ['web-', [DNS1035]],
  ])('isDNS1035Label(%j)', (v, expected) => expect(isDNS1035Label(v)).toEqual(expected));

  it('counts bytes, not UTF-16 units, for the length limit', () => {
    expect(isDNS1123Label('é'.repeat(32))).toEqual(['must be no more than 63 characters', DNS1123_LABEL]);
  });

  it('masks a trailing dash of a generateName prefix', () => {
    expect(nameIsDNSSubdomain('web-', true)).toEqual([]);
    expect(nameIsDNSSubdomain('web-', false)).toEqual([DNS1123_SUBDOMAIN]);
  });
});

describe('qualified names and label values', () => {
  it.each([
    ['app', []],
    ['example.com/App_1', []],
    ['/app', ['prefix part must be non-empty']],
    ['example.com/', ['name part must be non-empty', QUALIFIED_NAME_PART]],
    ['a/b/c', [expect.stringMatching(/^a valid label key must consist of/)]],
    ['x'.repeat(64), ['name part must be no more than 63 characters']],
  ])('isQualifiedName(%j)', (v, expected) => expect(isQualifiedName(v)).toEqual(expected));

  it.each([
    ['', []],
    ['v1.2_3', []],
    ['-v', [LABEL_VALUE]],
    ['v'.repeat(64), ['must be no more than 63 characters']],
  ])('isValidLabelValue(%j)', (v, expected) => expect(isValidLabelValue(v)).toEqual(expected));
});

describe('ports', () => {
  it('port numbers are 1-65535', () => {
    expect(isValidPortNum(1)).toEqual([]);
    expect(isValidPortNum(65535)).toEqual([]);
    expect(isValidPortNum(0)).toEqual(['must be between 1 and 65535, inclusive']);
  });

  it('port names are IANA service names', () => {
    expect(isValidPortName('http')).toEqual([]);
    expect(isValidPortName('')).toEqual(['must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)', 'must contain at least one letter (a-z)']);
  });
});

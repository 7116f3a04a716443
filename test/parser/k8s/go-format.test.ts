import { describe, expect, it } from 'vitest';
import { asJSON, goJSON, goJSONString, goQuote, GoStruct, renderBadValue } from '../../../src/parser/k8s/go-format.js';

describe("goQuote (Go's %q)", () => {
  it.each([
    ['web', '"web"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['\u0007\b\f\n\r\t\v', '"\\a\\b\\f\\n\\r\\t\\v"'],
    ['\u0000\u001f\u007f', '"\\x00\\x1f\\x7f"'],
    ['wéb 日本', '"wéb 日本"'],
    ['\u00a0\u2028\u2029\ufeff', '"\\u00a0\\u2028\\u2029\\ufeff"'],
    ['\u{1f600}', '"😀"'],
    ['\u{e0001}', '"\\U000e0001"'],
    ['\ud800', '"�"'],
    ['<&>', '"<&>"'],
  ])('%j', (input, expected) => expect(goQuote(input)).toBe(expected));
});

describe("goJSONString (encoding/json's HTML-safe strings)", () => {
  it.each([
    ['TCP', '"TCP"'],
    ['<&>', '"\\u003c\\u0026\\u003e"'],
    ['\n\r\t\b\f', '"\\n\\r\\t\\b\\f"'],
    ['\u0000\u001f', '"\\u0000\\u001f"'],
    ['\u007f', '"\u007f"'],
    ['\u2028\u2029', '"\\u2028\\u2029"'],
    ['wéb', '"wéb"'],
  ])('%j', (input, expected) => expect(goJSONString(input)).toBe(expected));
});

describe('goJSON and renderBadValue', () => {
  it('sorts map keys and keeps struct field order', () => {
    expect(goJSON({ b: 1, a: [true, null, 'x'] })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(goJSON(new GoStruct([['Z', 1], ['A', 'x']]))).toBe('{"Z":1,"A":"x"}');
  });

  it('prints strings with %q, numbers and booleans plainly, the rest as JSON', () => {
    expect(renderBadValue('a"b')).toBe('"a\\"b"');
    expect(renderBadValue(80)).toBe('80');
    expect(renderBadValue(false)).toBe('false');
    expect(renderBadValue(asJSON(['10.0.0.1']))).toBe('["10.0.0.1"]');
    expect(renderBadValue(asJSON('Local'))).toBe('"Local"');
  });
});

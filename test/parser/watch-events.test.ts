/**
 * The watch event stream reader (src/parser/watch-events.ts): cutting a byte stream into
 * top-level values whatever the chunk boundaries, positions in the stream, and each event's
 * verdict, with the same messages as for a file's objects.
 */

import { describe, expect, it } from 'vitest';
import { EventSplitter, readEvent, type EventPiece } from '../../src/parser/watch-events.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const OPTIONS = { name: 'events.json', defaultNamespace: 'default', ipValidation: 'strict' as const, nodePortRange: { min: 30000, max: 32767 } };

function split(text: string, chunk: number): Array<{ text: string; line: number; column: number; cut: boolean }> {
  const s = new EventSplitter();
  const bytes = enc.encode(text);
  const out: EventPiece[] = [];
  for (let i = 0; i < bytes.length; i += chunk) out.push(...s.feed(bytes.subarray(i, i + chunk)));
  const last = s.end();
  if (last) out.push(last);
  return out.map((p) => ({ text: dec.decode(p.bytes), line: p.line, column: p.column, cut: p.cut }));
}

const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } });

describe('EventSplitter', () => {
  const stream =
    JSON.stringify({ type: 'ADDED', object: svc('a') }) +
    '\n' +
    JSON.stringify({ type: 'MODIFIED', object: svc('b') }, null, 4) +
    '\n' +
    // braces and quotes inside strings do not count
    '{"type":"ADDED","object":{"kind":"Service","metadata":{"name":"x{\\"}"}}}' +
    '  {"type":"DELETED","object":{}}\n';

  it('cuts values the same at every chunk size, with their line:column', () => {
    const whole = split(stream, 1 << 20);
    expect(whole.map((p) => [p.line, p.column, p.cut])).toEqual([
      [1, 1, false],
      [2, 1, false],
      [21, 1, false], // the indented event above is 19 lines (2-20)
      [21, 75, false], // after the 72 characters of the third event and two spaces
    ]);
    expect(whole.map((p) => p.text).join('\n')).toBe(stream.trim().replace('}}}  {', '}}}\n{'));
    for (const n of [1, 2, 3, 7, 64]) expect(split(stream, n), `chunks of ${n}`).toEqual(whole);
  });

  it('an event never closed is cut where the next one starts (a { at a line start), so only it is lost', () => {
    const text = '{"type":"ADDED","object":{"kind":"Service",\n{"type":"DELETED","object":{}}\n';
    const pieces = split(text, 5);
    expect(pieces.map((p) => [p.line, p.column, p.cut])).toEqual([
      [1, 1, true],
      [2, 1, false],
    ]);
  });

  it('what is left at the end of the stream is one cut piece', () => {
    expect(split('{"type":"ADDED"', 4)).toEqual([{ text: '{"type":"ADDED"', line: 1, column: 1, cut: true }]);
    expect(split('  \n  ', 1)).toEqual([]);
  });
});

describe('readEvent', () => {
  const piece = (text: string, line = 1, column = 1, cut = false): EventPiece => ({ bytes: enc.encode(text), line, column, cut });

  it('an event: its type and the validated object (namespace defaulted as for files)', () => {
    const r = readEvent(piece(JSON.stringify({ type: 'MODIFIED', object: { ...svc('web'), metadata: { name: 'web' } } })), OPTIONS);
    expect(r.status).toBe('event');
    if (r.status !== 'event') return;
    expect(r.type).toBe('MODIFIED');
    expect(r.object.kind).toBe('Service');
    expect(r.object.metadata.namespace).toBe('default');
  });

  it('a bare object (kubectl without --output-watch-events) is OBJECT: add or replace', () => {
    const r = readEvent(piece(JSON.stringify(svc('web'))), OPTIONS);
    expect(r.status === 'event' && r.type).toBe('OBJECT');
  });

  it('a BOOKMARK is skipped; a kind kpc does not compile is skipped with a note', () => {
    expect(readEvent(piece('{"type":"BOOKMARK","object":{"kind":"Service","metadata":{"resourceVersion":"5"}}}'), OPTIONS)).toEqual({ status: 'skipped' });
    const r = readEvent(piece('{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}}', 4, 1), OPTIONS);
    expect(r.status).toBe('skipped');
  });

  it('problems are placed in the stream: a field of an event on line 7 column 3', () => {
    const text = JSON.stringify({ type: 'ADDED', object: { ...svc('web'), spec: { clusterIP: '10.96.0.10', ports: [{ port: 70000, targetPort: 8080 }] } } });
    const r = readEvent(piece(text, 7, 3), OPTIONS);
    expect(r.status).toBe('rejected');
    if (r.status !== 'rejected') return;
    const at = text.indexOf('70000');
    expect(r.errors.map((e) => [e.file, e.line, e.column, e.path])).toEqual([['events.json', 7, 3 + at, 'spec.ports[0].port']]);
    expect(r.errors[0]!.message).toBe('Invalid value: 70000: must be between 1 and 65535, inclusive');
  });

  it('malformed JSON, an unknown type, an ERROR event, a List, a duplicate key: rejected with a position', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"type":"ADDED","object":{"kind":}}', /^JSON: /],
      ['{"type":"UPDATED","object":{}}', /^type: Unsupported value: "UPDATED"/],
      ['{"type":"ERROR","object":{"kind":"Status","message":"too old resource version","reason":"Expired","code":410}}', /^ERROR event from the API server \(Expired 410\): too old resource version$/],
      ['{"kind":"List","apiVersion":"v1","items":[]}', /is not a watch event/],
      ['{"type":"ADDED","object":{"apiVersion":"v1","kind":"Service","kind":"Service","metadata":{"name":"a"}}}', /^duplicate field/],
    ];
    for (const [text, message] of cases) {
      const r = readEvent(piece(text, 3, 5), OPTIONS);
      expect(r.status, text).toBe('rejected');
      if (r.status !== 'rejected') continue;
      expect(r.errors[0]!.message, text).toMatch(message);
      expect(r.errors[0]!.line, text).toBe(3);
    }
  });
});

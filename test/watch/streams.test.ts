/**
 * Several --events streams: kubectl watches one resource type per call, so a node is followed
 * with one stream for Services, one for EndpointSlices, one for Nodes. kpc reads each as its
 * bytes arrive and applies their events in the order they complete, numbered across streams.
 *
 * The recorded stream (events.json) is split by kind into three FIFOs and written event by
 * event in its recorded order, each event after kpc has answered the one before: kpc's stdout
 * must then be that of the single recorded stream, step for step.
 */

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS, KPC, kpc, NODE_FLAGS, splitStream } from './replay.js';

const dir = mkdtempSync(join(tmpdir(), 'kpc-watch-streams-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function streamOf(event: string): 'services' | 'slices' | 'nodes' {
  if (/"kind":\s*"EndpointSlice"/.test(event)) return 'slices';
  if (/"kind":\s*"Node"/.test(event)) return 'nodes';
  return 'services'; // Services, and the stream's BOOKMARK, ERROR and malformed events
}

function isComplete(event: string): boolean {
  try {
    JSON.parse(event);
    return true;
  } catch {
    return false;
  }
}

/**
 * The stdout line that says event n is done (its end line, no change, or rejected). A rejected
 * event must be waited for too: the next event may come on another stream, and kpc numbers
 * events in the order it reads them.
 */
const answered = (stdout: string, n: number) => new RegExp(`^# kpc watch: (end of event ${n}|event ${n} rejected|event ${n} .*: no change)$`, 'm').test(stdout);

describe('kpc watch --events, several streams', () => {
  it('three FIFOs (Services, EndpointSlices, Nodes), written in the recorded order: the single stream\'s steps', { timeout: 120_000 }, async () => {
    const single = kpc(['watch', ...NODE_FLAGS, '--events', EVENTS]);
    expect(single.code).toBe(2);
    const events = splitStream(readFileSync(EVENTS, 'utf8'));
    const fifos = { services: join(dir, 'services'), slices: join(dir, 'slices'), nodes: join(dir, 'nodes') };
    for (const f of Object.values(fifos)) expect(spawnSync('mkfifo', [f]).status).toBe(0);

    const child = spawn(process.execPath, [KPC, 'watch', ...NODE_FLAGS, '--events', fifos.services, '--events', fifos.slices, '--events', fifos.nodes], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const writers: Record<string, FileHandle> = {};
    for (const [k, f] of Object.entries(fifos)) writers[k] = await open(f, 'w');

    const until = async (ok: () => boolean) => {
      for (const start = Date.now(); !ok(); ) {
        if (Date.now() - start > 20_000) throw new Error(`kpc did not answer; stdout so far:\n${stdout}\nstderr:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await until(() => /^# kpc watch: end of event 0$/m.test(stdout));
    for (const [i, event] of events.entries()) {
      await writers[streamOf(event)]!.write(`${event}\n`);
      // An event kpc answers on its own is awaited; a cut one is answered when the next comes,
      // a BOOKMARK never (its stream's next event comes after it on the same stream anyway).
      if (isComplete(event) && answered(single.stdout, i + 1)) await until(() => answered(stdout, i + 1));
    }
    for (const w of Object.values(writers)) await w.close();
    expect(await exited).toBe(2);
    expect(stdout).toBe(single.stdout);
    // Problems are placed in the stream they came from.
    expect(stderr).toMatch(new RegExp(`${fifos.services}:\\d+:\\d+: `));
  });

  it('regular files: each read to its end, their events numbered across them', () => {
    const events = splitStream(readFileSync(EVENTS, 'utf8')).filter(isComplete);
    const nodes = join(dir, 'nodes.json');
    const rest = join(dir, 'rest.json');
    writeFileSync(nodes, events.filter((e) => streamOf(e) === 'nodes').join('\n'));
    writeFileSync(rest, events.filter((e) => streamOf(e) !== 'nodes').join('\n'));
    const both = kpc(['watch', ...NODE_FLAGS, '--events', nodes, '--events', rest]);
    const one = join(dir, 'one.json');
    // Files are read a buffer at a time in turn: the small Node file is read whole first.
    writeFileSync(one, [...events.filter((e) => streamOf(e) === 'nodes'), ...events.filter((e) => streamOf(e) !== 'nodes')].join('\n'));
    const single = kpc(['watch', ...NODE_FLAGS, '--events', one]);
    expect(both.code, both.stderr).toBe(single.code);
    expect(both.stdout).toBe(single.stdout);
  });

  it('standard input at most once', () => {
    const r = kpc(['watch', ...NODE_FLAGS, '--events', '-', '--events', '-']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('standard input ("-") can be read only once, but --events and --events both name it');
  });
});

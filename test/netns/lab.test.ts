/**
 * Smoke tests of the netns lab itself: two namespaces joined by a veth pair can ping and talk
 * HTTP to each other (addresses 10.250.0.0/24 exist only inside them), namespaces are deleted even
 * when the test body throws, commands time out, and a sweep removes a leftover namespace whose
 * creating process is dead.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, expect, it } from 'vitest';
import {
  addVethPair,
  describeLab,
  exec,
  listLabNetns,
  listNetns,
  nsExec,
  nsRun,
  nsSpawn,
  sweepStaleNetns,
  withNetns,
  withNetnsGroup,
} from './lab.js';

const A_ADDR = '10.250.0.1';
const B_ADDR = '10.250.0.2';
const PORT = 8080;

/** A tiny HTTP server for namespace B: answers "hello from b", exits by itself after 15 s. */
const SERVER_JS = `
const http = require('node:http');
const s = http.createServer((req, res) => { res.end('hello from b\\n'); });
s.listen(${PORT}, '${B_ADDR}', () => console.log('listening'));
setTimeout(() => process.exit(0), 15000);
`;

describeLab('netns lab', { commands: ['ping', 'curl', 'nc'] }, () => {
  afterAll(async () => {
    // Nothing of this process may be left behind.
    const mine = (await listLabNetns()).filter((n) => n.includes(`-${process.pid}-`));
    expect(mine).toEqual([]);
  });

  it('joins two namespaces with a veth pair; ping, nc and curl cross it', { timeout: 20_000 }, async () => {
    const names = await withNetnsGroup('smoke', 2, async ([a, b]) => {
      await addVethPair(
        { ns: a!, ifname: 'kpc-a', address: `${A_ADDR}/24` },
        { ns: b!, ifname: 'kpc-b', address: `${B_ADDR}/24` },
      );
      const ping = await nsRun(a!, ['ping', '-n', '-c', '2', '-i', '0.2', '-W', '2', B_ADDR], { timeoutMs: 5_000 });
      expect(ping.stdout).toMatch(/2 packets transmitted, 2 received/);

      const server = nsSpawn(b!, [process.execPath, '-e', SERVER_JS]);
      await server.waitForOutput(/listening/, 5_000);
      const nc = await nsExec(a!, ['nc', '-z', '-w', '2', B_ADDR, String(PORT)], { timeoutMs: 5_000 });
      expect(nc.code).toBe(0);
      const curl = await nsRun(a!, ['curl', '-sS', '--max-time', '3', `http://${B_ADDR}:${PORT}/`], { timeoutMs: 5_000 });
      expect(curl.stdout).toBe('hello from b\n');

      // The addresses exist only inside the namespaces, and B is unreachable from a namespace
      // without the link.
      const lonely = await withNetns('smoke', (c) =>
        nsExec(c, ['ping', '-n', '-c', '1', '-W', '1', B_ADDR], { timeoutMs: 3_000 }),
      );
      expect(lonely.code).not.toBe(0);
      return [a!, b!];
      // server is still running here: withNetnsGroup must kill it and delete both namespaces.
    });
    const after = await listNetns();
    for (const n of names) expect(after).not.toContain(n);
  });

  it('deletes the namespace, and kills what runs inside, even when the body throws', { timeout: 20_000 }, async () => {
    let seen = '';
    let pid = 0;
    let exited: Promise<unknown> = Promise.resolve();
    await expect(
      withNetns('throw', async (ns) => {
        seen = ns;
        const sleeper = nsSpawn(ns, ['sleep', '30']);
        pid = sleeper.child.pid ?? 0;
        exited = once(sleeper.child, 'exit');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(seen).toMatch(new RegExp(`^kpc-throw-${process.pid}-\\d+$`));
    expect(await listNetns()).not.toContain(seen);
    expect(pid).toBeGreaterThan(0);
    // It was killed (not left to run 30 s): its exit is reported promptly and it is gone.
    await exited;
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('times out a command without a shell', async () => {
    const t0 = Date.now();
    const r = await withNetns('tmo', (ns) => nsExec(ns, ['sleep', '10'], { timeoutMs: 200 }));
    expect(r.timedOut).toBe(true);
    expect(r.code).toBeNull();
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('passes stdin and returns exit code and output', { timeout: 20_000 }, async () => {
    const r = await withNetns('stdin', (ns) => nsExec(ns, ['cat'], { input: 'abc\n' }));
    expect(r).toMatchObject({ code: 0, stdout: 'abc\n', timedOut: false });
  });

  it('sweeps a leftover namespace whose creating process is dead, and only that', { timeout: 20_000 }, async () => {
    // The pid of a process that has already exited stands for a worker killed without cleanup.
    const dead = spawnSync('true').pid;
    const leftover = `kpc-sweep-${dead}-0`;
    const add = await exec(['ip', 'netns', 'add', leftover]);
    expect(add.code, add.stderr).toBe(0);
    try {
      await withNetns('alive', async (mine) => {
        const removed = await sweepStaleNetns();
        expect(removed).toContain(leftover);
        expect(removed).not.toContain(mine);
        const now = await listNetns();
        expect(now).not.toContain(leftover);
        expect(now).toContain(mine);
      });
    } finally {
      await exec(['ip', 'netns', 'delete', leftover]); // in case the assertion failed
    }
  });
});

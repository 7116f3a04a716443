#!/usr/bin/env node
/**
 * agent.mjs — the one long-lived process that runs in each lab namespace (no dependencies).
 *
 * Server side: with `--tcp PORTS` / `--udp PORTS` (comma-separated) it listens on every address
 * of its namespace (`::`, dual-stack) and answers each TCP connection and each UDP datagram with
 * one JSON line: {"pod": NAME, "seen": SOURCE-ADDRESS-IT-SAW, "dst": "LOCAL-ADDRESS:PORT"} (for UDP
 * the local address is "*").
 *
 * Client side: it reads JSON commands on stdin, one per line, and answers each on stdout with
 * one JSON line carrying the same id:
 *   {"id": 1, "op": "probe", "proto": "tcp"|"udp", "host": IP, "port": N,
 *    "count": N, "timeoutMs": N, "concurrency": N}
 *     -> {"id": 1, "results": [{"outcome": "ok", "pod", "seen", "dst", "ms"}
 *                              | {"outcome": "refused"|"timeout"|"unreachable"|"reset"|"error", "detail", "ms"}]}
 *   {"id": 2, "op": "ping"} -> {"id": 2, "pong": true}
 * Every probe is a new connection (TCP) or a new socket (UDP), i.e. a new conntrack entry, so
 * each one is balanced afresh by the rules under test. Counts and timeouts are capped.
 *
 * It prints {"ready": true, ...} once listening, exits when stdin closes (its test went away)
 * and, as a last resort, after --ttl seconds (default 900).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';

const MAX_COUNT = 200;
const MAX_TIMEOUT_MS = 10_000;
const MAX_CONCURRENCY = 50;

function parseArgs(argv) {
  const opts = { name: 'agent', tcp: [], udp: [], ttl: 900 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === '--name') opts.name = value;
    else if (flag === '--tcp' || flag === '--udp') {
      opts[flag.slice(2)] = value.split(',').filter(Boolean).map((p) => {
        const n = Number(p);
        if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`bad port ${p}`);
        return n;
      });
    } else if (flag === '--ttl') opts.ttl = Number(value);
    else throw new Error(`unknown flag ${flag}`);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

/** "::ffff:10.0.0.1" (a v4 peer on a dual-stack socket) -> "10.0.0.1". */
function plain(address) {
  return typeof address === 'string' && address.startsWith('::ffff:') && address.includes('.')
    ? address.slice(7)
    : address;
}

function answer(seen, localAddress, localPort) {
  const dst = plain(localAddress);
  const where = dst.includes(':') ? `[${dst}]:${localPort}` : `${dst}:${localPort}`;
  return `${JSON.stringify({ pod: opts.name, seen: plain(seen), dst: where })}\n`;
}

// -------------------------------------------------------------------------------------------
// Servers
// -------------------------------------------------------------------------------------------

function listenTcp(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      sock.on('error', () => {});
      sock.end(answer(sock.remoteAddress, sock.localAddress, sock.localPort));
    });
    const tryListen = (host, next) => {
      server.once('error', (err) => (next && err.code === 'EAFNOSUPPORT' ? next() : reject(err)));
      server.listen({ host, port, ipv6Only: false }, () => resolve(server));
    };
    tryListen('::', () => tryListen('0.0.0.0'));
  });
}

function bindUdp(port) {
  return new Promise((resolve, reject) => {
    const make = (type, next) => {
      const sock = dgram.createSocket({ type, ipv6Only: false });
      sock.once('error', (err) => {
        sock.close();
        if (next && err.code === 'EAFNOSUPPORT') next();
        else reject(err);
      });
      sock.on('message', (msg, rinfo) => {
        // The datagram's own destination address is not known without IP_PKTINFO: '*'.
        sock.send(answer(rinfo.address, '*', port), rinfo.port, rinfo.address, () => {});
      });
      sock.bind({ port, address: type === 'udp6' ? '::' : '0.0.0.0' }, () => {
        sock.removeAllListeners('error');
        sock.on('error', () => {});
        resolve(sock);
      });
    };
    make('udp6', () => make('udp4'));
  });
}

// -------------------------------------------------------------------------------------------
// Probes
// -------------------------------------------------------------------------------------------

const OUTCOME_BY_CODE = {
  ECONNREFUSED: 'refused',
  ETIMEDOUT: 'timeout',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
};

function failure(err) {
  return { outcome: OUTCOME_BY_CODE[err.code] ?? 'error', detail: err.code ?? String(err.message ?? err) };
}

function parseAnswer(text) {
  try {
    const a = JSON.parse(text.trim());
    if (a && typeof a.pod === 'string') return { outcome: 'ok', pod: a.pod, seen: a.seen, dst: a.dst };
  } catch {
    // fall through
  }
  return { outcome: 'error', detail: `unexpected answer ${JSON.stringify(text.slice(0, 200))}` };
}

function tcpOnce(host, port, timeoutMs) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let data = '';
    let connected = false;
    let done = false;
    const sock = net.connect({ host, port });
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...r, ms: Math.round(performance.now() - t0) });
    };
    const timer = setTimeout(
      () => finish({ outcome: 'timeout', detail: connected ? 'connected, no answer' : 'no connection' }),
      timeoutMs,
    );
    sock.setEncoding('utf8');
    sock.on('connect', () => (connected = true));
    sock.on('data', (d) => (data += d));
    sock.on('end', () => finish(parseAnswer(data)));
    sock.on('error', (err) => finish(failure(err)));
  });
}

function udpOnce(host, port, timeoutMs) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let done = false;
    const sock = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        sock.close();
      } catch {
        // already closed
      }
      resolve({ ...r, ms: Math.round(performance.now() - t0) });
    };
    const timer = setTimeout(() => finish({ outcome: 'timeout', detail: 'no datagram back' }), timeoutMs);
    sock.on('error', (err) => finish(failure(err)));
    sock.on('message', (msg) => finish(parseAnswer(msg.toString('utf8'))));
    // A connected socket reports an ICMP port unreachable (REJECT) as ECONNREFUSED.
    sock.connect(port, host, (err) => {
      if (err) return finish(failure(err));
      sock.send('probe\n', (e) => e && finish(failure(e)));
    });
  });
}

async function probe(cmd) {
  const proto = cmd.proto === 'udp' ? 'udp' : 'tcp';
  if (net.isIP(cmd.host) === 0) throw new Error(`host must be an IP literal, got ${cmd.host}`);
  const port = Number(cmd.port);
  const count = Math.min(Math.max(1, Number(cmd.count ?? 1)), MAX_COUNT);
  const timeoutMs = Math.min(Math.max(50, Number(cmd.timeoutMs ?? 1000)), MAX_TIMEOUT_MS);
  const concurrency = Math.min(Math.max(1, Number(cmd.concurrency ?? 1)), MAX_CONCURRENCY, count);
  const once = proto === 'udp' ? udpOnce : tcpOnce;
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await once(cmd.host, port, timeoutMs);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

// -------------------------------------------------------------------------------------------
// Main
// -------------------------------------------------------------------------------------------

function send(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function handle(line) {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    send({ id: null, error: `bad command ${JSON.stringify(line.slice(0, 200))}` });
    return;
  }
  try {
    if (cmd.op === 'probe') send({ id: cmd.id, results: await probe(cmd) });
    else if (cmd.op === 'ping') send({ id: cmd.id, pong: true });
    else send({ id: cmd.id, error: `unknown op ${cmd.op}` });
  } catch (err) {
    send({ id: cmd.id, error: String(err?.message ?? err) });
  }
}

setTimeout(() => process.exit(0), opts.ttl * 1000).unref();

try {
  await Promise.all([...opts.tcp.map(listenTcp), ...opts.udp.map(bindUdp)]);
} catch (err) {
  process.stderr.write(`agent ${opts.name}: cannot listen: ${err.message}\n`);
  process.exit(1);
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => void handle(line));
rl.on('close', () => process.exit(0));
send({ ready: true, name: opts.name, tcp: opts.tcp, udp: opts.udp, pid: process.pid });

/**
 * A trace through rules read lazily (what `kpc trace --rules` does: the index of
 * lang/iptables/indexed-read.ts, rules parsed one at a time and passed by when their `-d`
 * excludes the packet) says what a trace through the same rules read eagerly says, for every
 * iptables text of the fixtures and packets to each address and port they name, a node address
 * and an address none names.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readRules } from '../../src/lang/iptables/read.js';
import { traceRuleSet } from '../../src/trace/tracer.js';
import type { PacketSpec } from '../../src/trace/result.js';
import { iptablesTexts } from '../helpers/fixtures.js';

/** Each IPv4 `-d` of the text with the `--dport` after it (80 when none), and two the text does not name. */
function packetsOf(text: string): PacketSpec[] {
  const seen = new Set<string>();
  const packets: PacketSpec[] = [];
  const add = (destination: string, port: number, protocol: 'tcp' | 'udp') => {
    const key = `${destination}:${port}/${protocol}`;
    if (seen.has(key) || packets.length >= 40) return;
    seen.add(key);
    packets.push({ source: '10.0.3.4', destination, port, protocol });
  };
  for (const m of text.matchAll(/-p (tcp|udp) -d (\d+\.\d+\.\d+\.\d+)(?:\/32)? --dport (\d+)/g)) add(m[2]!, Number(m[3]), m[1] as 'tcp' | 'udp');
  for (const m of text.matchAll(/ -d (\d+\.\d+\.\d+\.\d+)(?:\/32)? /g)) add(m[1]!, 80, 'tcp');
  add('192.168.0.2', 30080, 'tcp');
  add('10.99.99.99', 80, 'tcp');
  return packets;
}

describe('tracing through lazily read rules', () => {
  it('gives the eager reading\'s result for the fixtures\' rules', () => {
    const node = { ips: ['192.168.0.2'] };
    let traced = 0;
    for (const f of iptablesTexts()) {
      const text = readFileSync(f, 'utf8');
      if (text.startsWith('#!')) continue;
      let eager;
      try {
        eager = readRules(text);
      } catch {
        continue;
      }
      for (const packet of packetsOf(text)) {
        const expected = traceRuleSet(eager, packet, node);
        const lazy = traceRuleSet(readRules(text, { lazy: true }), packet, node);
        expect(lazy, `${f}: ${packet.destination}:${packet.port}/${packet.protocol}`).toEqual(expected);
        traced++;
      }
    }
    expect(traced).toBeGreaterThan(400);
  });
});

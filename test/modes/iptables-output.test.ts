/**
 * iptables mode's compile output holds the ruleset it prints, not the IR (src/modes/iptables.ts
 * emit): kpc compile lets go of the IR before the text is written, so that at 100,000 Services
 * the collector frees it instead of marking it again and again while 400 MB are printed. The
 * IR is watched with a WeakRef across a full collection (gc exposed through the V8 flag).
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { compileInput, type CommonFlags } from '../../src/cli/pipeline.js';
import { backendFor } from '../../src/modes/index.js';
import type { Emitted } from '../../src/modes/backend.js';
import { outputText } from '../../src/watch/engine.js';
import { parseCaseFlags } from '../ipvs/helpers/compile-case.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The output of the quickstart example, and a WeakRef to the IR it was made from (dropped here). */
function emitted(): { output: Emitted; ir: WeakRef<object>; before: string } {
  const flags = parseCaseFlags(['-f', 'fixtures/examples/quickstart/', '--cluster-cidr', '10.244.0.0/16']);
  const { ir } = compileInput(flags as unknown as CommonFlags, () => new Uint8Array());
  const output = backendFor('iptables').emit(ir, { standalone: false });
  expect(output.output.form).toBe('text');
  return { output, ir: new WeakRef(ir), before: outputText(output) };
}

it('prints the same text after the IR it was made from is collected', async () => {
  const { output, ir, before } = emitted();
  expect(before).toMatch(/^\*filter\n[\s\S]*-A KUBE-SERVICES [\s\S]*COMMIT\n$/);
  // Let the stack of emitted() go before collecting.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  expect(ir.deref()).toBeUndefined();
  expect(outputText(output)).toBe(before);
});

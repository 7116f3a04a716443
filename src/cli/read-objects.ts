/**
 * The input of the commands that need the objects but no proxy settings (`kpc dns`, `kpc
 * endpointslices`): read, reported, and partitioned by kind with the EndpointSlices derived
 * from Pods, as compile does it.
 */

import type { Io } from './io.js';
import { derivationNotes, derivationWarnings } from './input-checks.js';
import { loadInput, partitionObjects, releaseOf, type CommonFlags, type Loaded, type Partitioned } from './pipeline.js';
import { printDiagnostics, reportNotes, reportWarnings } from './report.js';

export function readObjects(flags: CommonFlags, io: Io): { loaded: Loaded; input: Partitioned } {
  const loaded = loadInput(flags, io.readStdin);
  printDiagnostics(io, loaded.warnings);
  reportNotes(io, loaded.notes);
  const input = partitionObjects(loaded.objects, { endpointsFrom: flags.endpointsFrom ?? 'auto', release: releaseOf(flags) });
  reportWarnings(io, derivationWarnings(input.derivation));
  reportNotes(io, derivationNotes(input.derivation));
  return { loaded, input };
}

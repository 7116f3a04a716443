/**
 * pkg/apis/discovery/v1/defaults.go: port names default to "" and protocols to TCP. Conditions
 * are not defaulted; consumers read a nil ready/serving as true and a nil terminating as false.
 */

import type { CoreEndpointSlice } from '../model/endpoint-slice.js';

export function setEndpointSliceDefaults(slice: CoreEndpointSlice): void {
  for (const p of slice.ports) {
    if (p.name === undefined) p.name = '';
    if (p.protocol === undefined) p.protocol = 'TCP';
  }
}
